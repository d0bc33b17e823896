/**
 * What an API key alone may read about itself, without the account's access token:
 * new-api's `GET /api/usage/token` (the key's name, what it was given, used and has left, its
 * expiry and model limits; `{code:true, message:"ok", data}`) and `GET /api/log/token` (its newest
 * calls, at most the server's `MaxRecentItems`: 1000 by default; `{success, message, data}`), both
 * behind `TokenAuthReadOnly` (an expired or disabled key may still read them). Where a gateway
 * has neither (one-api, older new-api) the OpenAI-style billing routes give the totals; a 404 turns
 * a route off for the client's life, quietly.
 */
import * as z from '../core/z';
import * as l10n from '@vscode/l10n';
import { AccountApiError, GatewayError, NotFoundError } from '../core/errors';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { quotaToDollars } from '../../common/money';
import type { KeyBilling, UsageLogs } from '../../common/usageTypes';
import { logEntry, type Usage } from './usage';

/** The key's own figures, and where they came from. */
export interface KeyStatus extends KeyBilling {
  /** The key's name (new-api's usage route only). */
  name?: string;
  /** Models the key is limited to, when the limit is on. */
  modelLimits?: string[];
  source: 'usage-token' | 'billing';
}

const TokenUsageRaw = z.looseObject({
  name: z.string().optional(),
  total_granted: z.number().optional(),
  total_used: z.number(),
  total_available: z.number().optional(),
  unlimited_quota: z.boolean().optional(),
  model_limits: z.record(z.string(), z.unknown()).nullable().optional(),
  model_limits_enabled: z.boolean().optional(),
  expires_at: z.number().optional(),
});
const Envelope = z.looseObject({ success: z.boolean().optional(), code: z.unknown().optional(), message: z.string().optional(), data: z.unknown().optional() });

export class KeyUsage {
  /** Routes this gateway answered 404: not asked again. */
  private readonly missing = new Set<string>();

  constructor(
    private readonly transport: Transport,
    private readonly usage: Usage,
  ) {}

  /** Whether the gateway has turned out to lack a route (after a 404). */
  lacks(path: '/api/usage/token' | '/api/log/token'): boolean {
    return this.missing.has(path);
  }

  /** The key's figures: new-api's usage route, else the billing routes. */
  async status(opts: RequestOptions = {}): Promise<KeyStatus> {
    const data = await this.keyCall('/api/usage/token', opts);
    if (data === undefined) return { ...(await this.usage.keyBilling(opts)), source: 'billing' };
    const r = TokenUsageRaw.safeParse(data);
    if (!r.success) throw new GatewayError("The gateway's key usage (/api/usage/token) has no figures.", { type: 'invalid_response' });
    const u = r.data;
    const usedDollars = quotaToDollars(u.total_used);
    const accessUntil = u.expires_at && u.expires_at > 0 ? u.expires_at : undefined;
    const limits = u.model_limits_enabled && u.model_limits ? Object.keys(u.model_limits).sort() : undefined;
    const base = { name: u.name || undefined, modelLimits: limits?.length ? limits : undefined, source: 'usage-token' as const, usedDollars, accessUntil };
    if (u.unlimited_quota) return { ...base, unlimited: true };
    const remaining = quotaToDollars(u.total_available ?? 0);
    return {
      ...base,
      unlimited: false,
      remainingDollars: remaining,
      limitDollars: u.total_granted !== undefined ? quotaToDollars(u.total_granted) : remaining + usedDollars,
    };
  }

  /** The key's newest calls (consume rows only), newest first; undefined where the gateway has no such route. */
  async logs(opts: RequestOptions = {}): Promise<UsageLogs | undefined> {
    const data = await this.keyCall('/api/log/token', opts);
    if (data === undefined) return undefined;
    if (!Array.isArray(data)) throw new GatewayError("The gateway's key log (/api/log/token) is not a list.", { type: 'invalid_response' });
    const items = data
      .map(logEntry)
      .filter((e) => e !== undefined)
      .sort((a, b) => b.at - a.at);
    // The server sends its newest `MaxRecentItems` rows (1000 by default) and no total.
    return { items, complete: data.length < MAX_RECENT_ITEMS };
  }

  /** A key-authenticated call in either envelope; undefined when the gateway lacks the route. */
  private async keyCall(path: '/api/usage/token' | '/api/log/token', opts: RequestOptions): Promise<unknown> {
    if (this.missing.has(path)) return undefined;
    let data: unknown;
    try {
      ({ data } = await this.transport.json({ method: 'GET', path, auth: 'bearer', signal: opts.signal }));
    } catch (err) {
      if (err instanceof NotFoundError) {
        this.missing.add(path);
        return undefined;
      }
      throw err;
    }
    const env = Envelope.safeParse(data);
    if (!env.success) throw new GatewayError(`The gateway's answer to ${path} is not an envelope.`, { type: 'invalid_response' });
    // `/api/usage/token` says `code: true`; `/api/log/token` says `success: true`.
    if (env.data.success === false || env.data.code === false) {
      const said = env.data.message || 'refused';
      throw new AccountApiError(l10n.t("The gateway refused to show this key's usage: {0}", said), { type: 'key_usage_refused' });
    }
    return env.data.data;
  }
}

/** new-api's `common.MaxRecentItems` default: `/api/log/token` sends at most this many rows. */
export const MAX_RECENT_ITEMS = 1000;
