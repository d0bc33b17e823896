import * as l10n from '@vscode/l10n';
import { redactSecrets } from './redact';
import { rateLimitHint, type RateLimitHint } from './rateLimit';

/**
 * Typed errors for every way a gateway call can fail. Each carries a message a person can act on;
 * none carries a credential: servers do echo keys (`Incorrect API key provided: sk-…`), so every
 * message is cleaned of the registered secrets and of credential-shaped text when it is made.
 */

export interface GatewayErrorInit {
  status?: number;
  type?: string;
  code?: string;
  requestId?: string;
  cause?: unknown;
}

export class GatewayError extends Error {
  override readonly name: string = 'GatewayError';
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly requestId: string | undefined;
  /** For errors that end a stream: what had arrived (partial completion or message). */
  partial: unknown = undefined;

  constructor(message: string, init: GatewayErrorInit = {}) {
    super(redactSecrets(message), init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.requestId = init.requestId;
  }
}

/** A request refused before it went over the wire: names the field and the rule it breaks. */
export class ValidationError extends GatewayError {
  override readonly name: string = 'ValidationError';
  readonly issues: readonly { path: string; message: string }[];
  constructor(issues: readonly { path: string; message: string }[]) {
    const text = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
    super(l10n.t('Invalid request: {0}', text), { type: 'validation_error' });
    this.issues = issues;
  }
}

/** Any HTTP error status from the gateway. Subclasses exist for the statuses the spec names. */
export class APIStatusError extends GatewayError {
  override readonly name: string = 'APIStatusError';
  override readonly status: number;
  /** The server's own words, before we added advice. */
  readonly serverMessage: string;
  constructor(status: number, serverMessage: string, message: string, init: GatewayErrorInit = {}) {
    super(message, { ...init, status });
    this.status = status;
    this.serverMessage = redactSecrets(serverMessage);
  }
}

export class BadRequestError extends APIStatusError {
  override readonly name: string = 'BadRequestError';
}

/** A 400 because the prompt is longer than the model's context window (OpenAI's and Anthropic's wording). */
export class ContextLengthError extends BadRequestError {
  override readonly name: string = 'ContextLengthError';
}

const CONTEXT_EXCEEDED = /context_length_exceeded|maximum context length|prompt is too long|context window|too many tokens|reduce the length of the messages/i;

/** Why a key was refused, read from the server's words (one-api and new-api say which). */
export type KeyRefusal = 'exhausted' | 'expired' | 'disabled' | 'invalid';
export class AuthenticationError extends APIStatusError {
  override readonly name: string = 'AuthenticationError';
  readonly keyRefusal: KeyRefusal;
  constructor(status: number, serverMessage: string, message: string, keyRefusal: KeyRefusal, init: GatewayErrorInit = {}) {
    super(status, serverMessage, message, init);
    this.keyRefusal = keyRefusal;
  }
}

const KEY_EXHAUSTED = /额度已用尽|quota.{0,20}(exhausted|used up)|exhausted/i;
const KEY_EXPIRED = /已过期|expired/i;
const KEY_DISABLED = /状态不可用|disabled|被禁用/i;

/** The refusal a 401 describes, and the advice that fixes it. */
export function keyRefusalOf(serverMessage: string, code?: string): { reason: KeyRefusal; advice: string } {
  const said = `${serverMessage} ${code ?? ''}`;
  if (KEY_EXHAUSTED.test(said))
    return {
      reason: 'exhausted',
      advice: l10n.t("This API key's own quota is used up: raise the key's quota (Account view › API Keys › Edit) or use another key."),
    };
  if (KEY_EXPIRED.test(said))
    return { reason: 'expired', advice: l10n.t('This API key has expired: extend its expiry (Account view › API Keys › Edit) or set another key.') };
  if (KEY_DISABLED.test(said))
    return { reason: 'disabled', advice: l10n.t('This API key is disabled: enable it (Account view › API Keys) or set another key.') };
  return { reason: 'invalid', advice: l10n.t('The API key is missing, invalid or expired. Set a valid key.') };
}

export type PermissionCause = 'balance' | 'model' | 'ip' | 'role' | 'unknown';
export class PermissionDeniedError extends APIStatusError {
  override readonly name: string = 'PermissionDeniedError';
  /** Which of the spec's 403 causes the server's message points to. */
  readonly cause403: PermissionCause;
  constructor(status: number, serverMessage: string, message: string, cause403: PermissionCause, init: GatewayErrorInit = {}) {
    super(status, serverMessage, message, init);
    this.cause403 = cause403;
  }
}

export class NotFoundError extends APIStatusError {
  override readonly name: string = 'NotFoundError';
}

export class RateLimitError extends APIStatusError {
  override readonly name: string = 'RateLimitError';
  /** Milliseconds to wait: the server's `Retry-After`, else what its message says (a limiter's window). */
  readonly retryAfterMs: number | undefined;
  /** The gateway limiter's window when its message names it (new-api). */
  readonly limitWindow: RateLimitHint['window'];
  constructor(
    status: number,
    serverMessage: string,
    message: string,
    retryAfterMs: number | undefined,
    init: GatewayErrorInit & { limitWindow?: RateLimitHint['window'] } = {},
  ) {
    super(status, serverMessage, message, init);
    this.retryAfterMs = retryAfterMs;
    this.limitWindow = init.limitWindow;
  }
}

export class ServiceUnavailableError extends APIStatusError {
  override readonly name: string = 'ServiceUnavailableError';
}
export class InternalServerError extends APIStatusError {
  override readonly name: string = 'InternalServerError';
}

/** The account API's `{success:false, message}` answer (often with HTTP 200). */
export class AccountApiError extends GatewayError {
  override readonly name: string = 'AccountApiError';
}

/** A credential the call needs (API key, system access token) is not set; nothing was sent. */
export class MissingCredentialError extends GatewayError {
  override readonly name: string = 'MissingCredentialError';
}

/** No response: refused, reset or unreachable before any byte arrived. */
export class ConnectionError extends GatewayError {
  override readonly name: string = 'ConnectionError';
}

/** A proxy between us and the gateway refused or failed: 407, its own 502/403, or it can't be reached. */
export class ProxyError extends ConnectionError {
  override readonly name: string = 'ProxyError';
  constructor(
    message: string,
    /** The proxy's address (no credentials). */
    readonly proxy: string,
    /** The proxy's HTTP status, when it answered one. */
    readonly proxyStatus: number | undefined,
    init: GatewayErrorInit = {},
  ) {
    super(message, { type: 'proxy_error', ...init });
  }
}

export type TlsFailure = 'untrusted' | 'expired' | 'hostname' | 'handshake';
/** The TLS handshake failed: an issuer not trusted here, an expired certificate, another host's name. */
export class TlsError extends ConnectionError {
  override readonly name: string = 'TlsError';
  constructor(
    message: string,
    readonly reason: TlsFailure,
    init: GatewayErrorInit = {},
  ) {
    super(message, { type: 'tls_error', ...init });
  }
}

export class TimeoutError extends GatewayError {
  override readonly name: string = 'TimeoutError';
}

/** The caller aborted (its AbortSignal fired). */
export class AbortError extends GatewayError {
  override readonly name: string = 'AbortError';
}

/**
 * A stream that broke after it started: cut connection, malformed event, or an error object sent
 * inside the stream. `partial` holds what had arrived (a partial completion or message), so the
 * caller keeps the answer so far.
 */
export class StreamError extends GatewayError {
  override readonly name: string = 'StreamError';
  constructor(message: string, init: GatewayErrorInit & { partial?: unknown } = {}) {
    super(message, init);
    this.partial = init.partial;
  }
}

// --- mapping HTTP error answers ---

interface ParsedErrorBody {
  message: string;
  type?: string;
  code?: string;
  requestId?: string;
}

function asString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/**
 * Reads the error envelopes a gateway sends: `{error:{message,type,code}}` (chat-completions style),
 * `{type:"error",error:{type,message}}` (messages style), `{success:false,message}` (account API),
 * `{message}`, or plain text.
 */
export function parseErrorBody(text: string): ParsedErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: describeBody(text) };
  }
  if (json && typeof json === 'object') {
    const o = json as Record<string, unknown>;
    const err = o.error;
    const requestId = asString(o.request_id);
    if (err && typeof err === 'object') {
      const e = err as Record<string, unknown>;
      return { message: asString(e.message) ?? '', type: asString(e.type), code: asString(e.code) || undefined, requestId };
    }
    if (typeof err === 'string') return { message: err, requestId };
    if (typeof o.message === 'string') return { message: o.message, code: asString(o.code), requestId };
    // midjourney-proxy's refusals, as new-api relays them: `{description, type:"upstream_error", code: 4}`.
    if (typeof o.description === 'string') return { message: o.description.trim(), type: asString(o.type), code: asString(o.code), requestId };
  }
  return { message: typeof text === 'string' ? text.slice(0, 500) : '' };
}

