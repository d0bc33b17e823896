import * as vscode from 'vscode';
import type { ServerConfig, ServerSpec } from '../core/config';
import type { ResultPart, ServerTool } from '../core/tools';
import type { SamplingParams } from '../core/sampling';
import type { ElicitParams } from './elicitation';
import type { McpOAuth } from './oauth';
import { loadMcpSdk } from './sdk';
import { counted } from '../../shell/listeners';

export type ServerState =
  | { kind: 'stopped' }
  | { kind: 'needs-confirmation' }
  | { kind: 'untrusted' }
  | { kind: 'starting' }
  /** A remote server that asks for an OAuth sign-in the person has not given yet. */
  | { kind: 'needs-sign-in' }
  | { kind: 'running'; tools: ServerTool[]; prompts: ServerPrompt[]; resources: ServerResource[]; templates: ServerResourceTemplate[] }
  | { kind: 'failed'; message: string; stderr: string; retryAt?: number };

export interface ServerPrompt {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

export interface ServerResource {
  uri: string;
  name: string;
  mimeType?: string;
}

/** A resource made from arguments (`demo://resource/{id}`): the person gives them when attaching it. */
export interface ServerResourceTemplate {
  uriTemplate: string;
  name: string;
  description?: string;
  mimeType?: string;
}

type Client = InstanceType<ReturnType<typeof loadMcpSdk>['Client']>;

/** What a server may ask of the client: the person's model (sampling) and the person (elicitation). */
export interface ServerRequests {
  sample(server: McpServer, params: SamplingParams, signal: AbortSignal): Promise<object>;
  elicit(server: McpServer, params: ElicitParams, signal: AbortSignal): Promise<object>;
  /** The fetch of the HTTP transports: the gateway client's proxy and certificates. */
  fetch(): (url: string | URL, init?: RequestInit) => Promise<Response>;
  /** The OAuth client of a remote server, its redirect URI chosen. */
  oauth(server: McpServer, url: string): Promise<McpOAuth>;
  /** The server asks for a sign-in: the code from the browser step, or undefined when the person does not sign in now. */
  signIn(server: McpServer, oauth: McpOAuth, asked: boolean): Promise<string | undefined>;
}

const STDERR_TAIL = 4000;
/** Waits between restarts of a server that died: 1 s, 2 s, 4 s … at most 30 s; after 5 failures in a row it stays down. */
const BACKOFF_MS = [1000, 2000, 4000, 8000, 16000];

/**
 * One MCP server: its connection (stdio, streamable HTTP or SSE, through the official SDK), its
 * tools, and its state. A server that dies on its own is restarted with back-off; one stopped by
 * the person stays stopped.
 */
export class McpServer implements vscode.Disposable {
  state: ServerState = { kind: 'stopped' };
  private client: Client | undefined;
  private stderr = '';
  private failures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly changed = new vscode.EventEmitter<{ server: McpServer; lostTools?: string[] }>();
  readonly onDidChange = counted('mcpServer.onDidChange', this.changed.event);

  constructor(
    readonly config: ServerConfig,
    /** The spec with its variables resolved (asked for when the server starts). */
    private readonly resolve: () => Promise<ServerSpec>,
    private readonly log: vscode.LogOutputChannel,
    /** The workspace folder a stdio server starts in when its config names none. */
    private readonly defaultCwd: string | undefined,
    private readonly requests: ServerRequests,
  ) {}

  get name(): string {
    return this.config.name;
  }

  setState(state: ServerState, lostTools?: string[]): void {
    this.state = state;
    this.changed.fire({ server: this, ...(lostTools ? { lostTools } : {}) });
  }

