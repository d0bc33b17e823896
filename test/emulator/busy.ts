/**
 * A busy model, answered as the real servers answer it (read from QuantumNous/new-api and
 * songquanpeng/one-api). Where each answer comes from:
 *
 * - new-api's own refusals before the relay (the model rate limit, the distributor) go through
 *   `abortWithOpenAiMessage` (`middleware/utils.go`): `{"error":{"message":"… (request id: …)",
 *   "type":"new_api_error","code":…}}`, no `param`, on every route (`/v1/messages` and `/v1beta`
 *   too: these middlewares run before any relay format is chosen).
 * - new-api's model rate limit (`middleware/model-rate-limit.go`): 429, `您已达到请求数限制：
 *   {minutes}分钟内最多请求{count}次`, code `""`, no `Retry-After` (`rate-limit.ts` holds it).
 * - new-api's distributor finding no channel (`middleware/distributor.go` →
 *   `i18n.MsgDistributorNoAvailableChannel`, code `types.ErrorCodeModelNotFound`): 503, the text
 *   of `i18n/locales/en.yaml` (`No available channel for model {{.Model}} under group {{.Group}}
 *   (distributor)`), the default language, or `zh-CN.yaml` (`分组 {{.Group}} 下模型 {{.Model}}
 *   无可用渠道（distributor）`) when `Accept-Language` asks for Chinese (`i18n/i18n.go`).
 * - An upstream's error relayed by new-api: `service/error.go` `RelayErrorHandler` reads the
 *   upstream's `error` object as an `OpenAIError` (`types.WithOpenAIError`, status kept), and
 *   `controller/relay.go` writes it per relay format: `{"error": ToOpenAIError()}` (the upstream's
 *   object as it was: message, type, `param` "", code; the request id added by `SetMessage` does
 *   not reach it) or, on `/v1/messages`, `{"type":"error","error": ToClaudeError()}` whose type is
 *   `fmt.Sprintf("%v", code)`, so `"<nil>"` for an upstream without a code (Anthropic's), and
 *   whose message carries the request id. No upstream header is copied onto the answer.
 * - one-api: one envelope for everything, `{"error": …}`. Its distributor (`middleware/
 *   distributor.go`, `abortWithMessage` in `middleware/utils.go`): 503, `当前分组 {group} 下对于模型
 *   {model} 无可用渠道 (request id: …)`, `type: "one_api_error"`, no code or param. It has no rate
 *   limit on the relay (`GlobalAPIRateLimit` guards `/api` only), so a busy model's 429 is the
 *   upstream's, relayed after the retries by `controller/relay.go`, which rewrites a 429's message
 *   to `当前分组上游负载已饱和，请稍后再试` and adds the request id; other statuses (529) keep the
 *   upstream's message (`relay/controller/error.go` `RelayErrorHandler`: `{message, type, param,
 *   code}`). one-api has no `/v1/responses`, `/v1beta` (or, in its router, `/v1/messages`) relay:
 *   on the first two the route's own 404 answers; `/v1/messages` gets the same `{"error": …}`.
 *
 * Both servers name the request in an `X-Oneapi-Request-Id` header (`middleware/request-id.go`).
 */
import type { ServerResponse } from 'node:http';
import { randomInt } from 'node:crypto';
import type { BusyFault } from './faults';
import type { ServerProfile } from './profiles';
import { sendJson } from './server';
import { successLimitMessage } from './rate-limit';

/** `common.GetTimeString()` (date, time and the nanoseconds) and 8 random characters, as both servers make it. */
export function gatewayRequestId(profile: ServerProfile): string {
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  const nanos = String(now.getMilliseconds() * 1_000_000 + randomInt(1_000_000));
  // one-api: `random.GetRandomNumberString(8)`; new-api: `common.GetRandomString(8)` (letters and digits).
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const tail = Array.from({ length: 8 }, () => (profile === 'one-api' ? String(randomInt(10)) : letters[randomInt(letters.length)])).join('');
  return `${time}${nanos}${tail}`;
}

const withId = (message: string, id: string) => `${message} (request id: ${id})`;

/** Which upstream stands behind a model: Anthropic's for the Claude stand-ins, OpenAI's for the rest. */
function upstreamOf(model: string): 'anthropic' | 'openai' {
  return model.startsWith('claude') ? 'anthropic' : 'openai';
}

/** An upstream's error object as the gateways read it (`OpenAIError`: message, type, param, code). */
interface UpstreamError {
  message: string;
  type: string;
  code: string | null;
}

/** The upstream's 429 (OpenAI's and Anthropic's own bodies; Anthropic's has no code). */
function upstream429(model: string, message?: string): UpstreamError {
  return upstreamOf(model) === 'anthropic'
    ? { message: message ?? 'Number of concurrent connections has exceeded your rate limit. Please try again later.', type: 'rate_limit_error', code: null }
    : { message: message ?? `Rate limit reached for requests`, type: 'requests', code: 'rate_limit_exceeded' };
}

