/**
 * The account API (`/api/...`) as the profile's server answers it (see `profiles.ts`).
 */
import { randomBytes } from 'node:crypto';
import type { Ctx } from './server';
import { sendJson } from './server';
import type { EmuKey, EmuUser } from './store';
import { MODELS } from './models';
import { handleUsage } from './usage';
import { NEW_API_ONLY, handleKeyRoutes, handleWallet } from './wallet';
import { DEFAULT_PAGE_SIZE, PROFILE_RULES, type ProfileRules, type ServerProfile } from './profiles';
import { asText } from './values';

type Json = Record<string, unknown>;

const ok = (ctx: Ctx, data?: unknown) => sendJson(ctx.res, 200, data === undefined ? { success: true, message: '' } : { success: true, message: '', data });
const refuse = (ctx: Ctx, message: string, status = 200) => sendJson(ctx.res, status, { success: false, message });

function mask(key: string): string {
  return `${key.slice(0, 4)}**********${key.slice(-4)}`;
}

function keyView(k: EmuKey, masked: boolean): Json {
  return {
    id: k.id,
    user_id: k.userId,
    key: masked ? mask(k.key) : k.key,
    status: k.status,
    name: k.name,
    created_time: k.createdTime,
    accessed_time: k.createdTime,
    expired_time: k.expiredTime,
    remain_quota: k.remainQuota,
    unlimited_quota: k.unlimitedQuota,
    used_quota: k.usedQuota,
    models: k.models ? k.models.join(',') : null,
    subnet: k.subnet,
    allow_ips: k.subnet,
  };
}

/** The access-token check of both servers' auth middleware, and new-api's New-Api-User rule. */
function authUser(ctx: Ctx, rules: ProfileRules): EmuUser | undefined {
  const { emu, req } = ctx;
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.trim()) {
    refuse(ctx, '无权进行此操作，未登录且未提供 access token', 401);
    return undefined;
  }
  const token = header.replace(/^Bearer\s+/i, '').trim();
  const user = [...emu.store.users.values()].find((u) => u.accessToken === token);
  if (!user) {
    refuse(ctx, '无权进行此操作，access token 无效', rules.invalidTokenStatus);
    return undefined;
  }
  if (rules.requireNewApiUser) {
    const id = req.headers['new-api-user'];
    if (typeof id !== 'string' || !id) {
      refuse(ctx, '无权进行此操作，未提供 New-Api-User', 401);
      return undefined;
    }
    if (id !== String(user.id)) {
      refuse(ctx, '无权进行此操作，New-Api-User 与登录用户不匹配', 401);
      return undefined;
    }
  }
  if (user.status !== 1) {
    refuse(ctx, '用户已被封禁');
    return undefined;
  }
  return user;
}

/** A page of a list as the profile's server cuts and wraps it. */
function page(ctx: Ctx, rules: ProfileRules, items: Json[]): void {
  const { query } = ctx;
  const asked = Number(query.get('page_size') ?? query.get('ps') ?? query.get('size'));
  const size = rules.pageSize === 'fixed' || !Number.isInteger(asked) || asked < 1 ? DEFAULT_PAGE_SIZE : Math.min(100, asked);
  const p = Math.floor(Number(query.get('p') ?? rules.firstPage) || 0);
  // one-api: p from 0 (negative read as 0); new-api: p from 1 (0 and below read as 1).
  const index = rules.firstPage === 0 ? Math.max(0, p) : Math.max(1, p) - 1;
  const slice = items.slice(index * size, index * size + size);
  if (rules.listShape === 'paged') return ok(ctx, { page: index + 1, page_size: size, total: items.length, items: slice });
  ok(ctx, slice);
}

function ownKeys(ctx: Ctx, user: EmuUser): EmuKey[] {
  return [...ctx.emu.store.keys.values()].filter((k) => k.userId === user.id).sort((a, b) => b.id - a.id);
}

const MAX_NAME: Record<ServerProfile, number> = { 'one-api': 30, 'new-api': 50 };

