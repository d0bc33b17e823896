import { z } from 'zod';
import { AccountApiError, AuthenticationError, GatewayError, NotFoundError } from './core/errors';
import type { RequestSpec, Transport } from './core/transport';
import { validateRequest } from './core/validate';
import type { RequestOptions } from './chat';

import { quotaToDollars } from './money';

export { QUOTA_PER_DOLLAR, dollarsToQuota, formatDollars, maskKey, quotaToDollars } from './money';

export type KeyState = 'enabled' | 'disabled' | 'expired' | 'exhausted';

export interface ApiKeyRecord {
  id: number;
  name: string;
  /** The full key (`sk-…`) when the gateway returned it; otherwise a masked form. */
  key: string;
  /** Whether `key` is the full secret. */
  keyIsFull: boolean;
  status: number;
  state: KeyState;
  enabled: boolean;
  /** Unix seconds; -1 means never. */
  expiredTime: number;
  remainQuota: number;
  unlimitedQuota: boolean;
  usedQuota?: number;
  subnet: string;
  raw: Record<string, unknown>;
}

export interface AccountUser {
  username: string;
  quota: number;
  balanceDollars: number;
  usedQuota?: number;
  id?: number;
  raw: Record<string, unknown>;
}

const Envelope = z.looseObject({ success: z.boolean().optional(), message: z.string().optional(), data: z.unknown().optional() });

const KeyRaw = z.looseObject({
  id: z.number(),
  name: z.string().optional(),
  key: z.string().optional(),
  status: z.number().optional(),
  expired_time: z.number().optional(),
  remain_quota: z.number().optional(),
  unlimited_quota: z.boolean().optional(),
  used_quota: z.number().optional(),
  subnet: z.string().nullable().optional(),
  allow_ips: z.string().nullable().optional(),
});

function toRecord(raw: z.output<typeof KeyRaw>): ApiKeyRecord {
  const key = raw.key ?? '';
  const full = key.length > 0 && !key.includes('*');
  const status = raw.status ?? 1;
  const state: KeyState = status === 1 ? 'enabled' : status === 3 ? 'expired' : status === 4 ? 'exhausted' : 'disabled';
  return {
    id: raw.id,
    name: raw.name ?? '',
    key: full ? (key.startsWith('sk-') ? key : `sk-${key}`) : key,
    keyIsFull: full,
    status,
    state,
    enabled: state === 'enabled',
    expiredTime: raw.expired_time ?? -1,
    remainQuota: raw.remain_quota ?? 0,
    unlimitedQuota: raw.unlimited_quota ?? false,
    usedQuota: raw.used_quota,
    // one-api calls it `subnet`, new-api `allow_ips` (newline-separated).
    subnet: (raw.subnet ?? raw.allow_ips ?? '').split(/\n/).filter(Boolean).join(','),
    raw,
  };
}

export const CreateKeySchema = z
  .looseObject({
    name: z.string({ error: 'name is required' }).min(1, 'name must not be empty').max(50, 'name must be at most 50 characters'),
    expired_time: z.number().int().refine((v) => v === -1 || v > 0, 'must be -1 (never) or a Unix time in seconds').default(-1),
    remain_quota: z.number().int().nonnegative('must not be negative').default(0),
    unlimited_quota: z.boolean().default(false),
    subnet: z.string().default(''),
  })
  .superRefine((r, ctx) => {
    // A key with no quota and no unlimited flag would be refused on its first call.
    if (r.remain_quota === 0 && !r.unlimited_quota) {
      ctx.addIssue({ code: 'custom', path: ['remain_quota'], message: 'must be above 0 unless unlimited_quota is true' });
    }
  });
export type CreateKeyRequest = z.input<typeof CreateKeySchema>;

export const UpdateKeySchema = z.looseObject({
  id: z.number().int().positive(),
  name: z.string().min(1).max(50, 'name must be at most 50 characters').optional(),
  expired_time: z.number().int().refine((v) => v === -1 || v > 0, 'must be -1 (never) or a Unix time in seconds').optional(),
  remain_quota: z.number().int().nonnegative('must not be negative').optional(),
  unlimited_quota: z.boolean().optional(),
  status: z.union([z.literal(0), z.literal(1)], { error: 'status must be 1 (enabled) or 0 (disabled)' }).optional(),
  subnet: z.string().optional(),
});
export type UpdateKeyRequest = z.input<typeof UpdateKeySchema>;

const AUTH_WORDS = /access token|未登录|未提供|token 无效|无权|New-Api-User|unauthori/i;

class AccountTransport {
  constructor(private readonly transport: Transport) {}

