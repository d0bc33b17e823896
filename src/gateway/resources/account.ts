import * as z from '../core/z';
import { AccountTransport } from '../core/accountApi';
import { GatewayError, NotFoundError } from '../core/errors';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { quotaToDollars } from '../../common/money';
import { Tokens } from './tokens';
import { Usage } from './usage';
import { KeyUsage } from './keyUsage';
import { Wallet } from './wallet';

export { NEW_API_USER_REQUIRED } from '../core/accountApi';

export interface AccountUser {
  username: string;
  /** The user's group (new-api prices are multiplied by the group's ratio). */
  group?: string;
  quota: number;
  balanceDollars: number;
  usedQuota?: number;
  id?: number;
  raw: Record<string, unknown>;
}

export class Account {
  readonly tokens: Tokens;
  readonly usage: Usage;
  /** What the API key alone may read about itself (no access token). */
  readonly key: KeyUsage;
  /** Redemption codes, check-in and subscription plans (access token). */
  readonly wallet: Wallet;
  private readonly api: AccountTransport;

  constructor(transport: Transport) {
    this.api = new AccountTransport(transport);
    this.tokens = new Tokens(this.api);
    this.usage = new Usage(this.api, transport);
    this.key = new KeyUsage(transport, this.usage);
    this.wallet = new Wallet(this.api);
  }

  /** The user and balance (dollars = quota / 500,000). */
  async self(opts: RequestOptions = {}): Promise<AccountUser> {
    const data = await this.api.call({ method: 'GET', path: '/api/user/self', signal: opts.signal }, 'read the account');
    const r = z
      .looseObject({ username: z.string(), quota: z.number(), used_quota: z.number().optional(), id: z.number().optional(), group: z.string().optional() })
      .safeParse(data);
    if (!r.success) throw new GatewayError("The account API's user record has no username or quota.", { type: 'invalid_response' });
    return {
      username: r.data.username,
      group: r.data.group,
      quota: r.data.quota,
      balanceDollars: quotaToDollars(r.data.quota),
      usedQuota: r.data.used_quota,
      id: r.data.id,
      raw: r.data,
    };
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