const HTML = /^\s*(<!doctype html|<html|<head|<body|<\?xml|<center>|<h1>)/i;

/**
 * A body that is not JSON, shortened for a message. An HTML error page (from a proxy or a load
 * balancer in front of the gateway) becomes its title or heading, not raw markup.
 */
export function describeBody(text: string): string {
  if (HTML.test(text)) {
    const plain = (html: string | undefined) =>
      (html ?? '')
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
    const visible = text.replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, ' ');
    const title = plain(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1]) || plain(/<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(text)?.[1]) || plain(visible);
    return `an HTML page${title ? ` "${title.slice(0, 120)}"` : ''} (a proxy or web server in front of the gateway answered, not the gateway's API)`;
  }
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

const ENVELOPE_KEYS = new Set(['error', 'type', 'request_id', 'requestId', 'success', 'message', 'code']);

/** HTTP statuses the error `type`/`code` of a 200-with-error body stand for. */
function statusForErrorKind(type?: string, code?: string): number {
  const k = `${type ?? ''} ${code ?? ''}`.toLowerCase();
  const numeric = Number(code);
  if (Number.isInteger(numeric) && numeric >= 400 && numeric < 600) return numeric;
  if (/invalid_api_key|authentication|unauthori[sz]ed/.test(k)) return 401;
  if (/insufficient_(user_)?quota|permission|forbidden/.test(k)) return 403;
  if (/not_found/.test(k)) return 404;
  if (/rate_limit/.test(k)) return 429;
  if (/overloaded|unavailable/.test(k)) return 503;
  if (/server_error|api_error|upstream/.test(k)) return 500;
  return 400;
}