  /** Calls the account API and unwraps `{success, message, data}`; `success:false` throws. */
  async call(spec: Omit<RequestSpec, 'auth'>, what: string): Promise<unknown> {
    let data: unknown;
    try {
      ({ data } = await this.transport.json({ ...spec, auth: 'account' }));
    } catch (err) {
      if (err instanceof AuthenticationError) {
        throw new AccountApiError(
          `The system access token is missing, invalid or expired (${err.serverMessage}). Set the system access token from the gateway console's account settings${/New-Api-User/i.test(err.serverMessage) ? ', and the account user id' : ''}.`,
          { status: 401, type: 'authentication_error', code: err.code },
        );
      }
      throw err;
    }
    const env = Envelope.safeParse(data);
    if (!env.success) throw new GatewayError(`The account API's answer to ${what} is not an envelope.`, { type: 'invalid_response' });
    if (env.data.success === false) {
      const message = env.data.message || 'the account API refused the request';
      const auth = AUTH_WORDS.test(message);
      throw new AccountApiError(
        auth
          ? `The account API refused the system access token (${message}). Set a valid system access token${/New-Api-User/i.test(message) ? ' and the account user id' : ''}.`
          : `The account API refused to ${what}: ${message}`,
        { type: auth ? 'authentication_error' : 'account_error', code: (env.data as { code?: string }).code },
      );
    }
    return env.data.data;
  }
}

function listOf(data: unknown, what: string): { items: unknown[]; total?: number } {
  if (Array.isArray(data)) return { items: data };
  if (data && typeof data === 'object' && Array.isArray((data as { items?: unknown }).items)) {
    const d = data as { items: unknown[]; total?: unknown };
    return { items: d.items, total: typeof d.total === 'number' ? d.total : undefined };
  }
  if (data === null || data === undefined) return { items: [] };
  throw new GatewayError(`The account API's answer to ${what} holds no list.`, { type: 'invalid_response' });
}

function parseKeys(items: unknown[], what: string): ApiKeyRecord[] {
  return items.map((item) => {
    const r = KeyRaw.safeParse(item);
    if (!r.success) throw new GatewayError(`The account API's answer to ${what} has a key record without an id.`, { type: 'invalid_response' });
    return toRecord(r.data);
  });
}

export class Tokens {
  constructor(private readonly api: AccountTransport) {}

  /** Keys of the account; `num` is the page size, `page` (0-based for one-api, 1-based for newer new-api) is passed through. */
  async list(params: { num?: number; page?: number } = {}, opts: RequestOptions = {}): Promise<{ items: ApiKeyRecord[]; total?: number }> {
    const query = { num: params.num, p: params.page, size: params.num, page_size: params.num };
    const data = await this.api.call({ method: 'GET', path: '/api/token/', query, signal: opts.signal }, 'list keys');
    const { items, total } = listOf(data, 'list keys');
    return { items: parseKeys(items, 'list keys'), total };
  }

  async search(keyword: string, opts: RequestOptions = {}): Promise<ApiKeyRecord[]> {
    const data = await this.api.call({ method: 'GET', path: '/api/token/search', query: { keyword }, signal: opts.signal }, 'search keys');
    return parseKeys(listOf(data, 'search keys').items, 'search keys');
  }

  async get(id: number, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    const data = await this.api.call({ method: 'GET', path: `/api/token/${id}`, signal: opts.signal }, `read key ${id}`);
    return parseKeys([data], `read key ${id}`)[0];
  }

  /**
   * Creates a key. Deployments differ in what they return: the full record, masked metadata, or
   * nothing. When the answer holds no full key, the new key is found by searching for its name
   * (the newest match), and, where the deployment offers it, its full key is fetched.
   */
  async create(body: CreateKeyRequest, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    const req = validateRequest(CreateKeySchema, body);
    const wire = { ...req, allow_ips: req.subnet };
    const data = await this.api.call({ method: 'POST', path: '/api/token/', json: wire, signal: opts.signal }, 'create a key');
    let record = data && typeof data === 'object' && 'id' in data ? parseKeys([data], 'create a key')[0] : undefined;
    if (!record) {
      const found = (await this.search(req.name, opts).catch(() => [] as ApiKeyRecord[])).filter((k) => k.name === req.name);
      const fromList = found.length > 0 ? found : (await this.list({ num: 100 }, opts)).items.filter((k) => k.name === req.name);
      record = fromList.sort((a, b) => b.id - a.id)[0];
      if (!record) throw new AccountApiError(`The key "${req.name}" was created, but it could not be found in the key list.`);
    }
    if (!record.keyIsFull) {
      const key = await this.reveal(record.id, opts);
      if (key) record = { ...record, key, keyIsFull: true };
    }
    return record;
  }