/** Anthropic's 529: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`. */
function upstream529(message?: string): UpstreamError {
  return { message: message ?? 'Overloaded', type: 'overloaded_error', code: null };
}

export interface BusyRequest {
  res: ServerResponse;
  profile: ServerProfile;
  /** The route's format: `/v1/messages` is `claude`, the others `openai`. */
  format: 'openai' | 'claude';
  model: string;
  acceptLanguage: string;
}

/** The answer a busy model gets: status, body and headers. */
export function busyAnswer(f: BusyFault, r: Omit<BusyRequest, 'res'>): { status: number; body: unknown; headers: Record<string, string> } {
  const id = gatewayRequestId(r.profile);
  const headers: Record<string, string> = { 'x-oneapi-request-id': id };
  if (f.reason === 'rate-limit' && f.retryAfter !== undefined) headers['retry-after'] = String(f.retryAfter);
  const group = f.group ?? 'default';

  if (r.profile === 'one-api') {
    switch (f.reason) {
      case 'no-channel':
        return { status: 503, body: { error: { message: withId(`当前分组 ${group} 下对于模型 ${r.model} 无可用渠道`, id), type: 'one_api_error' } }, headers };
      case 'rate-limit': {
        const u = upstream429(r.model, f.message);
        return { status: 429, body: { error: { message: withId('当前分组上游负载已饱和，请稍后再试', id), type: u.type, param: '', code: u.code } }, headers };
      }
      case 'overloaded': {
        const u = upstream529(f.message);
        return { status: 529, body: { error: { message: withId(u.message, id), type: u.type, param: '', code: u.code } }, headers };
      }
    }
  }

  // new-api
  const own = (status: number, message: string, code: string) => ({
    status,
    body: { error: { message: withId(message, id), type: 'new_api_error', code } },
    headers,
  });
  const relayed = (status: number, u: UpstreamError) => ({
    status,
    body:
      r.format === 'claude'
        ? { type: 'error', error: { type: u.code === null ? '<nil>' : u.code, message: withId(u.message, id) } }
        : { error: { message: u.message, type: u.type, param: '', code: u.code } },
    headers,
  });
  switch (f.reason) {
    case 'no-channel':
      return own(
        503,
        /^zh/i.test(r.acceptLanguage.trim())
          ? `分组 ${group} 下模型 ${r.model} 无可用渠道（distributor）`
          : `No available channel for model ${r.model} under group ${group} (distributor)`,
        'model_not_found',
      );
    case 'rate-limit':
      // Its own limiter sends no Retry-After; with one, the 429 is an upstream's, relayed.
      return f.retryAfter === undefined ? own(429, successLimitMessage(f.minutes ?? 1, f.count ?? 3), '') : relayed(429, upstream429(r.model, f.message));
    case 'overloaded':
      return relayed(529, upstream529(f.message));
  }
}

/** Answers a busy model's request (before any byte of it went out). */
export function sendBusy(f: BusyFault, r: BusyRequest): void {
  const a = busyAnswer(f, r);
  sendJson(r.res, a.status, a.body, a.headers);
}

/**
 * Rules from `MODEL_GATEWAY_EMULATOR_BUSY` (`npm start`, `npm run emulator`): comma-separated
 * `model=what`, `what` one of `rate-limit[:retryAfterSeconds]`, `no-channel`, `overloaded`,
 * `stall[:afterEvents]`; each lasts until cleared. E.g. `claude-sonnet-emu=no-channel,gpt-4o=stall:2`.
 */
export function busyRulesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { model: string; times: number; fault: BusyFault | { kind: 'stall'; afterEvents: number } }[] {
  const text = env.MODEL_GATEWAY_EMULATOR_BUSY?.trim();
  if (!text) return [];
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([^=\s]+)\s*=\s*(rate-limit|no-channel|overloaded|stall)(?::(\d+))?$/.exec(entry);
      if (!m) throw new Error(`MODEL_GATEWAY_EMULATOR_BUSY: "${entry}" is not model=rate-limit[:seconds]|no-channel|overloaded|stall[:events]`);
      const [, model, what, arg] = m;
      if (what === 'stall') return { model, times: Infinity, fault: { kind: 'stall' as const, afterEvents: Number(arg ?? 0) } };
      if (arg !== undefined && what !== 'rate-limit') throw new Error(`MODEL_GATEWAY_EMULATOR_BUSY: "${entry}": only rate-limit and stall take a number`);
      const fault: BusyFault = { kind: 'busy', reason: what as BusyFault['reason'], ...(arg !== undefined ? { retryAfter: Number(arg) } : {}) };
      return { model, times: Infinity, fault };
    });
}