/**
 * An error envelope that came with a success status (`{error:{message}}`, `{type:"error"}`):
 * the typed error for the status its type names, or undefined when the body is a real answer.
 */
export function errorInSuccessBody(data: unknown, text: string, headers: Record<string, string | string[] | undefined>): APIStatusError | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const o = data as Record<string, unknown>;
  const err = o.error;
  const isEnvelope = (o.type === 'error' && !!err) || (err !== null && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string');
  // Only a bare envelope: a record that merely has an `error` field (a failed video task) is data.
  if (!isEnvelope || !Object.keys(o).every((k) => ENVELOPE_KEYS.has(k))) return undefined;
  const parsed = parseErrorBody(text);
  return errorFromResponse(statusForErrorKind(parsed.type, parsed.code), text, headers);
}

const BALANCE = /balance|quota|credit|余额|额度|top.?up|exhausted|用尽|insufficient (funds|balance|quota)/i;
const MODEL = /model|模型|channel|渠道/i;
const IP = /\bip\b|subnet|address|白名单|allow.?list/i;
const ROLE = /role|permission|权限|suspend|banned|封禁|disabled user|forbidden/i;

export function classify403(serverMessage: string): PermissionCause {
  if (BALANCE.test(serverMessage)) return 'balance';
  if (IP.test(serverMessage)) return 'ip';
  if (MODEL.test(serverMessage)) return 'model';
  if (ROLE.test(serverMessage)) return 'role';
  return 'unknown';
}

