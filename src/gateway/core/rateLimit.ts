/**
 * What a 429 without `Retry-After` says about when to try again, read from its message.
 *
 * new-api's own limiter (`middleware/model-rate-limit.go`) answers 429 with an OpenAI-shaped
 * error, a Chinese message and no `Retry-After` or `X-RateLimit-*` header:
 * "您已达到请求数限制：1分钟内最多请求3次" (successful requests) or
 * "您已达到总请求数限制：1分钟内最多请求10次，包括失败次数，请检查您的请求是否正确" (all requests,
 * failures included: each early retry spends the budget again). Its window is sliding, so the
 * whole window is the wait that surely lets the next request through. Upstream providers relayed
 * as they are say "try again in 20s" / "in 350ms".
 */
export interface RateLimitHint {
  /** How long to wait before the next attempt can pass. */
  waitMs: number;
  /** The limiter's window and count when the message names them (new-api). */
  window?: { minutes: number; requests: number; countsFailures: boolean };
}

const NEW_API_WINDOW = /(\d+)\s*分钟内最多请求\s*(\d+)\s*次/;
const TRY_AGAIN = /try again in\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)\b/i;

export function rateLimitHint(serverMessage: string): RateLimitHint | undefined {
  const w = NEW_API_WINDOW.exec(serverMessage);
  if (w) {
    const minutes = Number(w[1]);
    const requests = Number(w[2]);
    if (minutes > 0) return { waitMs: minutes * 60_000, window: { minutes, requests, countsFailures: /包括失败次数|总请求数/.test(serverMessage) } };
  }
  const t = TRY_AGAIN.exec(serverMessage);
  if (t) {
    const n = Number(t[1]);
    const unit = t[2].toLowerCase();
    const ms = unit.startsWith('ms') || unit.startsWith('milli') ? n : unit.startsWith('m') ? n * 60_000 : n * 1000;
    if (Number.isFinite(ms) && ms >= 0) return { waitMs: Math.ceil(ms) };
  }
  return undefined;
}
