/**
 * Usage and spend as the profile's server reports it, from the store's consume log (so every
 * figure adds up to the balance): the request log and its sum, the usage buckets, prices, and the
 * OpenAI-style billing routes an API key alone may call. Shapes from one-api `controller/log.go`,
 * `model/log.go`, `controller/billing.go`, `controller/user.go` (GetUserDashboard) and new-api
 * `controller/log.go`, `controller/usedata.go`, `model/usedata.go`, `model/pricing.go`,
 * `controller/billing.go`.
 */
import { TASK_MODEL_PRICES } from './tasks';
import type { Ctx } from './server';
import { sendJson } from './server';
import type { EmuLog, EmuUser } from './store';
import { MODELS } from './models';
import { DEFAULT_PAGE_SIZE } from './profiles';

type Json = Record<string, unknown>;

const ok = (ctx: Ctx, data: unknown) => sendJson(ctx.res, 200, { success: true, message: '', data });

/** new-api's stand-in ratio for a model with no configured price (shown as unknown by clients). */
export const PLACEHOLDER_RATIO = 37.5;
/** A model the emulator serves whose price the gateway's operator never set. */
export const UNPRICED_MODEL = 'legacy-upstream-emu';
const SECONDS_PER_MONTH = 2_592_000;
const MAX_NEW_API_PAGE = 100;

function int(v: string | null): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isFinite(n) ? n : 0;
}

/** The consume-log rows of a user in `[start, end]` (0 = open), newest first by id. */
function consumeLogs(ctx: Ctx, user: EmuUser): EmuLog[] {
  const q = ctx.query;
  const start = int(q.get('start_timestamp'));
  const end = int(q.get('end_timestamp'));
  const type = int(q.get('type'));
  const model = q.get('model_name') ?? '';
  const token = q.get('token_name') ?? '';
  // Only consume rows are kept in the emulator; another type filter matches nothing.
  if (type !== 0 && type !== 2) return [];
  return ctx.emu.store.logs
    .filter(
      (l) =>
        l.userId === user.id &&
        (!start || l.createdAt >= start) &&
        (!end || l.createdAt <= end) &&
        (!model || l.modelName === model) &&
        (!token || l.tokenName === token),
    )
    .sort((a, b) => b.id - a.id);
}

function logView(l: EmuLog, profile: 'new-api' | 'one-api', username: string): Json {
  const base = {
    user_id: l.userId,
    created_at: l.createdAt,
    type: 2,
    content: `model ratio applied, ${l.quota} quota`,
    username,
    token_name: l.tokenName,
    model_name: l.modelName,
    quota: l.quota,
    prompt_tokens: l.promptTokens,
    completion_tokens: l.completionTokens,
    is_stream: l.isStream,
  };
  // one-api selects without the id (GORM `Omit("id")`: it serialises as 0) and has no `other`.
  if (profile === 'one-api') return { id: 0, ...base, channel: 1, elapsed_time: 900 };
  const other: Json = { model_ratio: 1, completion_ratio: 4, group_ratio: 1 };
  if (l.cacheRead) other.cache_tokens = l.cacheRead;
  if (l.cacheWrite) other.cache_creation_tokens = l.cacheWrite;
  // new-api keeps `other` as a JSON string column and lists it as such.
  return { id: l.id, ...base, channel: 1, use_time: 1, group: 'default', other: JSON.stringify(other) };
}