  /**
   * The full key (`sk-…`) of a key record: from its detail, or from `POST /api/token/{id}/key`
   * where the deployment masks details. Undefined when the deployment never reveals it.
   */
  async reveal(id: number, opts: RequestOptions = {}): Promise<string | undefined> {
    const detail = await this.get(id, opts);
    if (detail.keyIsFull) return detail.key;
    try {
      const full = await this.api.call({ method: 'POST', path: `/api/token/${id}/key`, signal: opts.signal }, 'read the key');
      const key = (full as { key?: unknown } | null)?.key;
      if (typeof key === 'string' && key && !key.includes('*')) return key.startsWith('sk-') ? key : `sk-${key}`;
    } catch (err) {
      if (!(err instanceof NotFoundError || err instanceof AccountApiError)) throw err;
    }
    return undefined;
  }

  /** Updates a key. Fields not given keep their current values (some servers zero missing fields). */
  async update(body: UpdateKeyRequest, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    const req = validateRequest(UpdateKeySchema, body);
    const current = await this.get(req.id, opts);
    const merged = {
      ...current.raw,
      id: req.id,
      name: req.name ?? current.name,
      expired_time: req.expired_time ?? current.expiredTime,
      remain_quota: req.remain_quota ?? current.remainQuota,
      unlimited_quota: req.unlimited_quota ?? current.unlimitedQuota,
      status: req.status ?? (current.enabled ? 1 : 0),
      subnet: req.subnet ?? current.subnet,
      allow_ips: req.subnet ?? current.subnet,
    };
    delete (merged as { key?: unknown }).key;
    const data = await this.api.call({ method: 'PUT', path: '/api/token/', json: merged, signal: opts.signal }, `update key ${req.id}`);
    return data && typeof data === 'object' && 'id' in data ? parseKeys([data], 'update a key')[0] : this.get(req.id, opts);
  }

  /** Enables (status 1) or disables (status 0) a key. */
  setEnabled(id: number, enabled: boolean, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    return this.update({ id, status: enabled ? 1 : 0 }, opts);
  }

  async delete(id: number, opts: RequestOptions = {}): Promise<void> {
    await this.api.call({ method: 'DELETE', path: `/api/token/${id}`, signal: opts.signal }, `delete key ${id}`);
  }
}

export class Account {
  readonly tokens: Tokens;
  private readonly api: AccountTransport;

  constructor(transport: Transport) {
    this.api = new AccountTransport(transport);
    this.tokens = new Tokens(this.api);
  }

  /** The user and balance (dollars = quota / 500,000). */
  async self(opts: RequestOptions = {}): Promise<AccountUser> {
    const data = await this.api.call({ method: 'GET', path: '/api/user/self', signal: opts.signal }, 'read the account');
    const r = z.looseObject({ username: z.string(), quota: z.number(), used_quota: z.number().optional(), id: z.number().optional() }).safeParse(data);
    if (!r.success) throw new GatewayError("The account API's user record has no username or quota.", { type: 'invalid_response' });
    return { username: r.data.username, quota: r.data.quota, balanceDollars: quotaToDollars(r.data.quota), usedQuota: r.data.used_quota, id: r.data.id, raw: r.data };
  }

  /**
   * `GET /api/user/token`. On one-api and new-api this generates a new system access token,
   * which replaces the current one.
   */
  async userToken(opts: RequestOptions = {}): Promise<string> {
    const data = await this.api.call({ method: 'GET', path: '/api/user/token', signal: opts.signal }, 'read the user token');
    if (typeof data === 'string') return data;
    const t = (data as { token?: unknown; access_token?: unknown } | null)?.token ?? (data as { access_token?: unknown } | null)?.access_token;
    if (typeof t === 'string') return t;
    throw new GatewayError("The account API's user token answer holds no token.", { type: 'invalid_response' });
  }

  /** All models (`data` as objects with `id`, strings, or a map of channel type to ids). */
  async models(opts: RequestOptions = {}): Promise<string[]> {
    return modelIds(await this.api.call({ method: 'GET', path: '/api/models', signal: opts.signal }, 'list models'));
  }

  /** Models this account may use (`/api/user/available_models`, or new-api's `/api/user/models`). */
  async availableModels(opts: RequestOptions = {}): Promise<string[]> {
    try {
      return modelIds(await this.api.call({ method: 'GET', path: '/api/user/available_models', signal: opts.signal }, 'list available models'));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return modelIds(await this.api.call({ method: 'GET', path: '/api/user/models', signal: opts.signal }, 'list available models'));
    }
  }
}

function modelIds(data: unknown): string[] {
  const ids = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string') ids.add(v);
    else if (v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string') ids.add((v as { id: string }).id);
  };
  if (Array.isArray(data)) data.forEach(add);
  else if (data && typeof data === 'object') for (const v of Object.values(data)) (Array.isArray(v) ? v : [v]).forEach(add);
  return [...ids].sort();
}
