/**
 * The account's wallet beyond its balance, with the access token: redemption codes
 * (`POST /api/user/topup`, one-api and new-api), the daily check-in (`/api/user/checkin`, new-api,
 * only where the operator turned it on) and subscription plans (`/api/subscription/plans`,
 * `/self`, new-api). Each route a gateway lacks answers 404: the methods say `undefined` and the
 * client does not ask again.
 */
import * as l10n from '@vscode/l10n';
import * as z from '../core/z';
import type { AccountTransport } from '../core/accountApi';
import { AccountApiError, GatewayError, NotFoundError } from '../core/errors';
import type { RequestOptions } from '../core/requestOptions';
import { quotaToDollars } from '../../common/money';

export interface CheckinStatus {
  /** Off where the operator has not turned check-in on (the gateway says so). */
  enabled: boolean;
  checkedInToday: boolean;
  minDollars?: number;
  maxDollars?: number;
  /** All check-ins so far, in dollars. */
  totalDollars?: number;
  /** new-api's one-time nonce, sent back with the check-in where the server hands one out. */
  nonce?: string;
}

export interface SubscriptionPlan {
  id: number;
  title: string;
  subtitle: string;
  price: number;
  currency: string;
  /** e.g. 1 month. */
  duration: { unit: string; value: number };
  /** Quota of the plan in dollars; undefined for unlimited (0 on the server). */
  includedDollars?: number;
}

export interface ActiveSubscription {
  planId: number;
  /** Unix seconds. */
  endsAt: number;
  usedDollars: number;
  /** Undefined for unlimited. */
  totalDollars?: number;
}

const CheckinRaw = z.looseObject({
  enabled: z.boolean().optional(),
  min_quota: z.number().optional(),
  max_quota: z.number().optional(),
  checkin_nonce: z.string().optional(),
  stats: z.looseObject({ checked_in_today: z.boolean().optional(), total_quota: z.number().optional() }).nullable().optional(),
});
const PlanRaw = z.looseObject({
  plan: z.looseObject({
    id: z.number(),
    title: z.string(),
    subtitle: z.string().optional(),
    price_amount: z.number().optional(),
    currency: z.string().optional(),
    duration_unit: z.string().optional(),
    duration_value: z.number().optional(),
    total_amount: z.number().optional(),
  }),
});
const SubscriptionRaw = z.looseObject({
  subscription: z
    .looseObject({
      plan_id: z.number(),
      end_time: z.number(),
      amount_total: z.number().optional(),
      amount_used: z.number().optional(),
      status: z.string().optional(),
    })
    .nullable(),
});

/** new-api's refusal when the operator has not turned check-in on. */
const CHECKIN_OFF = /签到功能未启用|check-?in is (not enabled|disabled)/i;

export class Wallet {
  private readonly missing = new Set<string>();

  constructor(private readonly api: AccountTransport) {}

  /** Redeems a code; returns what it added. A wrong or used code is the gateway's own refusal. */
  async redeem(code: string, opts: RequestOptions = {}): Promise<{ quota: number; dollars: number }> {
    const key = code.trim();
    if (!key) throw new GatewayError(l10n.t('Enter a redemption code.'), { type: 'validation_error' });
    if (key.length > 64)
      throw new GatewayError(l10n.t('A redemption code has at most 64 characters (this one has {0}).', key.length), { type: 'validation_error' });
    const data = await this.api.call({ method: 'POST', path: '/api/user/topup', json: { key }, signal: opts.signal }, 'redeem the code');
    const quota = typeof data === 'number' ? data : Number(data);
    if (!Number.isFinite(quota)) throw new GatewayError("The gateway's answer to a redemption has no amount.", { type: 'invalid_response' });
    return { quota, dollars: quotaToDollars(quota) };
  }