export function handleAccount(ctx: Ctx): void {
  const { emu, req, path } = ctx;
  const rules = PROFILE_RULES[emu.profile];
  // one-api lacks new-api's newer routes: its RelayNotFound answers before any auth.
  if (emu.profile === 'one-api' && NEW_API_ONLY.includes(path)) return notFound(ctx, req.method ?? 'GET');
  if (handleKeyRoutes(ctx)) return;
  const user = authUser(ctx, rules);
  if (!user) return;
  const body = (ctx.body ?? {}) as Json;
  const method = req.method ?? 'GET';
  const masked = rules.maskKeys;
  const idMatch = /^\/api\/token\/(\d+)(\/key)?$/.exec(path);
  const now = Math.floor(emu.clock.now() / 1000);

  if (method === 'GET' && path === '/api/user/self') {
    const { accessToken: _hidden, ...rest } = user;
    return ok(ctx, {
      id: rest.id,
      username: rest.username,
      display_name: rest.username,
      role: rest.role,
      status: rest.status,
      quota: rest.quota,
      used_quota: rest.usedQuota,
      group: 'default',
    });
  }
  if (method === 'GET' && path === '/api/user/token') {
    user.accessToken = randomBytes(16).toString('hex');
    return ok(ctx, user.accessToken);
  }
  if (method === 'GET' && path === '/api/models') {
    return ok(ctx, {
      '1': MODELS.filter((m) => m.kind !== 'chat' || !m.id.startsWith('claude')).map((m) => m.id),
      '14': MODELS.filter((m) => m.id.startsWith('claude')).map((m) => m.id),
    });
  }
  if (method === 'GET' && path === rules.userModelsPath)
    return ok(
      ctx,
      MODELS.map((m) => m.id),
    );
  if (method === 'GET' && path === '/api/token')
    return page(
      ctx,
      rules,
      ownKeys(ctx, user).map((k) => keyView(k, masked)),
    );
  if (method === 'GET' && path === '/api/token/search') {
    const kw = ctx.query.get('keyword') ?? '';
    const found = ownKeys(ctx, user).filter((k) => (rules.searchMatch === 'exact' ? k.name === kw : k.name.startsWith(kw)));
    const views = found.map((k) => keyView(k, masked));
    return rules.listShape === 'paged' ? page(ctx, rules, views) : ok(ctx, views);
  }
  if (method === 'POST' && path === '/api/token') {
    const name = typeof body.name === 'string' ? body.name : '';
    if (name.length > MAX_NAME[emu.profile]) return refuse(ctx, '令牌名称过长');
    const expired = Number(body.expired_time ?? -1);
    const created = emu.store.addKey({
      userId: user.id,
      name,
      expiredTime: Number.isFinite(expired) ? expired : -1,
      remainQuota: Number(body.remain_quota ?? 0) || 0,
      unlimitedQuota: body.unlimited_quota === true,
      subnet: asText(emu.profile === 'one-api' ? body.subnet : body.allow_ips),
    });
    const k = emu.store.keys.get(created.id)!;
    return rules.createReturns === 'nothing' ? ok(ctx) : ok(ctx, keyView(k, false));
  }
  if (method === 'PUT' && path === '/api/token') {
    const k = emu.store.keys.get(Number(body.id));
    if (!k || k.userId !== user.id) return refuse(ctx, 'record not found');
    if (typeof body.name === 'string' && body.name.length > MAX_NAME[emu.profile]) return refuse(ctx, '令牌名称过长');
    // Both servers refuse to enable a key the relay marked expired or exhausted, whatever the route.
    if (Number(body.status) === 1) {
      if (k.status === 3 && k.expiredTime !== -1 && k.expiredTime <= now) return refuse(ctx, '令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期');
      if (k.status === 4 && k.remainQuota <= 0 && !k.unlimitedQuota)
        return refuse(ctx, '令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度');
    }
    if (ctx.query.get('status_only')) {
      k.status = Number(body.status) || 0;
    } else {
      // The whole record is replaced from the body (a field left out becomes empty); status is ignored.
      k.name = asText(body.name);
      k.expiredTime = Number(body.expired_time ?? 0);
      k.remainQuota = Number(body.remain_quota ?? 0);
      k.unlimitedQuota = body.unlimited_quota === true;
      k.subnet = asText(emu.profile === 'one-api' ? body.subnet : body.allow_ips);
    }
    return ok(ctx, keyView(k, masked));
  }
  if (idMatch) {
    const k = emu.store.keys.get(Number(idMatch[1]));
    if (!k || k.userId !== user.id) return refuse(ctx, 'record not found');
    if (method === 'GET' && !idMatch[2]) return ok(ctx, keyView(k, masked));
    // As new-api's GetTokenKey answers it: token.GetFullKey(), the key as stored, without `sk-` (its console adds the prefix).
    if (method === 'POST' && idMatch[2] && rules.revealRoute) return ok(ctx, { key: k.key });
    if (method === 'DELETE' && !idMatch[2]) {
      emu.store.keys.delete(k.id);
      return ok(ctx);
    }
  }
  if (handleUsage(ctx, user, method)) return;
  if (handleWallet(ctx, user, method)) return;
  notFound(ctx, method);
}

function notFound(ctx: Ctx, method: string): void {
  sendJson(ctx.res, 404, { error: { message: `Invalid URL (${method} ${ctx.path})`, type: 'invalid_request_error', param: '', code: '' } });
}
