import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import * as vscode from 'vscode';
import { escapeHtml } from '../../common/html';
import * as z from 'zod/mini';
import { registerSecret } from '../../shell/redact';

/** Where a server's OAuth state is kept: SecretStorage, one entry per server name and URL. */
const KEY_PREFIX = 'modelGateway.mcp.oauth:';
/** How long the browser step may take before the sign-in is given up. */
const SIGN_IN_MS = 5 * 60_000;

const Stored = z.object({
  /** The redirect URI registered with the authorization server (a loopback port of this machine, as the browser reaches it). */
  redirectUrl: z.optional(z.string()),
  port: z.optional(z.number()),
  client: z.optional(z.looseObject({ client_id: z.string() })),
  tokens: z.optional(z.looseObject({ access_token: z.string(), token_type: z.string() })),
  verifier: z.optional(z.string()),
  state: z.optional(z.string()),
});
type Stored = z.infer<typeof Stored>;

/** How the browser step is taken: VS Code's `openExternal`, or a test acting as the browser. */
export type OpenBrowser = (url: string) => Thenable<boolean> | Promise<boolean>;

/**
 * The OAuth 2.1 client of one remote MCP server, for the SDK's `auth()` (metadata discovery,
 * dynamic client registration, PKCE, refresh): its client registration and tokens live in
 * SecretStorage only. The redirect comes back to a loopback listener that is open only while a
 * sign-in the person started waits for it, and whose `state` must match.
 */
