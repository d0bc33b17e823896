/**
 * API keys of the account (`/api/token/...`), as one-api and new-api serve them: paged lists in
 * either shape, creation that may answer with nothing, reveal, status-only enable/disable.
 */
import * as z from '../core/z';
import { AccountApiError, GatewayError, NotFoundError } from '../core/errors';
import { validateRequest } from '../core/validate';
import type { AccountTransport } from '../core/accountApi';
import type { RequestOptions } from '../core/requestOptions';

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
    expired_time: z
      .number()
      .int()
      .refine((v) => v === -1 || v > 0, 'must be -1 (never) or a Unix time in seconds')
      .default(-1),
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
  expired_time: z
    .number()
    .int()
    .refine((v) => v === -1 || v > 0, 'must be -1 (never) or a Unix time in seconds')
    .optional(),
  remain_quota: z.number().int().nonnegative('must not be negative').optional(),
  unlimited_quota: z.boolean().optional(),
  subnet: z.string().optional(),
});
export type UpdateKeyRequest = z.input<typeof UpdateKeySchema>;

/** An enable the server refused, with what the person must change first. */
function refusedEnable(err: AccountApiError): AccountApiError {
  const said = err.message.replace(/^The account API refused to [^:]+: /, '');
  if (/过期|expired/i.test(said)) {
    return new KeyStateError(
      `The key has expired, so the gateway will not enable it: extend its expiry (or make it never expire), then enable it. (Gateway said: ${said})`,
      'extend-expiry',
    );
  }
  if (/额度|quota|exhausted/i.test(said)) {
    return new KeyStateError(
      `The key's quota is used up, so the gateway will not enable it: raise its quota (or make it unlimited), then enable it. (Gateway said: ${said})`,
      'raise-quota',
    );
  }
  return err;
}

function parseKeys(items: unknown[], what: string): ApiKeyRecord[] {
  return items.map((item) => {
    const r = KeyRaw.safeParse(item);
    if (!r.success) throw new GatewayError(`The account API's answer to ${what} has a key record without an id.`, { type: 'invalid_response' });
    return toRecord(r.data);
  });
}

/** Pages of a list answer: new-api's `{page, page_size, total, items}` or one-api's bare array. */
interface PageOf {
  items: unknown[];
  /** new-api: the page it answered (1-based) and the total. */
  page?: number;
  total?: number;
}

function pageOf(data: unknown, what: string): PageOf {
  if (Array.isArray(data)) return { items: data };
  if (data && typeof data === 'object' && Array.isArray((data as { items?: unknown }).items)) {
    const d = data as { items: unknown[]; total?: unknown; page?: unknown };
    return { items: d.items, total: typeof d.total === 'number' ? d.total : undefined, page: typeof d.page === 'number' ? d.page : undefined };
  }
  if (data === null || data === undefined) return { items: [] };
  throw new GatewayError(`The account API's answer to ${what} holds no list.`, { type: 'invalid_response' });
}

/** Pages the list (or search) reads at most; 100 keys a page on new-api, 10 on one-api. */
const MAX_PAGES = 200;
const PAGE_SIZE = 100;

export type KeyFix = 'extend-expiry' | 'raise-quota';

/** A refused enable: the key is expired or exhausted, and which edit fixes it. */
export class KeyStateError extends AccountApiError {
  override readonly name: string = 'KeyStateError';
  constructor(
    message: string,
    readonly fix: KeyFix,
  ) {
    super(message, { type: 'key_state', code: fix });
  }
}

export class Tokens {
  constructor(private readonly api: AccountTransport) {}

  /**
   * One page of keys as the server cuts it. `page` counts from 0 on one-api and from 1 on
   * new-api (where 0 also means the first page); one-api ignores `pageSize` (10 a page).
   */
  async list(params: { page?: number; pageSize?: number } = {}, opts: RequestOptions = {}): Promise<{ items: ApiKeyRecord[]; total?: number }> {
    const data = await this.api.call(
      { method: 'GET', path: '/api/token/', query: { p: params.page ?? 0, page_size: params.pageSize ?? PAGE_SIZE }, signal: opts.signal },
      'list keys',
    );
    const { items, total } = pageOf(data, 'list keys');
    return { items: parseKeys(items, 'list keys'), total };
  }

  /** Every key of the account, read page by page on either server. */
  listAll(opts: RequestOptions = {}): Promise<ApiKeyRecord[]> {
    return this.pages('/api/token/', {}, 'list keys', opts);
  }

