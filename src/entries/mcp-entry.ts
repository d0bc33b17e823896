// The MCP SDK as its own bundle (dist/mcp.js), loaded the first time a server starts: the
// extension's activation never pays for it. Only the client side is bundled.
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
// The requests a server sends the client: sampling (the person's model) and elicitation (a form).
export { CreateMessageRequestSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
export { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
export { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
