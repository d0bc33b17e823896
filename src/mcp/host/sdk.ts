import type * as Sdk from '../../entries/mcp-entry';

export type McpSdk = typeof Sdk;
let sdk: McpSdk | undefined;

/** The MCP SDK bundle (dist/mcp.js beside extension.js), required when the first server starts. */
export function loadMcpSdk(): McpSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sdk ??= require('./mcp.js') as McpSdk;
  return sdk;
}