  /** The check-in status; undefined where the gateway has no check-in at all (one-api, older new-api). */
  async checkinStatus(opts: RequestOptions = {}): Promise<CheckinStatus | undefined> {
    const data = await this.optional('/api/user/checkin', opts, (err) =>
      err instanceof AccountApiError && CHECKIN_OFF.test(err.message) ? { enabled: false, checkedInToday: false } : undefined,
    );
    if (data === undefined || isCheckinStatus(data)) return data;
    const r = CheckinRaw.safeParse(data);
    if (!r.success) throw new GatewayError("The gateway's check-in status has an unknown shape.", { type: 'invalid_response' });
    const c = r.data;
    return {
      enabled: c.enabled ?? true,
      checkedInToday: c.stats?.checked_in_today ?? false,
      minDollars: c.min_quota !== undefined ? quotaToDollars(c.min_quota) : undefined,
      maxDollars: c.max_quota !== undefined ? quotaToDollars(c.max_quota) : undefined,
      totalDollars: c.stats?.total_quota !== undefined ? quotaToDollars(c.stats.total_quota) : undefined,
      nonce: c.checkin_nonce,
    };
  }

  /** Checks in for today; returns what it added. Already checked in: the gateway's refusal. */
  async checkin(nonce?: string, opts: RequestOptions = {}): Promise<{ dollars: number; day?: string }> {
    const data = await this.api.call({ method: 'POST', path: '/api/user/checkin', json: nonce ? { nonce } : {}, signal: opts.signal }, 'check in');
    const r = z.looseObject({ quota_awarded: z.number(), checkin_date: z.string().optional() }).safeParse(data);
    if (!r.success) throw new GatewayError("The gateway's answer to a check-in has no amount.", { type: 'invalid_response' });
    return { dollars: quotaToDollars(r.data.quota_awarded), day: r.data.checkin_date };
  }

  /** Plans on offer; undefined where the gateway has no subscriptions. */
  async plans(opts: RequestOptions = {}): Promise<SubscriptionPlan[] | undefined> {
    const data = await this.optional('/api/subscription/plans', opts);
    if (data === undefined) return undefined;
    const plans: SubscriptionPlan[] = [];
    for (const raw of Array.isArray(data) ? data : []) {
      const r = PlanRaw.safeParse(raw);
      if (!r.success) continue;
      const p = r.data.plan;
      plans.push({
        id: p.id,
        title: p.title,
        subtitle: p.subtitle ?? '',
        price: p.price_amount ?? 0,
        currency: p.currency ?? 'USD',
        duration: { unit: p.duration_unit ?? 'month', value: p.duration_value ?? 1 },
        includedDollars: p.total_amount ? quotaToDollars(p.total_amount) : undefined,
      });
    }
    return plans;
  }

  /** The account's active subscriptions; undefined where the gateway has none. */
  async subscriptions(opts: RequestOptions = {}): Promise<ActiveSubscription[] | undefined> {
    const data = await this.optional('/api/subscription/self', opts);
    if (data === undefined) return undefined;
    const parsed = z.looseObject({ subscriptions: z.array(z.unknown()).nullable().optional() }).safeParse(data);
    const list = parsed.success ? (parsed.data.subscriptions ?? []) : [];
    const out: ActiveSubscription[] = [];
    for (const raw of list) {
      const r = SubscriptionRaw.safeParse(raw);
      const s = r.success ? r.data.subscription : null;
      if (!s || (s.status && s.status !== 'active')) continue;
      out.push({
        planId: s.plan_id,
        endsAt: s.end_time,
        usedDollars: quotaToDollars(s.amount_used ?? 0),
        totalDollars: s.amount_total ? quotaToDollars(s.amount_total) : undefined,
      });
    }
    return out;
  }

  /** A GET the gateway may lack: undefined after a 404 (and from then on), or what `refusal` makes of a refusal. */
  private async optional<T>(path: string, opts: RequestOptions, refusal?: (err: unknown) => T | undefined): Promise<unknown> {
    if (this.missing.has(path)) return undefined;
    try {
      return await this.api.call({ method: 'GET', path, signal: opts.signal }, `read ${path}`);
    } catch (err) {
      if (err instanceof NotFoundError) {
        this.missing.add(path);
        return undefined;
      }
      const instead = refusal?.(err);
      if (instead !== undefined) return instead;
      throw err;
    }
  }
}

function isCheckinStatus(v: unknown): v is CheckinStatus {
  return typeof v === 'object' && v !== null && 'checkedInToday' in v;
}
