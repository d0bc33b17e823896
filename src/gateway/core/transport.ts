import * as l10n from '@vscode/l10n';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  AbortError,
  ConnectionError,
  GatewayError,
  MissingCredentialError,
  ProxyError,
  RateLimitError,
  TimeoutError,
  TlsError,
  describeBody,
  errorFromResponse,
  errorInSuccessBody,
  type APIStatusError,
} from './errors';
import type { RequestOptions } from './requestOptions';
import type { Multipart } from './multipart';
import { registerSecret } from './redact';
import { NetworkDispatcher, type NetworkOptions } from './network';
import { networkFailure, probeCertificate } from './networkErrors';
import { request } from './undiciLite';

/** Which credential and header a path uses (the spec's "Authentication" table). */
export type AuthKind = 'bearer' | 'messages' | 'imagegen' | 'goog' | 'account' | 'none';

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string;
  systemAccessToken?: string;
  /**
   * Credentials the caller holds but will not send to this gateway, with the reason: a call that
   * needs one fails with that reason (a `MissingCredentialError` of type `credential_withheld`)
   * before anything is sent.
   */
  withheld?: { apiKey?: string; systemAccessToken?: string };
  /** Sent as `New-Api-User` on account calls (new-api deployments require it). */
  userId?: string | number;
  /** Retries after the first attempt; the spec's sample makes 3 attempts in all. Default 2. */
  maxRetries?: number;
  /** Limit for the response head to arrive, and for each pause between body reads (the latter
   *  accurate to about a second). Default 10 min. */
  timeoutMs?: number;
  /** Unit of the backoff: waits are (2^(attempt-1) + random) × this. Default 1000 ms. */
  retryBaseMs?: number;
  /** A `retry-after` longer than this is not waited out: the error goes to the caller. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Longest silence between two events of a streamed answer before it counts as stalled. Default 60 s. */
  streamIdleTimeoutMs?: number;
  /** Proxy and certificates (VS Code's `http.*` settings, the environment); direct with Node's CAs when absent. */
  network?: NetworkOptions;
  /** Extra headers on every request (never logged; sent to the gateway's origin only). */
  headers?: Record<string, string>;
  /** Injected for tests: how to wait between attempts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Called before each retry, with the wait chosen (for logs and UI countdowns). */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  attempt: number;
  waitMs: number;
  reason: string;
  method: string;
  path: string;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  auth: AuthKind;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  /** A multipart body (file parts stream from disk and can be sent again). */
  form?: Multipart;
  /** A raw body (multipart and the like); `headers` must carry its content type. */
  body?: Dispatcher.DispatchOptions['body'];
  headers?: Record<string, string>;
  accept?: string;
  signal?: AbortSignal;
  /** Whether the body may be sent twice (false for bodies read from a stream). Default true. */
  replayable?: boolean;
  /**
   * Follow redirects (file downloads: gateways redirect to storage). Credentials and extra
   * headers go only to the gateway's own origin, never to the place redirected to. Without it
   * a 3xx is an error: a JSON or stream call never takes a redirect for a success.
   */
  followRedirects?: boolean;
  /** This request's retry policy (`RequestOptions.retry`). */
  retry?: RequestOptions['retry'];
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** Why the request was ended by us, if it was: the caller aborted, or a time limit passed. */
  endedBy(): 'abort' | 'timeout' | undefined;
  /** Longest silence allowed between two reads of a streamed body, in ms (none when absent). */
  idleTimeoutMs?: number;
}

/** The `type` of the error for a credential held for another origin (see `TransportOptions.withheld`). */
export const CREDENTIAL_WITHHELD = 'credential_withheld';
export const VERSION_HEADER = 'anthropic-version';
export const MESSAGES_API_VERSION = '2023-06-01';
const USER_AGENT = 'model-gateway-vscode/0.1.0';

