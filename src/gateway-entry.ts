// The gateway client as its own bundle (dist/gateway.js), loaded on first use so that
// activation does not pay for undici and the schemas.
export * from './gateway';
