import { Agent, request, type Dispatcher, type FormData } from 'undici';
import {
  AbortError,
  ConnectionError,
  GatewayError,
  MissingCredentialError,
  TimeoutError,
  errorFromResponse,
  type APIStatusError,
} from './errors';

/** Which credential and header a path uses (the spec's "Authentication" table). */
export type AuthKind = 'bearer' | 'messages' | 'imagegen' | 'account' | 'none';

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string;
  systemAccessToken?: string;
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
  /** Extra headers on every request (never used for credentials). */
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
  /** A multipart body (undici's FormData; file parts stream from disk and can be sent again). */
  form?: FormData;
  /** A raw body (multipart and the like); `headers` must carry its content type. */
  body?: Dispatcher.DispatchOptions['body'];
  headers?: Record<string, string>;
  accept?: string;
  signal?: AbortSignal;
  /** Whether the body may be sent twice (false for bodies read from a stream). Default true. */
  replayable?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** Why the request was ended by us, if it was: the caller aborted, or a time limit passed. */
  endedBy(): 'abort' | 'timeout' | undefined;
}

export const VERSION_HEADER = 'anthropic-version';
export const MESSAGES_API_VERSION = '2023-06-01';
const USER_AGENT = 'model-gateway-vscode/0.1.0';

/** Accepts a base URL with or without a trailing `/v1` or `/`; returns the origin-plus-prefix. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new GatewayError(`The base URL "${raw}" is not a valid URL (expected e.g. https://gateway.example.com).`, {
      type: 'configuration_error',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError(`The base URL must use http or https, not ${url.protocol}`, { type: 'configuration_error' });
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

const RETRYABLE_STATUS = new Set([429, 503]);

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
  return new ConnectionError(`Could not reach the gateway (${code ?? detail}). Check the base URL and your network.`, {
    cause: err,
  });
}

export class Transport {
  readonly baseUrl: string;
  private readonly dispatcher: Agent;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 2));
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connections: 32 });
  }

  /** Closes pooled connections. */
  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private authHeaders(kind: AuthKind): Record<string, string> {
    const need = (value: string | undefined, what: string, fix: string) => {
      if (!value) throw new MissingCredentialError(`No ${what} is set. ${fix}`, { type: 'configuration_error' });
      return value;
    };
    switch (kind) {
      case 'bearer':
        return { authorization: `Bearer ${need(this.options.apiKey, 'API key', 'Set the gateway API key first.')}` };
      case 'messages':
        return {
          'x-api-key': need(this.options.apiKey, 'API key', 'Set the gateway API key first.'),
          [VERSION_HEADER]: MESSAGES_API_VERSION,
        };
      case 'imagegen':
        return { 'api-key': need(this.options.apiKey, 'API key', 'Set the gateway API key first.') };
      case 'account': {
        const h: Record<string, string> = {
          authorization: `Bearer ${need(
            this.options.systemAccessToken,
            'system access token',
            'Set the system access token (account settings of the gateway console) first.',
          )}`,
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

  /** GET of an absolute URL (result files); no credential is ever attached. */
  sendUrl(url: string, opts: { accept?: string; signal?: AbortSignal } = {}): Promise<RawResponse> {
    if (!/^https?:\/\//.test(url)) throw new GatewayError(`Not an http(s) URL: ${url.slice(0, 100)}`, { type: 'invalid_response' });
    return this.send({ method: 'GET', path: url, auth: 'none', accept: opts.accept, signal: opts.signal });
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
    let body = spec.form ?? spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['content-type'] = 'application/json';
    }
    const url = this.url(spec);
    const what = `${spec.method} ${spec.path}`;
    const replayable = spec.replayable ?? true;

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
          method: spec.method,
          headers,
          body,
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
        const mapped = mapTransportError(err, endedBy, what);
        if (mapped instanceof AbortError || !replayable || attempt > this.maxRetries) throw mapped;
        const waitMs = this.backoffMs(attempt);
        this.options.onRetry?.({ attempt, waitMs, reason: mapped.message, method: spec.method, path: spec.path });
        await this.sleep(waitMs, spec.signal);
        continue;
      }

      if (res.statusCode < 400) {
        const cleanup = () => spec.signal?.removeEventListener('abort', onAbort);
        res.body.once('close', cleanup);
        return { status: res.statusCode, headers: res.headers, body: res.body, endedBy: () => endedBy };
      }

      let text: string;
      try {
        text = await res.body.text();
      } catch (err) {
        spec.signal?.removeEventListener('abort', onAbort);
        throw mapTransportError(err, endedBy, what);
      }
      spec.signal?.removeEventListener('abort', onAbort);
      const retryAfterMs = parseRetryAfter(res.headers);
      const error = errorFromResponse(res.statusCode, text, res.headers, retryAfterMs);
      if (this.shouldRetry(error, res.headers, retryAfterMs) && replayable && attempt <= this.maxRetries) {
        const waitMs = retryAfterMs ?? this.backoffMs(attempt);
        this.options.onRetry?.({ attempt, waitMs, reason: error.message, method: spec.method, path: spec.path });
        await this.sleep(waitMs, spec.signal);
        continue;
      }
      throw error;
    }
  }

  private shouldRetry(error: APIStatusError, headers: RawResponse['headers'], retryAfterMs: number | undefined): boolean {
    const hint = headers['x-should-retry'];
    if (hint === 'false') return false;
    if (hint === 'true') return true;
    if (!RETRYABLE_STATUS.has(error.status)) return false;
    return retryAfterMs === undefined || retryAfterMs <= this.maxRetryAfterMs;
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
    try {
      return { data: JSON.parse(text), headers: res.headers };
    } catch {
      throw new GatewayError(
        `The gateway answered ${spec.method} ${spec.path} with something that is not JSON: ${text.slice(0, 200)}`,
        { status: res.status, type: 'invalid_response' },
      );
    }
  }
}