/** Accepts a base URL with or without a trailing `/v1` or `/`; returns the origin-plus-prefix. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new GatewayError(l10n.t('The base URL "{0}" is not a valid URL (expected e.g. https://gateway.example.com).', raw), {
      type: 'configuration_error',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError(l10n.t('The base URL must use http or https, not {0}', url.protocol), { type: 'configuration_error' });
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1')) path = path.slice(0, -3);
  return `${url.origin}${path}`;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError('The request was aborted.'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError('The request was aborted.'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Reads `retry-after-ms` (ms) or `retry-after` (seconds or an HTTP date). */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const s = first(headers['retry-after']);
  if (s !== undefined) {
    const n = Number(s);
    if (Number.isFinite(n) && n >= 0) return n * 1000;
    const date = Date.parse(s);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** Statuses worth another attempt, as in the official SDKs: timeouts, conflicts, limits, server faults. */
const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Headers that carry credentials; dropped when a redirect leaves the gateway's origin. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'new-api-user', 'cookie', 'proxy-authorization'];

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** Maps an error thrown by undici to ours, knowing whether the caller or a limit ended it. */
export function mapTransportError(err: unknown, endedBy: 'abort' | 'timeout' | undefined, what: string): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: string } | null)?.code;
  if (endedBy === 'abort') return new AbortError(`${what} was aborted.`, { cause: err });
  if (endedBy === 'timeout' || (code && TIMEOUT_CODES.has(code))) {
    return new TimeoutError(`${what} timed out: the gateway did not answer in time.`, { cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new ConnectionError(l10n.t('Could not reach the gateway ({0}). Check the base URL and your network.', code ?? detail), {
    cause: err,
  });
}

export class Transport {
  readonly baseUrl: string;
  private readonly dispatcher: NetworkDispatcher;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly options: TransportOptions) {
    registerSecret(options.apiKey);
    registerSecret(options.systemAccessToken);
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 2));
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.idleTimeoutMs = options.streamIdleTimeoutMs ?? 60_000;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.dispatcher = new NetworkDispatcher(options.network ?? {}, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connections: 32 });
  }

  /** Closes pooled connections. */
  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private authHeaders(kind: AuthKind): Record<string, string> {
    const need = (field: 'apiKey' | 'systemAccessToken', what: string, fix: string) => {
      const value = this.options[field];
      const withheld = this.options.withheld?.[field];
      // The code names the missing credential: the fixes go by it, not by the (translated) message.
      const code = field === 'apiKey' ? 'api_key' : 'system_access_token';
      if (!value && withheld) throw new MissingCredentialError(withheld, { type: CREDENTIAL_WITHHELD, code });
      if (!value) throw new MissingCredentialError(`${what} ${fix}`, { type: 'configuration_error', code });
      return value;
    };
    const apiKey = () => need('apiKey', l10n.t('No API key is set.'), l10n.t('Set the gateway API key first.'));
    switch (kind) {
      case 'bearer':
        return { authorization: `Bearer ${apiKey()}` };
      case 'messages':
        return { 'x-api-key': apiKey(), [VERSION_HEADER]: MESSAGES_API_VERSION };
      case 'imagegen':
        return { 'api-key': apiKey() };
      case 'goog':
        // Gemini's own header (new-api reads it, or `?key=`, which would put the key in URLs and logs).
        return { 'x-goog-api-key': apiKey() };
      case 'account': {
        const h: Record<string, string> = {
          authorization: `Bearer ${need('systemAccessToken', l10n.t('No system access token is set.'), l10n.t('Set the system access token (account settings of the gateway console) first.'))}`,
        };
        if (this.options.userId !== undefined && this.options.userId !== '') h['new-api-user'] = String(this.options.userId);
        return h;
      }
      case 'none':
        return {};
    }
  }

  private url(spec: RequestSpec): string {
    let url = /^https?:\/\//.test(spec.path) ? spec.path : this.baseUrl + spec.path;
    if (spec.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) q.set(k, String(v));
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    return url;
  }

  /** GET of an absolute URL (result files): never the key; the extra headers only on the gateway's own origin. */
  sendUrl(url: string, opts: { accept?: string; signal?: AbortSignal } = {}): Promise<RawResponse> {
    if (!/^https?:\/\//.test(url)) throw new GatewayError(`Not an http(s) URL: ${url.slice(0, 100)}`, { type: 'invalid_response' });
    return this.send({ method: 'GET', path: url, auth: 'none', accept: opts.accept, signal: opts.signal, followRedirects: true });
  }

  /** Waits between attempts or polls (injectable for tests). */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleep(ms, signal);
  }

  backoffMs(attempt: number): number {
    return (2 ** (attempt - 1) + this.random()) * this.retryBaseMs;
  }

  /**
   * Sends a request, retrying 429, 503 and failures before any response byte. Returns the
   * response once its status is a success; the body is then the caller's to read. Error statuses
   * become typed errors. Nothing is retried after the response head has been handed over.
   */
  async send(spec: RequestSpec): Promise<RawResponse> {
    const headers: Record<string, string> = {
      'user-agent': USER_AGENT,
      accept: spec.accept ?? 'application/json',
      ...this.options.headers,
      ...spec.headers,
      ...this.authHeaders(spec.auth),
    };
    let body = spec.body;
    if (spec.form) {
      headers['content-type'] = spec.form.contentType;
      headers['content-length'] = String(spec.form.length);
    }
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] = 'application/json';
    }
    let url = this.url(spec);
    let method: RequestSpec['method'] = spec.method;
    const what = `${spec.method} ${spec.path}`;
    const replayable = spec.replayable ?? true;
    // Credentials and the extra headers (often an access proxy's secret) are the gateway's: a URL
    // on another origin (a result file's storage, a vendor's CDN) gets none of them.
    const gateway = new URL(this.baseUrl).origin;
    if (new URL(url).origin !== gateway) this.dropGatewayHeaders(headers);
    let redirects = 0;
    /** Waited for the server's limits so far: together at most `maxRetryAfterMs` (the request's budget). */
    let waitedMs = 0;
    const maxRetryAfterMs = spec.retry?.maxRetryAfterMs ?? this.maxRetryAfterMs;

    for (let attempt = 1; ; attempt++) {
      if (spec.signal?.aborted) throw new AbortError(`${what} was aborted.`);
      const controller = new AbortController();
      let endedBy: 'abort' | 'timeout' | undefined;
      const onAbort = () => {
        endedBy ??= 'abort';
        controller.abort();
      };
      spec.signal?.addEventListener('abort', onAbort, { once: true });
      // Our own timer for the response head: undici's timers are only accurate to about a second.
      const headTimer = setTimeout(() => {
        endedBy ??= 'timeout';
        controller.abort();
      }, this.timeoutMs);
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method,
          headers,
          // A multipart body is produced afresh for each attempt.
          body: spec.form ? Readable.from(spec.form.chunks(), { objectMode: false }) : body,
          signal: controller.signal,
          dispatcher: this.dispatcher,
          headersTimeout: 0,
          // Longest pause allowed between two reads of the body (coarse, about a second).
          bodyTimeout: this.timeoutMs,
        });
        clearTimeout(headTimer);
      } catch (err) {
        clearTimeout(headTimer);
        spec.signal?.removeEventListener('abort', onAbort);
        const mapped = endedBy ? mapTransportError(err, endedBy, what) : await this.failureOf(err, url, what);
        if (mapped instanceof AbortError || !replayable || attempt > this.maxRetries || !worthRetrying(mapped)) throw mapped;
        const waitMs = this.backoffMs(attempt);
        this.options.onRetry?.({ attempt, waitMs, reason: mapped.message, method: spec.method, path: spec.path });
        await this.sleep(waitMs, spec.signal);
        continue;
      }

      if (res.statusCode >= 300 && res.statusCode < 400) {
        spec.signal?.removeEventListener('abort', onAbort);
        await res.body.dump().catch(() => undefined);
        const location = firstHeader(res.headers.location);
        if (!spec.followRedirects || !REDIRECT_STATUS.has(res.statusCode) || !location) {
          throw redirectError(res.statusCode, what, location, url);
        }
        if (++redirects > MAX_REDIRECTS)
          throw new GatewayError(`${what} was redirected more than ${MAX_REDIRECTS} times; stopped.`, { status: res.statusCode, type: 'redirect' });
        const next = new URL(location, url);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw redirectError(res.statusCode, what, location, url);
        // Storage on another origin gets no credential and none of the gateway's extra headers.
        if (next.origin !== gateway) this.dropGatewayHeaders(headers);
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        url = next.toString();
        attempt--;
        continue;
      }

      if (res.statusCode < 300) {
        const cleanup = () => spec.signal?.removeEventListener('abort', onAbort);
        res.body.once('close', cleanup);
        return { status: res.statusCode, headers: res.headers, body: res.body, endedBy: () => endedBy, idleTimeoutMs: this.idleTimeoutMs };
      }

      let text: string;
      try {
        text = await res.body.text();
      } catch (err) {
        spec.signal?.removeEventListener('abort', onAbort);
        throw mapTransportError(err, endedBy, what);
      }
      spec.signal?.removeEventListener('abort', onAbort);
      const headerWaitMs = parseRetryAfter(res.headers);
      const error = errorFromResponse(res.statusCode, text, res.headers, headerWaitMs);
      // A 429 without Retry-After may name its limiter's window in the message (new-api): waiting
      // less only spends the window's budget again, so the wait is the window, within the budget.
      const hintedWaitMs = headerWaitMs === undefined && error instanceof RateLimitError ? error.retryAfterMs : undefined;
      const retryAfterMs = headerWaitMs ?? hintedWaitMs;
      if (
        this.shouldRetry(error, res.headers, retryAfterMs, maxRetryAfterMs) &&
        (spec.retry?.statuses !== false || (error instanceof RateLimitError && retryAfterMs !== undefined && maxRetryAfterMs > 0)) &&
        replayable &&
        attempt <= this.maxRetries &&
        waitedMs + (retryAfterMs ?? 0) <= maxRetryAfterMs
      ) {
        const waitMs = hintedWaitMs !== undefined ? hintedWaitMs + this.random() * Math.min(1000, this.retryBaseMs) : (retryAfterMs ?? this.backoffMs(attempt));
        this.options.onRetry?.({ attempt, waitMs, reason: error.message, method: spec.method, path: spec.path });
        waitedMs += waitMs;
        await this.sleep(waitMs, spec.signal);
        continue;
      }
      throw error;
    }
  }

  /** Removes the credentials and the extra headers, in whatever letter case they were named. */
  private dropGatewayHeaders(headers: Record<string, string>): void {
    const drop = new Set([...CREDENTIAL_HEADERS, ...Object.keys(this.options.headers ?? {}).map((h) => h.toLowerCase())]);
    for (const h of Object.keys(headers)) if (drop.has(h.toLowerCase())) delete headers[h];
  }

  /** A failure before any response: the proxy's or TLS's own error where it is one (naming the certificate's issuer), else a connection error. */
  private async failureOf(err: unknown, url: string, what: string): Promise<GatewayError> {
    const network = this.options.network;
    const first = networkFailure(err, url, network);
    if (first instanceof TlsError && first.reason !== 'handshake') {
      const facts = await probeCertificate(url, network);
      return networkFailure(err, url, network, facts) ?? first;
    }
    return first ?? mapTransportError(err, undefined, what);
  }

  private shouldRetry(error: APIStatusError, headers: RawResponse['headers'], retryAfterMs: number | undefined, maxRetryAfterMs: number): boolean {
    const hint = headers['x-should-retry'];
    if (hint === 'false') return false;
    if (hint === 'true') return true;
    if (!RETRYABLE_STATUS.has(error.status)) return false;
    return retryAfterMs === undefined || retryAfterMs <= maxRetryAfterMs;
  }

  /** Sends and parses a JSON answer. */
  async json(spec: RequestSpec): Promise<{ data: unknown; headers: RawResponse['headers'] }> {
    const res = await this.send(spec);
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw mapTransportError(err, res.endedBy(), `${spec.method} ${spec.path}`);
    }
    if (text.length === 0) return { data: undefined, headers: res.headers };
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new GatewayError(`The gateway answered ${spec.method} ${spec.path} with something that is not JSON: ${describeBody(text)}`, {
        status: res.status,
        type: 'invalid_response',
      });
    }
    // Some gateways and proxies answer a failure with HTTP 200 and an error envelope.
    const failure = errorInSuccessBody(data, text, res.headers);
    if (failure) throw failure;
    return { data, headers: res.headers };
  }
}

/** Certificate failures and a proxy's refusal stay the same on a second try. */
function worthRetrying(error: GatewayError): boolean {
  if (error instanceof TlsError) return false;
  if (error instanceof ProxyError) return error.proxyStatus !== 407 && error.proxyStatus !== 403 && error.proxyStatus !== undefined;
  return true;
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** A redirect where none is followed: usually a base URL that needs https or another path. */
function redirectError(status: number, what: string, location: string | undefined, from: string): GatewayError {
  let where = location ? ` to ${location}` : '';
  try {
    if (location && new URL(location, from).origin !== new URL(from).origin) where = ` to ${new URL(location, from).origin}`;
  } catch {
    /* keep the raw location */
  }
  return new GatewayError(
    `The gateway answered ${what} with a redirect (HTTP ${status})${where}. Nothing was followed: check the base URL (https instead of http, or the path the gateway lives under).`,
    { status, type: 'redirect' },
  );
}
