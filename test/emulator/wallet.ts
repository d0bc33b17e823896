/**
 * What the emulator's profiles answer beyond keys and usage, from the servers' source:
 * - with the API key alone (new-api `router/api-router.go`: `TokenAuthReadOnly`):
 *   `GET /api/usage/token` (`controller/token.go` GetTokenUsage: `{code:true, message:"ok", data}`,
 *   quota units) and `GET /api/log/token` (`controller/log.go` GetLogByKey: the key's newest
 *   `MaxRecentItems` log rows, display ids from 1);
 * - with the access token: `POST /api/user/topup` (both servers: a redemption code,
 *   `model/redemption.go` Redeem's refusals), `GET|POST /api/user/checkin` (new-api
 *   `controller/checkin.go`, off unless the operator turns it on), `GET /api/subscription/plans`
 *   and `/self` (new-api `controller/subscription.go`).
 * one-api has only the top-up: the others are its `RelayNotFound` 404.
 */
import type { Ctx } from './server';
import { sendJson } from './server';
import type { EmuLog, EmuUser } from './store';

type Json = Record<string, unknown>;

const ok = (ctx: Ctx, data: unknown, message = '') => sendJson(ctx.res, 200, { success: true, message, data });
const refuse = (ctx: Ctx, message: string, status = 200) => sendJson(ctx.res, status, { success: false, message });
/** A business refusal (HTTP 200, `success:false`), the route handled. */
const refused = (ctx: Ctx, message: string): true => {
  refuse(ctx, message);
  return true;
};

/** new-api's routes one-api does not have: 404 there, whatever the credentials. */
export const NEW_API_ONLY = [
  '/api/usage/token',
  '/api/log/token',
  '/api/user/checkin',
  '/api/user/topup/info',
  '/api/subscription/plans',
  '/api/subscription/self',
];

/** new-api's `common.MaxRecentItems` default. */
const MAX_RECENT_ITEMS = 1000;

/** The operator's check-in setting (new-api `operation_setting.CheckinSetting`: off by default). */
export interface CheckinSetting {
  enabled: boolean;
  minQuota: number;
  maxQuota: number;
}

export interface EmuPlan {
  id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: 'year' | 'month' | 'day' | 'hour' | 'custom';
  duration_value: number;
  total_amount: number;
  enabled: boolean;
}

export interface EmuSubscription {
  id: number;
  userId: number;
  planId: number;
  amountTotal: number;
  amountUsed: number;
  startTime: number;
  endTime: number;
  status: 'active' | 'expired' | 'cancelled';
}

/** The routes an API key alone may call (new-api). False when the path is not one of them. */
export function handleKeyRoutes(ctx: Ctx): boolean {
  const { emu, path, req } = ctx;
  if (req.method !== 'GET' || (path !== '/api/usage/token' && path !== '/api/log/token')) return false;
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.trim()) {
    refuse(ctx, '未提供令牌', 401);
    return true;
  }
  const key = emu.store.findKey(header.replace(/^Bearer\s+/i, '').trim());
  if (!key) {
    refuse(ctx, '令牌无效', 401);
    return true;
  }
  if (path === '/api/usage/token') {
    sendJson(ctx.res, 200, {
      code: true,
      message: 'ok',
      data: {
        object: 'token_usage',
        name: key.name,
        total_granted: key.remainQuota + key.usedQuota,
        total_used: key.usedQuota,
        total_available: key.remainQuota,
        unlimited_quota: key.unlimitedQuota,
        model_limits: Object.fromEntries((key.models ?? []).map((m) => [m, true])),
        model_limits_enabled: key.models !== null,
        expires_at: key.expiredTime === -1 ? 0 : key.expiredTime,
      },
    });
    return true;
  }
  const user = emu.store.users.get(key.userId);
  const rows = emu.store.logs
    .filter((l) => l.tokenId === key.id)
    .sort((a, b) => b.id - a.id)
    .slice(0, MAX_RECENT_ITEMS)
    .map((l, i) => keyLogView(l, i + 1, user?.username ?? ''));
  ok(ctx, rows);
  return true;
}