/** Answers the usage routes of the account API; false when the path is not one of them. */
export function handleUsage(ctx: Ctx, user: EmuUser, method: string): boolean {
  if (method !== 'GET') return false;
  const { emu, path, query } = ctx;
  const newApi = emu.profile === 'new-api';
  if (path === '/api/log/self') {
    const rows = consumeLogs(ctx, user).map((l) => logView(l, emu.profile, user.username));
    if (newApi) {
      const page = Math.max(1, int(query.get('p')));
      const size = Math.min(MAX_NEW_API_PAGE, int(query.get('page_size')) || DEFAULT_PAGE_SIZE);
      ok(ctx, { page, page_size: size, total: rows.length, items: rows.slice((page - 1) * size, page * size) });
    } else {
      const page = Math.max(0, int(query.get('p')));
      ok(ctx, rows.slice(page * DEFAULT_PAGE_SIZE, (page + 1) * DEFAULT_PAGE_SIZE));
    }
    return true;
  }
  if (path === '/api/log/self/stat') {
    const quota = consumeLogs(ctx, user).reduce((n, l) => n + l.quota, 0);
    ok(ctx, newApi ? { quota, rpm: 0, tpm: 0 } : { quota });
    return true;
  }
  if (newApi && path === '/api/data/self') {
    const start = Number.parseInt(query.get('start_timestamp') ?? '', 10);
    const end = Number.parseInt(query.get('end_timestamp') ?? '', 10);
    if (!Number.isFinite(start) || !Number.isFinite(end)) {
      sendJson(ctx.res, 400, { success: false, message: 'start_timestamp 格式错误' });
      return true;
    }
    if (end - start > SECONDS_PER_MONTH) {
      sendJson(ctx.res, 200, { success: false, message: '时间跨度不能超过 1 个月' });
      return true;
    }
    // Hourly buckets per model (new-api's quota_data table).
    const buckets = new Map<string, Json & { count: number; quota: number; token_used: number }>();
    for (const l of emu.store.logs) {
      if (l.userId !== user.id) continue;
      const hour = l.createdAt - (l.createdAt % 3600);
      if (hour < start || hour > end) continue;
      const id = `${l.modelName}\u0000${hour}`;
      const b = buckets.get(id) ?? {
        id: buckets.size + 1,
        user_id: user.id,
        username: user.username,
        model_name: l.modelName,
        created_at: hour,
        token_used: 0,
        count: 0,
        quota: 0,
      };
      b.count += 1;
      b.quota += l.quota;
      b.token_used += l.promptTokens + l.completionTokens;
      buckets.set(id, b);
    }
    ok(ctx, [...buckets.values()]);
    return true;
  }
  if (!newApi && path === '/api/user/dashboard') {
    // one-api: the last 7 days by day and model, with Go's field names (no json tags).
    const now = Math.floor(emu.clock.now() / 1000);
    const from = now - (now % 86_400) - 6 * 86_400;
    const rows = new Map<string, { Day: string; ModelName: string; RequestCount: number; Quota: number; PromptTokens: number; CompletionTokens: number }>();
    for (const l of emu.store.logs) {
      if (l.userId !== user.id || l.createdAt < from) continue;
      const day = new Date(l.createdAt * 1000).toISOString().slice(0, 10);
      const id = `${day}\u0000${l.modelName}`;
      const r = rows.get(id) ?? { Day: day, ModelName: l.modelName, RequestCount: 0, Quota: 0, PromptTokens: 0, CompletionTokens: 0 };
      r.RequestCount++;
      r.Quota += l.quota;
      r.PromptTokens += l.promptTokens;
      r.CompletionTokens += l.completionTokens;
      rows.set(id, r);
    }
    ok(
      ctx,
      [...rows.values()].sort((a, b) => a.Day.localeCompare(b.Day) || a.ModelName.localeCompare(b.ModelName)),
    );
    return true;
  }
  return false;
}

/**
 * new-api's `GET /api/pricing` (no envelope `message`; prices beside `data`). Ratios are the
 * emulator's billing: quota per input token, output 4 times, cache reads 0.1 and writes 1.25 of
 * input. The unpriced model reports the placeholder ratio, as new-api does.
 */
export function handlePricing(ctx: Ctx): void {
  if (ctx.emu.profile !== 'new-api') {
    sendJson(ctx.res, 404, { error: { message: `Invalid URL (GET ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
    return;
  }
  const data = MODELS.filter((m) => m.kind !== 'moderation').map((m) => {
    const unpriced = m.id === UNPRICED_MODEL;
    const perToken = m.kind === 'chat' || m.kind === 'embedding' || m.kind === 'rerank';
    const row: Json = {
      model_name: m.id,
      quota_type: 0,
      model_ratio: unpriced ? PLACEHOLDER_RATIO : perToken ? m.ratio : 0,
      model_price: 0,
      owner_by: m.ownedBy,
      completion_ratio: m.kind === 'chat' ? 4 : 1,
      enable_groups: ['default'],
      supported_endpoint_types: m.endpoints ?? (m.kind !== 'chat' ? [m.kind] : /claude/.test(m.id) ? ['anthropic', 'openai'] : ['openai']),
    };
    if (m.kind === 'chat' && !unpriced) Object.assign(row, { cache_ratio: 0.1, create_cache_ratio: 1.25 });
    // Task models are priced per call (quota_type 1, model_price in dollars), as new-api lists them.
    if (m.kind === 'task') Object.assign(row, { quota_type: 1, model_price: TASK_MODEL_PRICES[m.id] ?? 0, supported_endpoint_types: [] });
    // Per-unit models (speech characters, transcription seconds, video seconds) bill their own
    // way; the emulator lists them without a token price (quota_type 0, ratio 0: no token price).
    return row;
  });
  sendJson(ctx.res, 200, {
    success: true,
    data,
    group_ratio: { default: 1, vip: 0.5 },
    usable_group: { default: 'default users', vip: 'vip users' },
    vendors: [],
  });
}

/**
 * `GET /v1/dashboard/billing/subscription` and `/usage` with an API key. Both servers report the
 * key's own figures (DisplayTokenStatEnabled, on by default): the limit is what the key was given
 * (remain + used) or 100,000,000 for an unlimited key; usage is in cents. Failures come as HTTP 200
 * with an `{error}` body.
 */
export function handleBilling(ctx: Ctx, which: 'subscription' | 'usage'): void {
  const { emu } = ctx;
  const auth = emu.authorize(ctx, 'bearer', undefined, 'openai');
  if (!auth.ok) return;
  const k = auth.key;
  const used = k.usedQuota / 500_000;
  if (which === 'usage') {
    sendJson(ctx.res, 200, { object: 'list', total_usage: used * 100 });
    return;
  }
  const limit = k.unlimitedQuota ? 100_000_000 : (k.remainQuota + k.usedQuota) / 500_000;
  sendJson(ctx.res, 200, {
    object: 'billing_subscription',
    has_payment_method: true,
    soft_limit_usd: limit,
    hard_limit_usd: limit,
    system_hard_limit_usd: limit,
    access_until: k.expiredTime > 0 ? k.expiredTime : 0,
  });
}
