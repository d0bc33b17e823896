import { randomBytes } from 'node:crypto';
import type { Ctx } from './server';
import { sendJson } from './server';
import type { EmuKey, EmuUser } from './store';
import { MODELS } from './models';
import { asText } from './values';

type Json = Record<string, unknown>;

/**
 * The account API (`/api/...`) with the variations real deployments show (see the wire notes),
 * switchable by tests: list `data` as a bare array or `{items,total}`, creation answering with the
 * record, masked metadata or nothing, keys masked in lists, and the `New-Api-User` check.
 */
export interface AccountStyle {
  listShape: 'array' | 'paged';
  createReturns: 'record' | 'masked' | 'nothing';
  maskKeys: boolean;
  requireNewApiUser: boolean;
}

export const DEFAULT_ACCOUNT_STYLE: AccountStyle = { listShape: 'array', createReturns: 'record', maskKeys: false, requireNewApiUser: false };

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
  };
}

function authUser(ctx: Ctx): EmuUser | undefined {
  const { emu, req } = ctx;
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.trim()) {
    refuse(ctx, '无权进行此操作，未登录且未提供 access token', 401);
    return undefined;
  }
  const token = header.replace(/^Bearer\s+/i, '').trim();
  const user = [...emu.store.users.values()].find((u) => u.accessToken === token);
  if (!user) {
    refuse(ctx, '无权进行此操作，access token 无效');
    return undefined;
  }
  if (emu.accountStyle.requireNewApiUser) {
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

function page(ctx: Ctx, items: Json[]): void {
  const { emu, query } = ctx;
  const size = Math.min(100, Math.max(1, Number(query.get('num') ?? query.get('page_size') ?? query.get('size') ?? 10) || 10));
  const p = Math.max(0, Number(query.get('p') ?? 0) || 0);
  const slice = items.slice(p * size, p * size + size);
  if (emu.accountStyle.listShape === 'paged') return ok(ctx, { page: p, page_size: size, total: items.length, items: slice });
  ok(ctx, slice);
}

function ownKeys(ctx: Ctx, user: EmuUser): EmuKey[] {
  return [...ctx.emu.store.keys.values()].filter((k) => k.userId === user.id).sort((a, b) => b.id - a.id);
}

export function handleAccount(ctx: Ctx): void {
  const { emu, req, path } = ctx;
  const user = authUser(ctx);
  if (!user) return;
  const body = (ctx.body ?? {}) as Json;
  const method = req.method ?? 'GET';
  const masked = emu.accountStyle.maskKeys;
  const idMatch = /^\/api\/token\/(\d+)(\/key)?$/.exec(path);

  if (method === 'GET' && path === '/api/user/self') {
    const { accessToken: _hidden, ...rest } = user;
    return ok(ctx, { id: rest.id, username: rest.username, display_name: rest.username, role: rest.role, status: rest.status, quota: rest.quota, used_quota: rest.usedQuota, group: 'default' });
  }
  if (method === 'GET' && path === '/api/user/token') {
    user.accessToken = randomBytes(16).toString('hex');
    return ok(ctx, user.accessToken);
  }
  if (method === 'GET' && path === '/api/models') {
    return ok(ctx, { '1': MODELS.filter((m) => m.kind !== 'chat' || !m.id.startsWith('claude')).map((m) => m.id), '14': MODELS.filter((m) => m.id.startsWith('claude')).map((m) => m.id) });
  }
  if (method === 'GET' && path === '/api/user/available_models') return ok(ctx, MODELS.map((m) => m.id));
  if (method === 'GET' && path === '/api/token') return page(ctx, ownKeys(ctx, user).map((k) => keyView(k, masked)));
  if (method === 'GET' && path === '/api/token/search') {
    const kw = (ctx.query.get('keyword') ?? '').toLowerCase();
    return page(ctx, ownKeys(ctx, user).filter((k) => k.name.toLowerCase().includes(kw)).map((k) => keyView(k, masked)));
  }
  if (method === 'POST' && path === '/api/token') {
    const name = typeof body.name === 'string' ? body.name : '';
    if (!name) return refuse(ctx, '令牌名称不能为空');
    if (name.length > 50) return refuse(ctx, '令牌名称过长');
    const expired = Number(body.expired_time ?? -1);
    const created = emu.store.addKey({
      userId: user.id,
      name,
      expiredTime: Number.isFinite(expired) ? expired : -1,
      remainQuota: Number(body.remain_quota ?? 0) || 0,
      unlimitedQuota: body.unlimited_quota === true,
      subnet: asText(body.subnet ?? body.allow_ips),
    });
    const k = emu.store.keys.get(created.id)!;
    if (emu.accountStyle.createReturns === 'nothing') return ok(ctx);
    return ok(ctx, keyView(k, emu.accountStyle.createReturns === 'masked'));
  }
  if (method === 'PUT' && path === '/api/token') {
    const k = emu.store.keys.get(Number(body.id));
    if (!k || k.userId !== user.id) return refuse(ctx, '令牌不存在');
    const now = Math.floor(emu.clock.now() / 1000);
    const status = body.status === undefined ? k.status : Number(body.status);
    if (status !== 0 && status !== 1) return refuse(ctx, 'status must be 1 (enabled) or 0 (disabled)');
    if (status === 1 && k.status !== 1) {
      if (k.expiredTime !== -1 && k.expiredTime <= now) return refuse(ctx, '令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期');
      if (!k.unlimitedQuota && k.remainQuota <= 0) return refuse(ctx, '令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度');
    }
    k.status = status;
    if (ctx.query.get('status_only') === null) {
      if (typeof body.name === 'string') {
        if (body.name.length > 50) return refuse(ctx, '令牌名称过长');
        k.name = body.name;
      }
      if (body.expired_time !== undefined) k.expiredTime = Number(body.expired_time);
      if (body.remain_quota !== undefined) k.remainQuota = Number(body.remain_quota);
      if (body.unlimited_quota !== undefined) k.unlimitedQuota = body.unlimited_quota === true;
      if (body.subnet !== undefined) k.subnet = asText(body.subnet);
    }
    return ok(ctx, keyView(k, masked));
  }
  if (idMatch) {
    const k = emu.store.keys.get(Number(idMatch[1]));
    if (!k || k.userId !== user.id) return refuse(ctx, '令牌不存在');
    if (method === 'GET' && !idMatch[2]) return ok(ctx, keyView(k, masked));
    if (method === 'POST' && idMatch[2]) return ok(ctx, { key: k.key });
    if (method === 'DELETE' && !idMatch[2]) {
      emu.store.keys.delete(k.id);
      return ok(ctx);
    }
  }
  sendJson(ctx.res, 404, { success: false, message: `No route ${method} ${path}` });
}
