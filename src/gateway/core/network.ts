/**
 * How requests reach the gateway: directly or through a proxy (CONNECT tunnels, Basic
 * credentials), with the certificates the user trusts. VS Code patches Node's http/https modules
 * for extensions, not undici, so the client routes itself from these options (the host reads them
 * from VS Code's `http.*` settings and the environment).
 */
import type { Dispatcher as DispatcherTypes } from 'undici';
import { isLoopback } from '../../common/loopback';
import { Agent, Dispatcher, ProxyAgent } from './undiciLite';

export interface ProxySettings {
  /** The proxy for `http:` targets and for `https:` targets (a URL; may carry `user:password@`). */
  http?: string;
  https?: string;
  /** Where the proxy came from, named in messages (`http.proxy`, `HTTPS_PROXY`, …). */
  source: string;
  /** A `Proxy-Authorization` value (VS Code's `http.proxyAuthorization`); never logged. */
  authorization?: string;
  /**
   * Hosts that go direct, in `NO_PROXY` syntax (`example.com` also covers its subdomains,
   * `.example.com`, `*.example.com`, `host:port`, `*`). Loopback always goes direct unless the
   * list holds `<-loopback>` (Chromium's rule for the same choice).
   */
  noProxy: string[];
}

export interface NetworkOptions {
  proxy?: ProxySettings;
  /** The certificates to trust, replacing Node's default list (so it must include what it keeps). */
  ca?: string[];
  /** False only when the user turned certificate checks off (`http.proxyStrictSSL: false`). */
  rejectUnauthorized?: boolean;
}

/** Environment variables read for a proxy, lower case first (curl's and undici's order). */
export function proxyFromEnv(env: Record<string, string | undefined>): ProxySettings | undefined {
  const pick = (name: string): { value: string; name: string } | undefined => {
    for (const n of [name.toLowerCase(), name]) {
      const v = env[n]?.trim();
      if (v) return { value: v, name: n };
    }
    return undefined;
  };
  const https = pick('HTTPS_PROXY');
  const http = pick('HTTP_PROXY');
  const all = pick('ALL_PROXY');
  if (!https && !http && !all) return undefined;
  const noProxy = pick('NO_PROXY');
  return {
    https: (https ?? all ?? http)?.value,
    http: (http ?? all)?.value,
    source: (https ?? http ?? all)!.name,
    noProxy: noProxy ? splitList(noProxy.value) : [],
  };
}

/** A comma- or space-separated host list. */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A proxy URL with `http://` added when the scheme is missing (`proxy.corp:3128`). */
export function normalizeProxyUrl(raw: string): URL {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  const url = new URL(text);
  if (!['http:', 'https:', 'socks:', 'socks5:'].includes(url.protocol)) throw new Error(`unsupported proxy scheme ${url.protocol}`);
  return url;
}

/** The proxy's address for messages and logs: scheme, host and port, no credentials. */
export function describeProxy(raw: string): string {
  try {
    const u = normalizeProxyUrl(raw);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(an invalid proxy URL)';
  }
}

export { isLoopback };

/** Whether `NO_PROXY`-style entries send this host (and port) directly. */
export function bypassesProxy(url: URL, noProxy: readonly string[]): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (isLoopback(host) && !noProxy.includes('<-loopback>')) return true;
  for (const raw of noProxy) {
    const entry = raw.toLowerCase();
    if (entry === '<-loopback>') continue;
    if (entry === '*') return true;
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(entry);
    if (!m) continue;
    const name = (m[1] ?? m[2] ?? '').replace(/^\*?\./, '');
    const suffixOnly = entry.startsWith('.') || entry.startsWith('*.');
    if (m[3] && m[3] !== port) continue;
    if (host === name && !suffixOnly) return true;
    if (host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The proxy (a URL) a request to `target` goes through, if any. */
export function proxyFor(target: string | URL, proxy: ProxySettings | undefined): string | undefined {
  if (!proxy) return undefined;
  const url = typeof target === 'string' ? new URL(target) : target;
  const chosen = url.protocol === 'https:' ? proxy.https : proxy.http;
  if (!chosen || bypassesProxy(url, proxy.noProxy)) return undefined;
  return chosen;
}

/**
 * A dispatcher that sends each origin directly or through its proxy, with one pool per route.
 * Rebuilt by the client when the options change (a settings change applies without a reload).
 */
export class NetworkDispatcher extends Dispatcher {
  private readonly direct: Agent;
  private readonly proxied = new Map<string, ProxyAgent>();

  constructor(
    readonly network: NetworkOptions,
    private readonly agentOptions: Agent.Options,
  ) {
    super();
    this.direct = new Agent({ ...agentOptions, connect: this.tls() });
  }

  private tls(): { ca?: string[]; rejectUnauthorized?: boolean } {
    return {
      ...(this.network.ca ? { ca: this.network.ca } : {}),
      ...(this.network.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    };
  }

  /** The dispatcher for an origin (`https://host:port`). */
  private route(origin: string): DispatcherTypes {
    const proxy = proxyFor(origin, this.network.proxy);
    if (!proxy) return this.direct;
    let agent = this.proxied.get(proxy);
    if (!agent) {
      const tls = this.tls();
      agent = new ProxyAgent({
        ...this.agentOptions,
        uri: normalizeProxyUrl(proxy).toString(),
        ...(this.network.proxy?.authorization ? { token: this.network.proxy.authorization } : {}),
        requestTls: tls,
        proxyTls: tls,
      });
      this.proxied.set(proxy, agent);
    }
    return agent;
  }

  override dispatch(opts: DispatcherTypes.DispatchOptions, handler: DispatcherTypes.DispatchHandler): boolean {
    return this.route(String(opts.origin)).dispatch(opts, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const done = Promise.all([this.direct.close(), ...[...this.proxied.values()].map((a) => a.close())]).then(() => undefined);
    if (callback) void done.then(callback);
    else return done;
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: unknown, b?: unknown): Promise<void> | void {
    const err = a instanceof Error ? a : null;
    const callback = typeof a === 'function' ? a : typeof b === 'function' ? b : undefined;
    const done = Promise.all([this.direct.destroy(err), ...[...this.proxied.values()].map((x) => x.destroy(err))]).then(() => undefined);
    if (callback) void done.then(() => (callback as () => void)());
    else return done;
  }
}