  /** Keys found by name (one-api: names starting with it; new-api: the exact name), all pages. */
  search(keyword: string, opts: RequestOptions = {}): Promise<ApiKeyRecord[]> {
    return this.pages('/api/token/search', { keyword }, 'search keys', opts);
  }

  /**
   * Reads a paged list to its end. The first request asks for `p=0`, the first page on both
   * servers; the answer's shape says which server it is: new-api's object carries its page and
   * total (next `p` is page+1), one-api's bare array counts pages from 0 with a fixed size (next
   * `p` is 1, then 2… until a page comes back short or empty). A page that repeats keys already
   * seen ends the walk, so a server that ignores `p` cannot loop.
   */
  private async pages(path: string, query: Record<string, string>, what: string, opts: RequestOptions): Promise<ApiKeyRecord[]> {
    const seen = new Map<number, ApiKeyRecord>();
    let p = 0;
    let largest = 0;
    for (let n = 0; n < MAX_PAGES; n++) {
      const data = await this.api.call({ method: 'GET', path, query: { ...query, p, page_size: PAGE_SIZE }, signal: opts.signal }, what);
      const page = pageOf(data, what);
      const keys = parseKeys(page.items, what);
      const fresh = keys.filter((k) => !seen.has(k.id));
      for (const k of fresh) seen.set(k.id, k);
      if (fresh.length === 0) break;
      if (page.page !== undefined || page.total !== undefined) {
        if (page.total !== undefined && seen.size >= page.total) break;
        p = (page.page ?? p) + 1;
      } else {
        largest = Math.max(largest, keys.length);
        if (keys.length < largest) break;
        p += 1;
      }
    }
    return [...seen.values()].sort((a, b) => b.id - a.id);
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
      const fromList = found.length > 0 ? found : (await this.listAll(opts)).filter((k) => k.name === req.name);
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

  /**
   * Updates name, expiry, quota or subnet. Without `status_only` both servers replace the whole
   * record from the body (a field left out is emptied) and ignore `status`, so the current record
   * is read first and merged; the status is never sent here (see `setEnabled`).
   */
  async update(body: UpdateKeyRequest, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    const req = validateRequest(UpdateKeySchema, body);
    const current = await this.get(req.id, opts);
    const merged: Record<string, unknown> = {
      ...current.raw,
      id: req.id,
      name: req.name ?? current.name,
      expired_time: req.expired_time ?? current.expiredTime,
      remain_quota: req.remain_quota ?? current.remainQuota,
      unlimited_quota: req.unlimited_quota ?? current.unlimitedQuota,
      subnet: req.subnet ?? current.subnet,
      allow_ips: req.subnet ?? current.subnet,
    };
    delete merged.key;
    delete merged.status;
    const data = await this.api.call({ method: 'PUT', path: '/api/token/', json: merged, signal: opts.signal }, `update key ${req.id}`);
    return data && typeof data === 'object' && 'id' in data ? parseKeys([data], 'update a key')[0] : this.get(req.id, opts);
  }

  /**
   * Enables (status 1) or disables (status 2, which both servers' consoles show as disabled) a
   * key with `PUT /api/token/?status_only=1`: the only update that changes a status on one-api
   * and new-api. An expired or exhausted key cannot be enabled; the error says what to edit.
   */
  async setEnabled(id: number, enabled: boolean, opts: RequestOptions = {}): Promise<ApiKeyRecord> {
    let data: unknown;
    try {
      data = await this.api.call(
        { method: 'PUT', path: '/api/token/', query: { status_only: 1 }, json: { id, status: enabled ? 1 : 2 }, signal: opts.signal },
        `${enabled ? 'enable' : 'disable'} key ${id}`,
      );
    } catch (err) {
      if (enabled && err instanceof AccountApiError && err.type !== 'authentication_error') throw refusedEnable(err);
      throw err;
    }
    const record = data && typeof data === 'object' && 'id' in data ? parseKeys([data], 'change a key')[0] : await this.get(id, opts);
    // A server that answered success but kept the status is a failure the person must hear of.
    if (record.enabled !== enabled)
      throw new AccountApiError(`The gateway accepted the change but key ${id} is still ${record.state}.`, { type: 'account_error' });
    return record;
  }

  async delete(id: number, opts: RequestOptions = {}): Promise<void> {
    await this.api.call({ method: 'DELETE', path: `/api/token/${id}`, signal: opts.signal }, `delete key ${id}`);
  }
}
