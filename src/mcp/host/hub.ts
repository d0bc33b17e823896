import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import type { ActionApprover } from '../../runtime/core/approval';
import type { ToolCategory } from '../../runtime/core/autoApproval';
import type { ToolSource } from '../../runtime/host/toolbox';
import { approveToolCall, objectArgs } from '../../runtime/host/toolCalls';
import { userValue } from '../../shell/config';
import { loadGateway, type CredentialSource, type PricedFeature } from '../../shell/services';
import type { NetworkFetch } from '../../gateway';
import { parseJsonc } from '../../shell/settingsFiles';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import { commandLineOf, inputsUsed, parseEnvFile, parseServers, resolveVariables, type InputSpec, type ServerConfig, type ServerSpec } from '../core/config';
import { definitionOf, qualifiedName, resultImages, resultText, templateArguments } from '../core/tools';
import { McpElicitation } from './elicitation';
import { McpOAuth, type OpenBrowser } from './oauth';
import { McpSampling, type ChatTurnLink, type SamplingServer } from './sampling';
import { loadMcpSdk } from './sdk';
import { McpServer, type ServerRequests } from './server';
import { counted } from '../../shell/listeners';

const CONFIRMED_KEY = 'modelGateway.mcp.confirmed';
/** Workspace servers the person declined to start (by their command line): no longer said to wait. */
const DECLINED_KEY = 'modelGateway.mcp.declined';
/** Workspace servers already announced (by their command line): the notification comes once. */
const NOTIFIED_KEY = 'modelGateway.mcp.notified';

interface Entry {
  server: McpServer;
  /** The workspace folder whose .vscode/mcp.json defined it (workspace servers). */
  folder?: vscode.WorkspaceFolder;
  inputs: InputSpec[];
}

/**
 * The MCP servers: the user's (setting `modelGateway.mcp.servers`) and the workspace's
 * (`.vscode/mcp.json` of each folder). A workspace server is code from the repository: it starts
 * only in a trusted workspace, and only once the person has confirmed its exact command line (the
 * confirmation is kept per workspace, and asked again when the line changes). Their tools are
 * offered to the chat as `server__tool`; each call asks first unless the server or tool is in
 * `modelGateway.agent.autoApprove.mcp`.
 */