function keyLogView(l: EmuLog, displayId: number, username: string): Json {
  const other: Json = { model_ratio: 1, completion_ratio: 4, group_ratio: 1 };
  if (l.cacheRead) other.cache_tokens = l.cacheRead;
  if (l.cacheWrite) other.cache_creation_tokens = l.cacheWrite;
  // formatUserLogs: display ids from 1, no channel name, `other` a JSON string.
  return {
    id: displayId,
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
    use_time: 1,
    is_stream: l.isStream,
    channel: 1,
    channel_name: '',
    token_id: l.tokenId,
    group: 'default',
    other: JSON.stringify(other),
  };
}

/** The wallet routes of the access token. False when the path is not one of them. */
export function handleWallet(ctx: Ctx, user: EmuUser, method: string): boolean {
  const { emu, path } = ctx;
  const body = (ctx.body ?? {}) as Json;
  if (method === 'POST' && path === '/api/user/topup') {
    const code = typeof body.key === 'string' ? body.key.trim() : '';
    if (!code) return refused(ctx, '未提供兑换码');
    const r = emu.store.redemptions.get(code);
    if (!r) return refused(ctx, '无效的兑换码');
    if (r.status !== 1) return refused(ctx, '该兑换码已被使用');
    r.status = 3;
    r.usedBy = user.id;
    user.quota += r.quota;
    ok(ctx, r.quota);
    return true;
  }
  if (emu.profile !== 'new-api') return false;
  if (path === '/api/user/checkin') {
    const setting = emu.checkin;
    if (!setting.enabled) return refused(ctx, '签到功能未启用');
    const today = localDay(emu.clock.now());
    const mine = emu.store.checkins.get(user.id) ?? [];
    if (method === 'GET') {
      const month = ctx.query.get('month') ?? today.slice(0, 7);
      const records = mine.filter((c) => c.day.startsWith(month)).map((c) => ({ checkin_date: c.day, quota_awarded: c.quota }));
      ok(ctx, {
        enabled: true,
        min_quota: setting.minQuota,
        max_quota: setting.maxQuota,
        stats: {
          total_quota: mine.reduce((n, c) => n + c.quota, 0),
          total_checkins: mine.length,
          checkin_count: records.length,
          checked_in_today: mine.some((c) => c.day === today),
          records,
        },
      });
      return true;
    }
    if (method === 'POST') {
      if (mine.some((c) => c.day === today)) return refused(ctx, '今日已签到');
      // A fixed draw inside the range (the server's is random): the same figure every run.
      const quota = Math.round((setting.minQuota + setting.maxQuota) / 2);
      mine.push({ day: today, quota });
      emu.store.checkins.set(user.id, mine);
      user.quota += quota;
      ok(ctx, { quota_awarded: quota, checkin_date: today }, '签到成功');
      return true;
    }
  }
  if (method === 'GET' && path === '/api/subscription/plans') {
    ok(
      ctx,
      emu.plans.filter((p) => p.enabled).map((plan) => ({ plan: { ...plan, sort_order: 0, priority: 0, created_at: 0, updated_at: 0 } })),
    );
    return true;
  }
  if (method === 'GET' && path === '/api/subscription/self') {
    const now = Math.floor(emu.clock.now() / 1000);
    const all = emu.subscriptions.filter((s) => s.userId === user.id).map((s) => ({ subscription: subscriptionView(s, now) }));
    ok(ctx, { billing_preference: 'subscription_first', subscriptions: all.filter((s) => s.subscription.status === 'active'), all_subscriptions: all });
    return true;
  }
  return false;
}

function subscriptionView(s: EmuSubscription, now: number): Json & { status: string } {
  const status = s.status === 'active' && s.endTime <= now ? 'expired' : s.status;
  return {
    id: s.id,
    user_id: s.userId,
    plan_id: s.planId,
    amount_total: s.amountTotal,
    amount_used: s.amountUsed,
    start_time: s.startTime,
    end_time: s.endTime,
    status,
    source: 'order',
  };
}

function localDay(ms: number): string {
  // new-api checks in by the server's local day; the emulator's server runs in UTC.
  return new Date(ms).toISOString().slice(0, 10);
}

/** The plan the emulator's new-api offers (an operator's example). */
export const DEFAULT_PLANS: EmuPlan[] = [
  {
    id: 1,
    title: 'Pro',
    subtitle: '20 USD of quota a month',
    price_amount: 9.9,
    currency: 'USD',
    duration_unit: 'month',
    duration_value: 1,
    total_amount: 10_000_000,
    enabled: true,
  },
];