export class McpOAuth {
  private stored: Stored = {};
  private loaded = false;
  /** The authorization URL the SDK asked to open (the sign-in waits for the person before it opens). */
  pendingAuthorization: URL | undefined;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    readonly serverName: string,
    readonly serverUrl: string,
  ) {}

  private get key(): string {
    return `${KEY_PREFIX}${this.serverName}:${this.serverUrl}`;
  }

  async load(): Promise<void> {
    const text = await this.secrets.get(this.key);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = {};
    }
    const result = Stored.safeParse(parsed);
    this.stored = result.success ? result.data : {};
    this.loaded = true;
    this.redactTokens();
  }

  private async save(change: Partial<Stored>): Promise<void> {
    if (!this.loaded) await this.load();
    this.stored = { ...this.stored, ...change };
    await this.secrets.store(this.key, JSON.stringify(this.stored));
  }

  /** Whether tokens are held for this server (signed in). */
  get signedIn(): boolean {
    return !!this.stored.tokens;
  }

  /** Forgets the tokens and the client registration (Sign Out). */
  async forget(): Promise<void> {
    this.stored = {};
    await this.secrets.delete(this.key);
  }

  /**
   * Picks the redirect URI before a connection (the SDK reads it synchronously): a loopback port
   * kept with the registration, as the browser reaches it (`asExternalUri`: a forwarded port when
   * VS Code runs remotely). A different URI than the registered one means registering again.
   */
  async prepare(): Promise<void> {
    if (!this.loaded) await this.load();
    // VS Code forwards the port when it runs remotely, and connects to it to do so: it listens
    // meanwhile (a new registration takes a free port this way).
    const holder = await listenOn(this.stored.port ?? 0).catch(() => undefined);
    const port = this.stored.port ?? (holder?.address() as { port: number } | undefined)?.port;
    if (!port) throw new Error('no loopback port is free for the sign-in');
    let external: string;
    try {
      // The port's root, then the path: code-server's forwarded URI keeps no path (`/proxy/<port>/`).
      const root = (await vscode.env.asExternalUri(vscode.Uri.parse(`http://127.0.0.1:${port}/`))).toString(true);
      external = new URL('callback', root.endsWith('/') ? root : `${root}/`).toString();
    } finally {
      await new Promise<void>((r) => (holder ? holder.close(() => r()) : r()));
    }
    if (external !== this.stored.redirectUrl) await this.save({ port, redirectUrl: external, client: undefined, tokens: undefined });
  }

  // ---------- OAuthClientProvider ----------

  get redirectUrl(): string {
    return this.stored.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata() {
    return {
      client_name: 'Model Gateway for VS Code',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  async state(): Promise<string> {
    const state = randomBytes(16).toString('base64url');
    await this.save({ state });
    return state;
  }

  clientInformation() {
    return this.stored.client as { client_id: string } | undefined;
  }

  async saveClientInformation(client: { client_id: string }): Promise<void> {
    await this.save({ client });
  }

  tokens() {
    return this.stored.tokens as { access_token: string; token_type: string } | undefined;
  }

  async saveTokens(tokens: { access_token: string; token_type: string }): Promise<void> {
    await this.save({ tokens });
    this.redactTokens();
  }

  /** The tokens never reach a log or a notification (they are cleaned out like the gateway's key). */
  private redactTokens(): void {
    const t = this.stored.tokens as { access_token?: string; refresh_token?: string } | undefined;
    for (const v of [t?.access_token, t?.refresh_token]) if (v && v.length >= 8) registerSecret(v);
  }

  redirectToAuthorization(url: URL): void {
    this.pendingAuthorization = url;
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    await this.save({ verifier });
  }

  codeVerifier(): string {
    if (!this.stored.verifier) throw new Error('no sign-in is under way for this server');
    return this.stored.verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'all') await this.save({ client: undefined, tokens: undefined, verifier: undefined });
    else if (scope === 'client') await this.save({ client: undefined });
    else if (scope === 'tokens') await this.save({ tokens: undefined });
    else if (scope === 'verifier') await this.save({ verifier: undefined });
  }

  // ---------- the browser step ----------

  /**
   * Opens the authorization URL the SDK asked for and waits for the redirect on the loopback port:
   * the authorization code, once `state` matches. Refused: another page's redirect, an error the
   * server sent, or no answer within five minutes.
   */
  async browserStep(open: OpenBrowser, signal?: AbortSignal): Promise<string> {
    const url = this.pendingAuthorization;
    if (!url || !this.stored.port) throw new Error('the server did not ask for a sign-in');
    // Only a web page opens: the authorization server's metadata names it, and a server is not trusted to name anything else.
    const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
      throw new Error(`the sign-in page ${url.protocol}//${url.host} is not https; it is not opened`);
    const expected = this.stored.state ?? url.searchParams.get('state') ?? '';
    let server: Server | undefined;
    const code = new Promise<string>((resolve, reject) => {
      server = createServer((req, res) => {
        const at = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (at.pathname !== '/callback') {
          res.writeHead(404).end();
          return;
        }
        const error = at.searchParams.get('error');
        const got = at.searchParams.get('code');
        const ok = !error && got && at.searchParams.get('state') === expected;
        res.writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><meta charset="utf-8"><title>Model Gateway</title><p>${escapeHtml(ok ? vscode.l10n.t('Signed in. You can close this tab and go back to VS Code.') : vscode.l10n.t('The sign-in did not complete. Go back to VS Code and try again.'))}</p>`,
        );
        if (ok) resolve(got);
        else
          reject(
            new Error(
              error
                ? `the server refused the sign-in: ${at.searchParams.get('error_description') ?? error}`
                : 'the sign-in answer did not match the request (state), and was ignored',
            ),
          );
      });
      server.on('error', (err) => reject(new Error(`the sign-in could not listen on port ${this.stored.port}: ${err.message} (Sign Out, then sign in again)`)));
      server.listen(this.stored.port, '127.0.0.1');
    });
    const timer = setTimeout(() => server?.emit('error', new Error('no answer from the browser within five minutes')), SIGN_IN_MS);
    const aborted = () => server?.emit('error', new Error('cancelled'));
    signal?.addEventListener('abort', aborted, { once: true });
    try {
      await new Promise<void>((r) => server!.once('listening', () => r()).once('error', () => r()));
      if (!server!.listening) return await code;
      if (!(await open(url.toString()))) throw new Error('the browser could not be opened');
      return await code;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      server?.close();
      this.pendingAuthorization = undefined;
    }
  }
}

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer((_req, res) => res.writeHead(404).end());
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}
