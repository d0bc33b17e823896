export { GatewayClient, type GatewayClientOptions } from './client';
export * from './core/errors';
export { normalizeBaseUrl, parseRetryAfter, type RetryInfo } from './core/transport';
export { SSEDecoder } from './core/sse';
export * from './chat';
export * from './messages';
export * from './models';
