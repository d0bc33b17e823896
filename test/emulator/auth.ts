import type { IncomingMessage } from 'node:http';
import type { Clock } from './clock';
import type { EmulatedModel } from './models';
import type { EmuKey, EmuUser, Store } from './store';

/** `status`: 401, 403, 429 from the key and limiter checks; a busy model's own (429, 503, 529). */
export type AuthFailure = { status: number; message: string; code: string };
export type AuthResult = { ok: true; key: EmuKey; user: EmuUser } | ({ ok: false } & AuthFailure);

function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    const v = Number(p);
    if (!Number.isInteger(v) || v < 0 || v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

export function ipAllowed(ip: string, subnet: string): boolean {
  const rules = subnet
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (rules.length === 0) return true;
  const addr = ip.replace(/^::ffff:/, '');
  const n = ipv4ToInt(addr);
  for (const rule of rules) {
    const [base, bitsText] = rule.split('/');
    if (bitsText === undefined) {
      if (base === addr) return true;
      continue;
    }
    const b = ipv4ToInt(base);
    const bits = Number(bitsText);
    if (n === undefined || b === undefined || !(bits >= 0 && bits <= 32)) continue;
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === (b & mask) >>> 0) return true;
  }
  return false;
}

/** The key from the header this interface uses. */
export function keyFromRequest(req: IncomingMessage, kind: 'bearer' | 'x-api-key' | 'api-key' | 'goog'): string | undefined {
  if (kind === 'goog') {
    // new-api's TokenAuth on /v1beta: `?key=`, else `x-goog-api-key`, else the bearer header.
    const query = new URL(req.url ?? '/', 'http://x').searchParams.get('key');
    const v = req.headers['x-goog-api-key'];
    if (query) return query;
    if (typeof v === 'string' && v) return v;
    return keyFromRequest(req, 'bearer');
  }
  if (kind === 'x-api-key') {
    const v = req.headers['x-api-key'];
    return typeof v === 'string' && v ? v : undefined;
  }
  if (kind === 'api-key') {
    const v = req.headers['api-key'];
    return typeof v === 'string' && v ? v : undefined;
  }
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h);
  return m ? m[1].trim() : undefined;
}

/**
 * The relay's key rules, in one-api's and new-api's order: the key first (a key used past its
 * expiry or its own quota is flipped to status 3 or 4 and refused with 401), then the user and
 * the request (banned user, IP, model, the user's balance: 403).
 */
export function authorize(store: Store, clock: Clock, secret: string | undefined, remoteIp: string, model: EmulatedModel | undefined): AuthResult {
  if (!secret) return { ok: false, status: 401, message: 'No API key provided (missing authorization header).', code: 'missing_api_key' };
  const key = store.findKey(secret);
  if (!key) return { ok: false, status: 401, message: 'Invalid API key (无效的令牌).', code: 'invalid_api_key' };
  const expired = { ok: false as const, status: 401 as const, message: 'The API key has expired (该令牌已过期).', code: 'expired_api_key' };
  const exhausted = {
    ok: false as const,
    status: 401 as const,
    message: "The API key's own quota is exhausted (该令牌额度已用尽).",
    code: 'token_quota_exhausted',
  };
  if (key.status === 3) return expired;
  if (key.status === 4) return exhausted;
  if (key.status !== 1) return { ok: false, status: 401, message: 'The API key is disabled (该令牌状态不可用).', code: 'disabled_api_key' };
  if (key.expiredTime !== -1 && key.expiredTime * 1000 <= clock.now()) {
    key.status = 3;
    return expired;
  }
  if (!key.unlimitedQuota && key.remainQuota <= 0) {
    key.status = 4;
    return exhausted;
  }
  const user = store.users.get(key.userId);
  if (!user || user.status !== 1) return { ok: false, status: 403, message: 'The account is suspended (banned user).', code: 'user_banned' };
  if (!ipAllowed(remoteIp, key.subnet)) {
    return { ok: false, status: 403, message: `Your IP ${remoteIp.replace(/^::ffff:/, '')} is not in the key's allowed subnet.`, code: 'ip_not_allowed' };
  }
  if (model && key.models && !key.models.includes(model.id)) {
    return { ok: false, status: 403, message: `This key is not allowed to use model ${model.id}.`, code: 'model_not_allowed' };
  }
  if (user.quota <= 0)
    return { ok: false, status: 403, message: 'Insufficient balance: the user quota is used up (用户额度不足).', code: 'insufficient_user_quota' };
  return { ok: true, key, user };
}
