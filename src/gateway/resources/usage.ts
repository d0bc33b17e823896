/**
 * Spend and usage, as one-api and new-api report them: the consume log (`/api/log/self`) and its
 * sum (`/api/log/self/stat`), usage buckets per model and time (new-api `/api/data/self`, hourly,
 * at most 30 days a call; one-api `/api/user/dashboard`, the last 7 days by day), prices (new-api
 * `/api/pricing`), and with an API key alone the OpenAI-style billing routes.
 */
import * as z from '../core/z';
import { GatewayError, NotFoundError } from '../core/errors';
import type { Transport } from '../core/transport';
import type { AccountTransport } from '../core/accountApi';
import type { RequestOptions } from '../core/requestOptions';
import { quotaToDollars } from '../../common/money';
import type { KeyBilling, ModelPrice, Period, UsageBucket, UsageLogEntry, UsageLogs } from '../../common/usageTypes';

export type * from '../../common/usageTypes';

/** new-api's ratio for a model whose price nobody configured: a stand-in, not a price. */
export const PLACEHOLDER_RATIO = 37.5;
/** A ratio of 1 is $0.002 per 1,000 tokens (one quota unit per token, 500,000 units a dollar). */
const DOLLARS_PER_MTOK_AT_RATIO_1 = 2;
/** new-api refuses `/api/data/self` spans over 30 days. */
const MAX_SPAN_SECONDS = 2_592_000;
const NEW_API_PAGE = 100;
/** An unlimited key's limit in the billing routes (both servers). */
const UNLIMITED_DOLLARS = 100_000_000;

const LogRaw = z.looseObject({
  created_at: z.number(),
  type: z.number().optional(),
  model_name: z.string().optional(),
  token_name: z.string().optional(),
  quota: z.number().optional(),
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  is_stream: z.boolean().optional(),
  other: z.unknown().optional(),
});
const PagedRaw = z.looseObject({ items: z.array(z.unknown()).nullable().optional(), total: z.number().optional(), page_size: z.number().optional() });
const BucketRaw = z.looseObject({
  model_name: z.string(),
  created_at: z.number(),
  count: z.number().optional(),
  quota: z.number().optional(),
  token_used: z.number().optional(),
});
const DashboardRaw = z.looseObject({
  Day: z.string(),
  ModelName: z.string(),
  RequestCount: z.number().optional(),
  Quota: z.number().optional(),
  PromptTokens: z.number().optional(),
  CompletionTokens: z.number().optional(),
});
const PricingRaw = z.looseObject({
  model_name: z.string(),
  quota_type: z.number().optional(),
  model_ratio: z.number().optional(),
  model_price: z.number().optional(),
  completion_ratio: z.number().optional(),
  cache_ratio: z.number().nullable().optional(),
  create_cache_ratio: z.number().nullable().optional(),
  supported_endpoint_types: z.array(z.string()).nullable().optional(),
});
const PricingEnvelope = z.looseObject({
  success: z.boolean().optional(),
  message: z.string().optional(),
  data: z.array(z.unknown()).nullable().optional(),
  group_ratio: z.record(z.string(), z.number()).optional(),
});
const SubscriptionRaw = z.looseObject({ hard_limit_usd: z.number(), access_until: z.number().optional() });
const UsageRaw = z.looseObject({ total_usage: z.number() });

export class Usage {
  constructor(
    private readonly api: AccountTransport,
    private readonly transport: Transport,
  ) {}

  /**
   * The consume log of a period, newest first, up to `maxRows` calls or `maxPages` requests (one-api's
   * pages hold 10: 50 pages are 500 calls). new-api pages 100 at a time
   * (`p` from 1); one-api 10 at a time (`p` from 0); `p=0` is the first page on both, and the
   * answer's shape says which server it is.
   */
  async logs(period: Period, opts: RequestOptions & { maxRows?: number; maxPages?: number } = {}): Promise<UsageLogs> {
    const maxRows = opts.maxRows ?? 2000;
    const maxPages = opts.maxPages ?? 50;
    let pages = 0;
    const items: UsageLogEntry[] = [];
    let total: number | undefined;
    for (let p = 0; ;) {
      const query = { p, page_size: NEW_API_PAGE, type: 2, start_timestamp: period.start, end_timestamp: period.end };
      const data = await this.api.call({ method: 'GET', path: '/api/log/self', query, signal: opts.signal }, 'read the usage log');
      let rows: unknown[];
      let next: number;
      if (Array.isArray(data)) {
        rows = data;
        next = p + 1;
      } else {
        const paged = PagedRaw.safeParse(data);
        if (!paged.success) throw new GatewayError("The account API's usage log is neither a list nor a page.", { type: 'invalid_response' });
        rows = paged.data.items ?? [];
        total = paged.data.total;
        next = Math.max(p, 1) + 1;
      }
      for (const r of rows) {
        const entry = logEntry(r);
        if (entry) items.push(entry);
      }
      if (items.length > maxRows) return { items: items.slice(0, maxRows), complete: false, total };
      const exhausted = rows.length === 0 || (total !== undefined && items.length >= total) || (Array.isArray(data) && rows.length < 10);
      if (exhausted) return { items, complete: true, total };
      if (items.length === maxRows || ++pages >= maxPages) return { items, complete: false, total };
      p = next;
    }
  }