const advice403 = (cause: PermissionCause): string =>
  ({
    balance: l10n.t("The account balance or this key's quota is used up: top up the balance or raise the key's quota."),
    model: l10n.t('This key is not allowed to use this model: pick another model or allow it for the key.'),
    ip: l10n.t("Your IP address is outside the key's allowed subnet: change the key's subnet or use another key."),
    role: l10n.t("The account lacks the role for this action or is suspended: ask the gateway's administrator."),
    unknown: l10n.t(
      "Access denied. Likely causes: insufficient balance (most common), the key not allowed for this model, an IP outside the key's subnet, or an insufficient role.",
    ),
  })[cause];

/** Builds the typed error for an HTTP error status, with advice the UI can show as is. */
export function errorFromResponse(
  status: number,
  bodyText: string,
  headers: Record<string, string | string[] | undefined>,
  retryAfterMs?: number,
): APIStatusError {
  const parsed = parseErrorBody(bodyText);
  const headerId = headers['x-request-id'] ?? headers['request-id'] ?? headers['x-oneapi-request-id'];
  const requestId = parsed.requestId ?? (Array.isArray(headerId) ? headerId[0] : headerId);
  const init: GatewayErrorInit = { type: parsed.type, code: parsed.code, requestId };
  const server = parsed.message || `HTTP ${status}`;
  switch (status) {
    case 400:
      if (CONTEXT_EXCEEDED.test(`${parsed.code ?? ''} ${server}`)) {
        return new ContextLengthError(
          status,
          server,
          l10n.t(
            "The conversation is longer than the model's context window: start a new chat, condense it, or pick a model with a larger window (gateway said: {0})",
            server,
          ),
          init,
        );
      }
      return new BadRequestError(status, server, l10n.t('The gateway rejected the request: {0}', server), init);
    case 401: {
      const { reason, advice } = keyRefusalOf(server, parsed.code);
      return new AuthenticationError(status, server, l10n.t('{0} (gateway said: {1})', advice, server), reason, init);
    }
    case 403: {
      const cause = classify403(server);
      return new PermissionDeniedError(status, server, l10n.t('{0} (gateway said: {1})', advice403(cause), server), cause, init);
    }
    case 404:
      return new NotFoundError(status, server, l10n.t('Not found: {0}', server), init);
    case 429: {
      // No Retry-After (new-api's own limiter never sends one): the message may still say when.
      const hint = retryAfterMs === undefined ? rateLimitHint(server) : undefined;
      const waitMs = retryAfterMs ?? hint?.waitMs;
      const wait = waitMs !== undefined ? l10n.t('Retry in {0} s.', Math.ceil(waitMs / 1000)) : l10n.t('Retry in a moment.');
      if (hint?.window) {
        const { minutes, requests, countsFailures } = hint.window;
        const what = countsFailures
          ? l10n.t("The gateway's rate limit for your account is reached: at most {0} requests in {1} min, failed ones included.", requests, minutes)
          : l10n.t("The gateway's rate limit for your account is reached: at most {0} successful requests in {1} min.", requests, minutes);
        const message = l10n.t(
          "{0} {1} Send fewer requests at once (agents, completions, indexing), or ask the gateway's operator for a higher limit. (gateway said: {2})",
          what,
          wait,
          server,
        );
        return new RateLimitError(status, server, message, waitMs, { ...init, limitWindow: hint.window });
      }
      return new RateLimitError(status, server, l10n.t('Too many requests ({0}). {1}', server, wait), waitMs, init);
    }
    case 503:
      return new ServiceUnavailableError(
        status,
        server,
        l10n.t('The model is unavailable: check the model id (case matters) and your access to it, or retry later if the provider is limiting ({0}).', server),
        init,
      );
    default:
      if (status >= 500) return new InternalServerError(status, server, l10n.t('The gateway failed (HTTP {0}): {1}', status, server), init);
      return new APIStatusError(status, server, l10n.t('The gateway answered HTTP {0}: {1}', status, server), init);
  }
}

/** Maps an error object that arrived inside a stream (either envelope) to a StreamError. */
export function errorFromStreamPayload(payload: unknown, partial: unknown): StreamError {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const parsed = parseErrorBody(text);
  return new StreamError(l10n.t('The gateway reported an error mid-stream: {0}', parsed.message || l10n.t('unknown error')), {
    type: parsed.type,
    code: parsed.code,
    requestId: parsed.requestId,
    partial,
  });
}
