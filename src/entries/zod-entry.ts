// zod as its own bundle (dist/zod.js): the classic API and zod/mini on one core, shared by the
// gateway client (dist/gateway.js) and the MCP SDK (dist/mcp.js), which each held a copy. The
// shell keeps zod/mini in its own bundle: activation does not load this one.
export * from 'zod';
export { default } from 'zod';
export * as mini from 'zod/mini';