  /** Quota spent in a period (`/api/log/self/stat`), in dollars. */
  async spent(period: Period, opts: RequestOptions = {}): Promise<number> {
    const data = await this.api.call(
      { method: 'GET', path: '/api/log/self/stat', query: { type: 2, start_timestamp: period.start, end_timestamp: period.end }, signal: opts.signal },
      'sum the usage log',
    );
    const r = z.looseObject({ quota: z.number() }).safeParse(data);
    if (!r.success) throw new GatewayError("The account API's usage sum has no quota.", { type: 'invalid_response' });
    return quotaToDollars(r.data.quota);
  }

  /**
   * Usage per model and time bucket: new-api's hourly buckets (asked 30 days at a time), else
   * one-api's daily dashboard (the last 7 days only); undefined when the gateway has neither.
   * new-api fills its buckets every few minutes and only with data export on: an empty answer is
   * "no data", which callers must not show as zero spend.
   */
  async buckets(period: Period, opts: RequestOptions = {}): Promise<{ buckets: UsageBucket[]; source: 'hourly' | 'daily-7' } | undefined> {
    try {
      const buckets: UsageBucket[] = [];
      for (let from = period.start; from <= period.end; from += MAX_SPAN_SECONDS + 1) {
        const to = Math.min(period.end, from + MAX_SPAN_SECONDS);
        const data = await this.api.call(
          { method: 'GET', path: '/api/data/self', query: { start_timestamp: from, end_timestamp: to }, signal: opts.signal },
          'read usage buckets',
        );
        for (const raw of Array.isArray(data) ? data : []) {
          const b = BucketRaw.safeParse(raw);
          if (!b.success) continue;
          const quota = b.data.quota ?? 0;
          buckets.push({
            at: b.data.created_at,
            model: b.data.model_name,
            requests: b.data.count ?? 0,
            quota,
            dollars: quotaToDollars(quota),
            tokens: b.data.token_used ?? 0,
          });
        }
      }
      return { buckets, source: 'hourly' };
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    try {
      const data = await this.api.call({ method: 'GET', path: '/api/user/dashboard', signal: opts.signal }, 'read the usage dashboard');
      const buckets: UsageBucket[] = [];
      for (const raw of Array.isArray(data) ? data : []) {
        const d = DashboardRaw.safeParse(raw);
        if (!d.success) continue;
        const at = Date.parse(`${d.data.Day}T00:00:00Z`) / 1000;
        if (!Number.isFinite(at) || at < period.start - 86_400 || at > period.end) continue;
        const quota = d.data.Quota ?? 0;
        buckets.push({
          at,
          model: d.data.ModelName,
          requests: d.data.RequestCount ?? 0,
          quota,
          dollars: quotaToDollars(quota),
          tokens: (d.data.PromptTokens ?? 0) + (d.data.CompletionTokens ?? 0),
        });
      }
      return { buckets, source: 'daily-7' };
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /**
   * Prices from new-api's `/api/pricing` (public; the user's group ratio applied when `group` is
   * given); undefined when the gateway has no such route (one-api). A model on the placeholder
   * ratio is `unknown`, never priced.
   */
  async pricing(opts: RequestOptions & { group?: string } = {}): Promise<ModelPrice[] | undefined> {
    let data: unknown;
    try {
      ({ data } = await this.transport.json({ method: 'GET', path: '/api/pricing', auth: 'none', signal: opts.signal }));
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
    const env = PricingEnvelope.safeParse(data);
    if (!env.success || env.data.success === false) return undefined;
    const groupRatio = (opts.group !== undefined ? env.data.group_ratio?.[opts.group] : undefined) ?? 1;
    const prices: ModelPrice[] = [];
    for (const raw of env.data.data ?? []) {
      const p = PricingRaw.safeParse(raw);
      if (!p.success) continue;
      const price = priceOf(p.data, groupRatio);
      if (p.data.supported_endpoint_types?.length) price.endpoints = p.data.supported_endpoint_types;
      prices.push(price);
    }
    return prices;
  }

  /** The API key's own limit and spend (`/v1/dashboard/billing/subscription` and `/usage`). */
  async keyBilling(opts: RequestOptions = {}): Promise<KeyBilling> {
    const [sub, use] = await Promise.all([
      this.billing('/v1/dashboard/billing/subscription', SubscriptionRaw, opts),
      this.billing('/v1/dashboard/billing/usage', UsageRaw, opts),
    ]);
    const usedDollars = use.total_usage / 100;
    const unlimited = sub.hard_limit_usd >= UNLIMITED_DOLLARS;
    const accessUntil = sub.access_until && sub.access_until > 0 ? sub.access_until : undefined;
    if (unlimited) return { unlimited, usedDollars, accessUntil };
    return { unlimited, usedDollars, limitDollars: sub.hard_limit_usd, remainingDollars: Math.max(0, sub.hard_limit_usd - usedDollars), accessUntil };
  }

  /** Both servers answer billing failures with HTTP 200 and an `{error}` body. */
  private async billing<T extends z.ZodType>(path: string, schema: T, opts: RequestOptions): Promise<z.output<T>> {
    const { data } = await this.transport.json({ method: 'GET', path, auth: 'bearer', signal: opts.signal });
    const error = (data as { error?: { message?: unknown } } | null)?.error;
    if (error)
      throw new GatewayError(`The gateway could not report the key's billing: ${typeof error.message === 'string' ? error.message : 'no reason given'}`, {
        type: 'billing_error',
      });
    const r = schema.safeParse(data);
    if (!r.success) throw new GatewayError(`The gateway's answer to ${path} is not a billing record.`, { type: 'invalid_response' });
    return r.data;
  }
}

export function logEntry(raw: unknown): UsageLogEntry | undefined {
  const r = LogRaw.safeParse(raw);
  if (!r.success || (r.data.type !== undefined && r.data.type !== 2)) return undefined;
  const other = otherOf(r.data.other);
  const quota = r.data.quota ?? 0;
  return {
    at: r.data.created_at,
    model: r.data.model_name ?? '',
    keyName: r.data.token_name ?? '',
    quota,
    dollars: quotaToDollars(quota),
    promptTokens: r.data.prompt_tokens ?? 0,
    completionTokens: r.data.completion_tokens ?? 0,
    cacheRead: count(other.cache_tokens),
    cacheWrite: Math.max(count(other.cache_creation_tokens), count(other.cache_creation_tokens_5m) + count(other.cache_creation_tokens_1h)),
    stream: r.data.is_stream ?? false,
  };
}

/** new-api keeps `other` as a JSON string (some builds list it as an object). */
function otherOf(v: unknown): Record<string, unknown> {
  if (v && typeof v === 'object') return v as Record<string, unknown>;
  if (typeof v !== 'string' || !v.startsWith('{')) return {};
  try {
    const parsed: unknown = JSON.parse(v);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function count(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

function priceOf(p: z.output<typeof PricingRaw>, groupRatio: number): ModelPrice {
  if (p.quota_type === 1) {
    const perRequest = (p.model_price ?? 0) * groupRatio;
    return { model: p.model_name, kind: 'request', perRequest, unknown: !(perRequest > 0) };
  }
  const ratio = p.model_ratio ?? 0;
  if (ratio === PLACEHOLDER_RATIO || !(ratio > 0)) return { model: p.model_name, kind: 'tokens', unknown: true };
  const input = ratio * groupRatio * DOLLARS_PER_MTOK_AT_RATIO_1;
  return {
    model: p.model_name,
    kind: 'tokens',
    inputPerMTok: input,
    outputPerMTok: input * (p.completion_ratio ?? 1),
    cacheReadPerMTok: p.cache_ratio != null ? input * p.cache_ratio : undefined,
    cacheWritePerMTok: p.create_cache_ratio != null ? input * p.create_cache_ratio : undefined,
    unknown: false,
  };
}