export class McpHub implements ToolSource, vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private readonly tools = new Map<string, { entry: Entry; tool: string; definition: ToolDefinition }>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('mcpHub.onDidChange', this.changed.event);
  private readonly notices = new vscode.EventEmitter<string>();
  /** Said in the chat: a server stopped and its tools went away, or came back. */
  readonly onNotice = counted('mcpHub.onNotice', this.notices.event);
  readonly log = vscode.window.createOutputChannel('Model Gateway MCP', { log: true });
  private readonly disposables: vscode.Disposable[] = [this.changed, this.notices, this.log];
  /** Problems of the configurations, by where they were read. */
  problems: string[] = [];
  readonly sampling: McpSampling;
  private readonly elicitation: McpElicitation;
  /** Each server's tool calls running in a chat turn now: where its requests to the person are shown. */
  private readonly turns = new Map<string, ChatTurnLink[]>();
  private readonly requests: ServerRequests = {
    sample: (server, params, signal) => this.sampling.handle(this.samplingServer(server), params, this.turns.get(server.name)?.at(-1), signal),
    elicit: (server, params, signal) => this.elicitation.handle(server.name, params, signal),
    fetch: () => this.httpFetch(),
    oauth: async (server, url) => {
      const key = `${server.name}\u0000${url}`;
      let oauth = this.oauths.get(key);
      if (!oauth) this.oauths.set(key, (oauth = new McpOAuth(this.context.secrets, server.name, url)));
      await oauth.prepare();
      return oauth;
    },
    signIn: async (server, oauth, asked) => {
      if (asked) {
        this.log.info(`[${server.name}] signing in through the browser`);
        return oauth.browserStep(this.openBrowser);
      }
      // Never a browser the person did not ask for: a notification offers the sign-in (it does not hold the start-up).
      void this.services.prompts
        .notify(vscode.l10n.t('The MCP server "{0}" ({1}) asks you to sign in.', server.name, new URL(oauth.serverUrl).host), [vscode.l10n.t('Sign In')])
        .then((a) => a !== undefined && this.signIn(server.name));
      return undefined;
    },
  };
  private readonly oauths = new Map<string, McpOAuth>();
  /** How the browser step opens the authorization page: VS Code's `openExternal` (a test acts as the browser instead). */
  openBrowser: OpenBrowser = (url) => vscode.env.openExternal(vscode.Uri.parse(url));
  /** One fetch per network setting (proxy, certificates); a change makes a new one for the next connection. */
  private network: { signature: string; fetch: NetworkFetch } | undefined;

  constructor(
    private readonly services: PricedFeature & CredentialSource,
    private readonly context: vscode.ExtensionContext,
  ) {
    this.sampling = new McpSampling(services, context, this.log);
    this.elicitation = new McpElicitation(services, this.log);
    const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/mcp.json');
    this.disposables.push(
      watcher,
      watcher.onDidChange(() => void this.reload()),
      watcher.onDidCreate(() => void this.reload()),
      watcher.onDidDelete(() => void this.reload()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('modelGateway.mcp')) void this.reload();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.reload()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.reload()),
      // A new proxy or CA reaches the HTTP servers as it reaches the gateway: they connect again.
      services.onDidChangeConnection(() => this.networkChanged()),
    );
  }

  list(): McpServer[] {
    return [...this.entries.values()].map((e) => e.server);
  }

  get(name: string): McpServer | undefined {
    return this.entries.get(name)?.server;
  }

  /** Reads the configurations again: servers whose definition changed restart, removed ones stop, new ones start (if they may). */
  async reload(): Promise<void> {
    const wanted: { config: ServerConfig; inputs: InputSpec[]; folder?: vscode.WorkspaceFolder }[] = [];
    const problems: string[] = [];
    const c = vscode.workspace.getConfiguration('modelGateway.mcp');
    const user = parseServers({ servers: userValue(c, 'servers') ?? {}, inputs: userValue(c, 'inputs') ?? [] }, 'user');
    problems.push(...user.problems.map((p) => vscode.l10n.t('user settings: {0}', p)));
    for (const s of user.servers) wanted.push({ config: s, inputs: user.inputs });
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== 'file') continue;
      const file = join(folder.uri.fsPath, '.vscode', 'mcp.json');
      const text = await readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      const raw = parseJsonc(text);
      if (raw === undefined) {
        problems.push(`${folder.name}/.vscode/mcp.json: not valid JSON`);
        continue;
      }
      const parsed = parseServers(raw, 'workspace');
      problems.push(...parsed.problems.map((p) => `${folder.name}/.vscode/mcp.json: ${p}`));
      for (const s of parsed.servers) {
        // A repository's server never takes the place of one of the person's own.
        if (wanted.some((w) => w.config.name === s.name))
          problems.push(`${folder.name}/.vscode/mcp.json: "${s.name}" is already defined; this one is left out`);
        else wanted.push({ config: s, inputs: parsed.inputs, folder });
      }
    }
    this.problems = problems;
    for (const p of problems) this.log.warn(p);
    for (const [name, e] of this.entries) {
      const still = wanted.find((w) => w.config.name === name);
      if (!still || JSON.stringify(still.config) !== JSON.stringify(e.server.config)) {
        e.server.dispose();
        this.entries.delete(name);
      }
    }
    for (const w of wanted) {
      if (this.entries.has(w.config.name)) continue;
      const entry: Entry = { inputs: w.inputs, ...(w.folder ? { folder: w.folder } : {}), server: undefined as unknown as McpServer };
      entry.server = new McpServer(
        w.config,
        () => this.resolveSpec(entry),
        this.log,
        w.folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
        this.requests,
      );
      this.disposables.push(entry.server.onDidChange((e) => this.serverChanged(entry, e.lostTools)));
      this.entries.set(w.config.name, entry);
      await this.startIfAllowed(entry);
    }
    this.rebuildTools();
    this.changed.fire();
    void this.announceWaiting().catch((err: unknown) =>
      this.log.error(`the waiting servers could not be announced: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /** Workspace servers waiting for the person to review their command line (not declined). */
  waitingServers(): string[] {
    const declined = this.context.workspaceState.get<Record<string, string>>(DECLINED_KEY, {});
    return this.list()
      .filter((s) => s.state.kind === 'needs-confirmation' && declined[s.name] !== this.fingerprint(s.config))
      .map((s) => s.name);
  }

  /** Says once (per command line) that servers wait; Review asks about each. */
  private async announceWaiting(): Promise<void> {
    const notified = this.context.workspaceState.get<Record<string, string>>(NOTIFIED_KEY, {});
    const fresh = this.waitingServers().filter((n) => notified[n] !== this.fingerprint(this.entries.get(n)!.server.config));
    if (fresh.length === 0) return;
    await this.context.workspaceState.update(NOTIFIED_KEY, {
      ...notified,
      ...Object.fromEntries(fresh.map((n) => [n, this.fingerprint(this.entries.get(n)!.server.config)])),
    });
    const one = fresh.length === 1;
    const answer = await this.services.prompts.notify(
      one
        ? vscode.l10n.t("This workspace's .vscode/mcp.json defines an MCP server ({0}) that starts only once you review its command line.", `"${fresh[0]}"`)
        : vscode.l10n.t(
            "This workspace's .vscode/mcp.json defines {0} MCP servers ({1}) that start only once you review their command line.",
            fresh.length,
            fresh.map((n) => `"${n}"`).join(', '),
          ),
      [vscode.l10n.t('Review')],
    );
    if (answer !== undefined) await this.reviewWaiting();
  }

  /** Asks about each waiting server in turn (its command line, Start or not). */
  async reviewWaiting(): Promise<void> {
    for (const name of this.waitingServers()) await this.startByPerson(name);
    this.changed.fire();
  }

  private async startIfAllowed(entry: Entry): Promise<void> {
    const { server } = entry;
    if (server.config.source === 'workspace') {
      if (!vscode.workspace.isTrusted) return server.setState({ kind: 'untrusted' });
      if (!this.isConfirmed(server.config)) {
        this.log.info(`[${server.name}] defined by the workspace; starts once you confirm its command line (Model Gateway: MCP Servers)`);
        return server.setState({ kind: 'needs-confirmation' });
      }
    }
    await server.start();
  }

  private networkChanged(): void {
    if (!this.network || this.network.signature === this.services.network().signature) return;
    for (const s of this.list()) {
      if (s.config.spec.kind !== 'stdio' && s.state.kind !== 'stopped' && s.state.kind !== 'needs-confirmation' && s.state.kind !== 'untrusted') {
        this.log.info(`[${s.name}] the proxy or certificate settings changed: connecting again`);
        void s.restart();
      }
    }
  }

  private httpFetch(): NetworkFetch['fetch'] {
    const choice = this.services.network();
    if (this.network?.signature !== choice.signature) {
      // The old one's open streams keep their connections; it is closed once they end.
      void this.network?.fetch.close();
      this.network = { signature: choice.signature, fetch: loadGateway().networkFetch(choice.options) };
    }
    return this.network.fetch.fetch;
  }

  /** Signs in to a remote server that asks for it (OAuth, the browser step), then connects. */
  async signIn(name: string): Promise<boolean> {
    const server = this.get(name);
    if (!server) return false;
    await server.stop();
    await server.start({ signIn: true });
    return server.state.kind === 'running';
  }

  /** Drops the OAuth clients held in memory: the next connection reads them from SecretStorage, as after a reload. */
  forgetLoadedSignIns(): void {
    this.oauths.clear();
  }

  /** Whether the person is signed in to a remote server (tokens held). */
  isSignedIn(name: string): boolean {
    return [...this.oauths.values()].some((o) => o.serverName === name && o.signedIn);
  }

  /** Forgets a server's tokens and client registration, and stops it (Sign Out). */
  async signOut(name: string): Promise<void> {
    for (const [key, o] of this.oauths) {
      if (o.serverName !== name) continue;
      await o.forget();
      this.oauths.delete(key);
    }
    await this.get(name)?.stop();
    this.log.info(`[${name}] signed out: its tokens and client registration are forgotten`);
  }

  /** A server as sampling knows it: an "always allow" holds for its exact command line. */
  samplingServer(server: McpServer): SamplingServer {
    return { name: server.name, source: server.config.source, fingerprint: this.fingerprint(server.config) };
  }

  private fingerprint(config: ServerConfig): string {
    return commandLineOf(config.spec);
  }

  private isConfirmed(config: ServerConfig): boolean {
    const confirmed = this.context.workspaceState.get<Record<string, string>>(CONFIRMED_KEY, {});
    return confirmed[config.name] === this.fingerprint(config);
  }

  /**
   * Start (or restart) a server by the person's choice. A workspace server shows its exact
   * command line first and starts only on a yes, in a trusted workspace.
   */
  async startByPerson(name: string): Promise<boolean> {
    const entry = this.entries.get(name);
    if (!entry) return false;
    const config = entry.server.config;
    if (config.source === 'workspace') {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t('The MCP server "{0}" comes from this workspace\'s .vscode/mcp.json: trust the workspace first to start it.', name),
        );
        return false;
      }
      if (!this.isConfirmed(config)) {
        const line = commandLineOf(config.spec);
        const yes = await this.services.prompts.confirm(
          vscode.l10n.t('Start the MCP server "{0}" from {1}/.vscode/mcp.json?', name, entry.folder?.name ?? vscode.l10n.t('this workspace')),
          config.spec.kind === 'stdio'
            ? vscode.l10n.t(
                'It runs this command on your machine:\n\n{0}\n\nA server from a repository is code from that repository. Start it only if you trust it.',
                line,
              )
            : vscode.l10n.t('It connects to:\n\n{0}\n\nA server from a repository is code from that repository. Start it only if you trust it.', line),
          vscode.l10n.t('Start Server'),
        );
        const declined = this.context.workspaceState.get<Record<string, string>>(DECLINED_KEY, {});
        if (!yes) {
          await this.context.workspaceState.update(DECLINED_KEY, { ...declined, [name]: this.fingerprint(config) });
          this.changed.fire();
          return false;
        }
        delete declined[name];
        await this.context.workspaceState.update(DECLINED_KEY, declined);
        const confirmed = this.context.workspaceState.get<Record<string, string>>(CONFIRMED_KEY, {});
        await this.context.workspaceState.update(CONFIRMED_KEY, { ...confirmed, [name]: this.fingerprint(config) });
      }
    }
    await entry.server.restart();
    return entry.server.state.kind === 'running';
  }

  private async resolveSpec(entry: Entry): Promise<ServerSpec> {
    const spec = entry.server.config.spec;
    const answers: Record<string, string | undefined> = {};
    for (const id of inputsUsed(spec)) {
      const input = entry.inputs.find((i) => i.id === id);
      const key = `modelGateway.mcp.input:${entry.folder ? entry.folder.uri.toString() : 'user'}:${id}`;
      let answer = await this.context.secrets.get(key);
      if (answer === undefined) {
        answer = await this.services.prompts.input({
          title: vscode.l10n.t('MCP server "{0}": {1}', entry.server.name, input?.description ?? id),
          prompt: vscode.l10n.t("{0} (kept in VS Code's secret storage)", input?.description ?? id),
          password: input?.password ?? false,
          value: input?.default,
          ignoreFocusOut: true,
        });
        if (answer === undefined) throw new Error(`no answer for the input "${id}"`);
        await this.context.secrets.store(key, answer);
      }
      answers[id] = answer;
    }
    // A user server's ${workspaceFolder} is the first folder of the window.
    const folder = entry.folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
    let resolved = resolveVariables(spec, { workspaceFolder: folder, userHome: homedir(), env: process.env, inputs: answers });
    if (resolved.kind === 'stdio' && resolved.envFile) {
      const path = isAbsolute(resolved.envFile) ? resolved.envFile : join(entry.folder?.uri.fsPath ?? homedir(), resolved.envFile);
      const fromFile = parseEnvFile(await readFile(path, 'utf8'));
      resolved = { ...resolved, env: { ...fromFile, ...resolved.env } };
    }
    return resolved;
  }

  private serverChanged(entry: Entry, lostTools?: string[]): void {
    this.rebuildTools();
    const s = entry.server.state;
    if (lostTools?.length && s.kind === 'failed') {
      const retry = s.retryAt
        ? vscode.l10n.t('it is restarted in {0} s', Math.round((s.retryAt - Date.now()) / 1000))
        : vscode.l10n.t('it is not restarted again (Model Gateway: MCP Servers → Restart)');
      this.notices.fire(
        vscode.l10n.t(
          'The MCP server "{0}" stopped: its tools ({1}) are unavailable until it runs again; {2}.',
          entry.server.name,
          lostTools.join(', '),
          retry,
        ),
      );
    }
    this.changed.fire();
  }

  private rebuildTools(): void {
    this.tools.clear();
    const taken = new Set<string>(['read_file', 'list_dir', 'find_files', 'search_text', 'create_file', 'replace_in_file', 'semantic_search', 'run_command']);
    for (const entry of this.entries.values()) {
      const s = entry.server.state;
      if (s.kind !== 'running') continue;
      for (const tool of s.tools) {
        const name = qualifiedName(entry.server.name, tool.name, taken);
        taken.add(name);
        this.tools.set(name, { entry, tool: tool.name, definition: definitionOf(entry.server.name, tool, name) });
      }
    }
  }

  readonly origin = 'mcp' as const;

  definitions(): ToolDefinition[] {
    return [...this.tools.values()].map((t) => t.definition);
  }

  sourceOf(name: string): string {
    return this.tools.get(name)?.entry.server.name ?? 'MCP';
  }

  owns(name: string): boolean {
    return this.tools.has(name);
  }

  category(name: string): ToolCategory {
    const t = this.tools.get(name);
    return { kind: 'tool', server: t?.entry.server.name ?? '', tool: t?.tool ?? name };
  }

  async run(
    name: string,
    rawArgs: string,
    approver: ActionApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    paused: boolean,
  ): Promise<ToolResult> {
    const t = this.tools.get(name);
    if (!t) return { content: `Error: the tool "${name}" is no longer available (its MCP server stopped).`, isError: true };
    const args = objectArgs(rawArgs);
    if (!args) return { content: 'Error: the arguments are not a JSON object.', isError: true };
    const server = t.entry.server.name;
    const go = await approveToolCall({
      server,
      tool: t.tool,
      where: vscode.l10n.t('MCP server {0}', server),
      args,
      reason: vscode.l10n.t('MCP tools ask unless allowed (modelGateway.agent.autoApprove.mcp)'),
      approver,
      callId,
      signal,
      paused,
    });
    if (!go) return { content: `The person rejected the call of ${t.tool} on the MCP server "${server}"; it did not run.`, isError: true };
    // While the call runs, the server's sampling requests are decided in this turn's approval bar.
    const link: ChatTurnLink = { approver, callId, signal };
    this.turns.set(server, [...(this.turns.get(server) ?? []), link]);
    try {
      this.log.info(`[${server}] calling ${t.tool}`);
      const r = await t.entry.server.call(t.tool, args, signal);
      const images = resultImages(r.content);
      return { content: resultText(r.content, r.structured), isError: r.isError, ...(images.length ? { images } : {}) };
    } catch (err) {
      if (signal?.aborted) throw err;
      return { content: `Error: the MCP server "${server}" could not run ${t.tool}: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    } finally {
      const left = (this.turns.get(server) ?? []).filter((l) => l !== link);
      if (left.length) this.turns.set(server, left);
      else this.turns.delete(server);
    }
  }

  // ---------- prompts and resources, for the chat input ----------

  /** Prompts of running servers matching the query (`server/prompt`), for `/` in the chat input. */
  promptItems(query: string): { path: string; name: string }[] {
    const q = query.toLowerCase();
    const out: { path: string; name: string }[] = [];
    for (const e of this.entries.values()) {
      if (e.server.state.kind !== 'running') continue;
      for (const p of e.server.state.prompts) {
        const id = `${e.server.name}/${p.name}`;
        if (id.toLowerCase().includes(q)) out.push({ path: id, name: id });
      }
    }
    return out.slice(0, 50);
  }

  /** Resources of running servers matching the query, for `@` in the chat input (`mcp:server:uri`). */
  resourceItems(query: string): { path: string; name: string }[] {
    const q = query.toLowerCase();
    const out: { path: string; name: string }[] = [];
    for (const e of this.entries.values()) {
      if (e.server.state.kind !== 'running') continue;
      for (const r of e.server.state.resources) {
        if (q && !`${r.name} ${r.uri}`.toLowerCase().includes(q)) continue;
        out.push({ path: `mcp:${e.server.name}:${r.uri}`, name: `${e.server.name}: ${r.name}` });
        if (out.length >= 20) return out;
      }
    }
    // Templates after the resources: attaching one asks for its arguments.
    for (const e of this.entries.values()) {
      if (e.server.state.kind !== 'running') continue;
      for (const t of e.server.state.templates) {
        if (q && !`${t.name} ${t.uriTemplate}`.toLowerCase().includes(q)) continue;
        const names = templateArguments(t.uriTemplate);
        out.push({
          path: `mcp:${e.server.name}:${t.uriTemplate}`,
          name: `${e.server.name}: ${t.name}${names.length ? ` (asks for ${names.join(', ')})` : ''}`,
        });
        if (out.length >= 20) return out;
      }
    }
    return out;
  }

  /** A resource as a chat attachment; a template's arguments are asked first (undefined: not given). */
  async readResource(path: string): Promise<{ label: string; text: string } | undefined> {
    const m = /^mcp:([^:]+):(.+)$/.exec(path);
    const server = m ? this.entries.get(m[1])?.server : undefined;
    if (!m || !server) throw new Error('That MCP resource is not available (its server is not running).');
    const template = server.state.kind === 'running' ? server.state.templates.find((t) => t.uriTemplate === m[2]) : undefined;
    if (template) {
      const values: Record<string, string> = {};
      for (const [i, name] of templateArguments(template.uriTemplate).entries()) {
        const value = await this.services.prompts.input({
          title: vscode.l10n.t('MCP resource {0}: {1} ({2} of {3})', server.name, template.name, i + 1, templateArguments(template.uriTemplate).length),
          prompt: `${name}${template.description ? `: ${template.description}` : ''}`,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t("{0} is needed to make the resource's address", name)),
        });
        if (value === undefined) return undefined;
        values[name] = value.trim();
      }
      const uri = new (loadMcpSdk().UriTemplate)(template.uriTemplate).expand(values);
      return { label: `${server.name}: ${template.name} (${uri})`, text: await server.read(uri) };
    }
    const text = await server.read(m[2]);
    const name = server.state.kind === 'running' ? (server.state.resources.find((r) => r.uri === m[2])?.name ?? m[2]) : m[2];
    return { label: `${server.name}: ${name}`, text };
  }

  /** A prompt's text, after asking its arguments; undefined when the person cancels. */
  async usePrompt(id: string): Promise<string | undefined> {
    const at = id.indexOf('/');
    const server = this.entries.get(id.slice(0, at))?.server;
    const prompt = server?.state.kind === 'running' ? server.state.prompts.find((p) => p.name === id.slice(at + 1)) : undefined;
    if (!server || !prompt) throw new Error(`The MCP prompt "${id}" is not available (its server is not running).`);
    const args: Record<string, string> = {};
    for (const a of prompt.arguments ?? []) {
      const value = await this.services.prompts.input({
        title: vscode.l10n.t('MCP prompt {0}: {1}', id, a.name),
        prompt: `${a.description ?? a.name}${a.required ? '' : ' (optional)'}`,
        ignoreFocusOut: true,
        validateInput: (v) => (a.required && !v.trim() ? vscode.l10n.t('{0} is required', a.name) : undefined),
      });
      if (value === undefined) return undefined;
      if (value.trim() || a.required) args[a.name] = value;
    }
    return server.prompt(prompt.name, args);
  }

  dispose(): void {
    for (const e of this.entries.values()) e.server.dispose();
    this.entries.clear();
    for (const d of this.disposables) d.dispose();
  }
}
