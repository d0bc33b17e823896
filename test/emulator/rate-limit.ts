/**
 * new-api's model request rate limit (`middleware/model-rate-limit.go`, the in-memory limiter of
 * `common/rate-limit.go`): per user, a sliding window of `minutes`; `total` requests at most
 * (failures included, counted as they arrive; 0 = no limit) and `success` successful ones (counted
 * when they succeed). Refusals are 429 with an OpenAI-shaped error, a Chinese message with the
 * request id, and no `Retry-After` or `X-RateLimit-*` header. one-api has no such limiter.
 */
import type { ServerResponse } from 'node:http';
import { gatewayRequestId } from './busy';
import type { Clock } from './clock';
import { sendJson } from './server';

/** The refusal of `ModelRequestRateLimitSuccessCount` (successful requests in the window). */
export const successLimitMessage = (minutes: number, count: number) => `您已达到请求数限制：${minutes}分钟内最多请求${count}次`;

/** The refusal of `ModelRequestRateLimitCount` (all requests in the window, failures included). */
export const totalLimitMessage = (minutes: number, count: number) =>
  `您已达到总请求数限制：${minutes}分钟内最多请求${count}次，包括失败次数，请检查您的请求是否正确`;

export interface ModelRateLimit {
  minutes: number;
  /** ModelRequestRateLimitCount: all requests in the window, failures included (0: none). */
  total: number;
  /** ModelRequestRateLimitSuccessCount: successful requests in the window. */
  success: number;
}

export class ModelRateLimiter {
  private readonly queues = new Map<string, number[]>();

  constructor(
    readonly limit: ModelRateLimit,
    private readonly clock: Clock,
  ) {}

  /** new-api's `InMemoryRateLimiter.Request`: records and allows, or refuses without recording. */
  private request(key: string, max: number, seconds: number): boolean {
    const now = Math.floor(this.clock.now() / 1000);
    const q = this.queues.get(key) ?? [];
    this.queues.set(key, q);
    if (q.length < max) {
      q.push(now);
      return true;
    }
    if (now - q[0] >= seconds) {
      q.shift();
      q.push(now);
      return true;
    }
    return false;
  }

  /** `CanRequest`: the same test without recording. */
  private canRequest(key: string, max: number, seconds: number): boolean {
    const q = this.queues.get(key) ?? [];
    if (q.length < max) return true;
    return Math.floor(this.clock.now() / 1000) - q[0] >= seconds;
  }

  /**
   * Runs the limiter for a user's relay request: answers the 429 itself and returns false when
   * refused; otherwise counts a success once the answer's status is under 400.
   */
  admit(userId: number, res: ServerResponse): boolean {
    const { minutes, total, success } = this.limit;
    const seconds = minutes * 60;
    if (total > 0 && !this.request(`MRRL${userId}`, total, seconds)) {
      refuse(res, totalLimitMessage(minutes, total));
      return false;
    }
    if (!this.canRequest(`MRRLS${userId}`, success, seconds)) {
      refuse(res, successLimitMessage(minutes, success));
      return false;
    }
    res.once('finish', () => {
      if (res.statusCode < 400) this.request(`MRRLS${userId}`, success, seconds);
    });
    return true;
  }
}

function refuse(res: ServerResponse, message: string): void {
  const requestId = gatewayRequestId('new-api');
  sendJson(res, 429, { error: { message: `${message} (request id: ${requestId})`, type: 'new_api_error', code: '' } }, { 'x-oneapi-request-id': requestId });
}