  /** `signIn`: the person asked to sign in (the browser opens without another question). */
  async start(o: { signIn?: boolean } = {}): Promise<void> {
    if (this.state.kind === 'running' || this.state.kind === 'starting') return;
    clearTimeout(this.restartTimer);
    this.stopping = false;
    this.stderr = '';
    this.setState({ kind: 'starting' });
    try {
      const spec = await this.resolve();
      const oauth = spec.kind === 'stdio' ? undefined : await this.requests.oauth(this, spec.url);
      let connected = await this.connect(spec, oauth);
      if (!connected) {
        // The server wants a sign-in (OAuth): the person says yes, the browser step brings the code back.
        const code = oauth && (await this.requests.signIn(this, oauth, o.signIn === true));
        if (!code) {
          this.log.info(`[${this.name}] waits for you to sign in (Model Gateway: MCP Servers → Sign In)`);
          this.setState({ kind: 'needs-sign-in' });
          return;
        }
        connected = await this.connect(spec, oauth, code);
        if (!connected) throw new Error('the server still refused after the sign-in');
      }
      const client = connected;
      this.client = client;
      const tools = await this.listTools(client);
      // Prompts (offered as / commands) and resources (attachable like files), where the server has them.
      const caps = client.getServerCapabilities();
      const prompts = caps?.prompts
        ? ((await client.listPrompts(undefined, { timeout: 30_000 }).catch(() => ({ prompts: [] }))).prompts as ServerPrompt[])
        : [];
      const resources = caps?.resources
        ? ((await client.listResources(undefined, { timeout: 30_000 }).catch(() => ({ resources: [] }))).resources as ServerResource[])
        : [];
      const templates = caps?.resources
        ? ((await client.listResourceTemplates(undefined, { timeout: 30_000 }).catch(() => ({ resourceTemplates: [] })))
            .resourceTemplates as ServerResourceTemplate[])
        : [];
      this.failures = 0;
      this.log.info(
        `[${this.name}] running: ${tools.length} tool${tools.length === 1 ? '' : 's'}, ${prompts.length} prompt${prompts.length === 1 ? '' : 's'}, ${resources.length} resource${resources.length === 1 ? '' : 's'}`,
      );
      this.setState({ kind: 'running', tools, prompts, resources, templates });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`[${this.name}] could not start: ${message}`);
      await this.client?.close().catch(() => undefined);
      this.client = undefined;
      this.failed(message);
    }
  }

  /**
   * A connected client, or undefined when the server asks for a sign-in first. With `code` (from the
   * browser step), the tokens are fetched first.
   */
  private async connect(spec: ServerSpec, oauth: McpOAuth | undefined, code?: string): Promise<Client | undefined> {
    const sdk = loadMcpSdk();
    const client: Client = new sdk.Client(
      { name: 'model-gateway', version: '0.1.0' },
      {
        // Sampling asks before it spends; elicitation asks the person (forms, and pages opened on a yes).
        capabilities: { sampling: {}, elicitation: { form: {}, url: {} } },
        // tools/list_changed: the new list replaces the old one.
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              const now = this.state;
              if (error || !tools || this.client !== client || now.kind !== 'running') return;
              this.setState({ ...now, tools });
            },
          },
        },
      },
    );
    client.setRequestHandler(sdk.CreateMessageRequestSchema, (req, extra) => this.requests.sample(this, req.params as SamplingParams, extra.signal) as never);
    client.setRequestHandler(sdk.ElicitRequestSchema, (req, extra) => this.requests.elicit(this, req.params as ElicitParams, extra.signal) as never);
    const transport = this.transport(spec, oauth);
    if (code && 'finishAuth' in transport) await transport.finishAuth(code);
    client.onclose = () => this.closed(client);
    client.onerror = (err) => this.log.warn(`[${this.name}] ${err.message}`);
    try {
      await client.connect(transport, { timeout: 30_000 });
    } catch (err) {
      if (oauth && err instanceof sdk.UnauthorizedError) {
        await client.close().catch(() => undefined);
        return undefined;
      }
      throw err;
    }
    return client;
  }

  private transport(spec: ServerSpec, oauth: McpOAuth | undefined) {
    const sdk = loadMcpSdk();
    if (spec.kind !== 'stdio') {
      const init = { requestInit: { headers: spec.headers }, fetch: this.requests.fetch(), ...(oauth ? { authProvider: oauth } : {}) };
      return spec.kind === 'http' ? new sdk.StreamableHTTPClientTransport(new URL(spec.url), init) : new sdk.SSEClientTransport(new URL(spec.url), init);
    }
    const t = new sdk.StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: { ...sdk.getDefaultEnvironment(), ...spec.env },
      cwd: spec.cwd ?? this.defaultCwd,
      stderr: 'pipe',
    });
    t.stderr?.on('data', (d: Buffer) => {
      const text = d.toString('utf8');
      this.stderr = (this.stderr + text).slice(-STDERR_TAIL);
      for (const line of text.split('\n').filter((l) => l.trim())) this.log.info(`[${this.name}] ${line}`);
    });
    return t;
  }

  private async listTools(client: Client): Promise<ServerTool[]> {
    const tools: ServerTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: 30_000 });
      tools.push(...(page.tools as ServerTool[]));
      cursor = page.nextCursor;
    } while (cursor && tools.length < 1000);
    return tools;
  }

  /** The connection ended: by Stop (stays stopped), or on its own (restarted after a wait). */
  private closed(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.stopping) return;
    const lost = this.state.kind === 'running' ? this.state.tools.map((t) => t.name) : [];
    this.log.warn(`[${this.name}] stopped unexpectedly${this.stderr ? `; its last output:\n${this.stderr.trim().split('\n').slice(-5).join('\n')}` : ''}`);
    this.failed('the server stopped unexpectedly', lost);
  }

  private failed(message: string, lostTools?: string[]): void {
    const wait = BACKOFF_MS[this.failures];
    this.failures++;
    const retryAt = wait !== undefined ? Date.now() + wait : undefined;
    this.setState({ kind: 'failed', message, stderr: this.stderr.trim(), ...(retryAt ? { retryAt } : {}) }, lostTools);
    if (wait === undefined) {
      this.log.error(`[${this.name}] failed ${this.failures} times in a row: not restarted (Model Gateway: MCP Servers → Restart)`);
      return;
    }
    this.log.info(`[${this.name}] restarting in ${wait / 1000} s`);
    this.restartTimer = setTimeout(() => void this.start(), wait);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    this.failures = 0;
    this.setState({ kind: 'stopped' });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** The server's process id (stdio), for the tests that kill it. */
  get pid(): number | undefined {
    return (this.client?.transport as { pid?: number | null } | undefined)?.pid ?? undefined;
  }

  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<{ content: ResultPart[]; isError: boolean; structured?: unknown }> {
    const client = this.client;
    if (!client || this.state.kind !== 'running') throw new Error(`the MCP server "${this.name}" is not running (${this.state.kind})`);
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: 600_000, resetTimeoutOnProgress: true });
    return {
      content: (r.content ?? []) as ResultPart[],
      isError: r.isError === true,
      ...(r.structuredContent !== undefined ? { structured: r.structuredContent } : {}),
    };
  }

  /** A prompt's messages, as text (the user's words the prompt makes). */
  async prompt(name: string, args: Record<string, string>): Promise<string> {
    if (!this.client || this.state.kind !== 'running') throw new Error(`the MCP server "${this.name}" is not running`);
    const r = await this.client.getPrompt({ name, arguments: args }, { timeout: 30_000 });
    return r.messages
      .map((m) => {
        const c = m.content as { type: string; text?: string; resource?: { text?: string; uri?: string } };
        return c.type === 'text' ? (c.text ?? '') : c.type === 'resource' ? (c.resource?.text ?? `[resource ${c.resource?.uri ?? ''}]`) : `[${c.type}]`;
      })
      .join('\n\n');
  }

  /** A resource's text contents (binary ones are described). */
  async read(uri: string): Promise<string> {
    if (!this.client || this.state.kind !== 'running') throw new Error(`the MCP server "${this.name}" is not running`);
    const r = await this.client.readResource({ uri }, { timeout: 30_000 });
    return r.contents.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : `[binary ${c.mimeType ?? 'content'}, ${c.uri}]`)).join('\n');
  }

  dispose(): void {
    void this.stop();
    this.changed.dispose();
  }
}
