import * as z from '../core/z';
import { AccountApiError, AuthenticationError, GatewayError, NotFoundError } from '../core/errors';
import type { RequestSpec, Transport } from '../core/transport';
import type { RequestOptions } from './chat';
import { quotaToDollars } from '../../common/money';
import { Tokens } from './tokens';
import { Usage } from './usage';

export { QUOTA_PER_DOLLAR, dollarsToQuota, formatDollars, maskKey, quotaToDollars } from '../../common/money';
export * from './tokens';
export * from './usage';

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

const Envelope = z.looseObject({ success: z.boolean().optional(), message: z.string().optional(), data: z.unknown().optional() });

const AUTH_WORDS = /access token|未登录|未提供|token 无效|无权|New-Api-User|unauthori/i;

/** The account API's transport: access-token auth and the `{success, message, data}` envelope. */
export class AccountTransport {
  constructor(private readonly transport: Transport) {}

  /** Calls the account API and unwraps `{success, message, data}`; `success:false` throws. */
  async call(spec: Omit<RequestSpec, 'auth'>, what: string): Promise<unknown> {
    let data: unknown;
    try {
      ({ data } = await this.transport.json({ ...spec, auth: 'account' }));
    } catch (err) {
      if (err instanceof AuthenticationError) throw accessRefused(err.serverMessage, err.code);
      throw err;
    }
    const env = Envelope.safeParse(data);
    if (!env.success) throw new GatewayError(`The account API's answer to ${what} is not an envelope.`, { type: 'invalid_response' });
    if (env.data.success === false) {
      const message = env.data.message || 'the account API refused the request';
      if (AUTH_WORDS.test(message)) throw accessRefused(message, (env.data as { code?: string }).code);
      throw new AccountApiError(`The account API refused to ${what}: ${message}`, { type: 'account_error', code: (env.data as { code?: string }).code });
    }
    return env.data.data;
  }
}

/** Code of the refusal new-api gives when `New-Api-User` is missing or wrong. */
export const NEW_API_USER_REQUIRED = 'new_api_user_required';

/**
 * The access token refused (401, or `success:false` in its words). new-api (2025) also wants the
 * account's numeric user id in `New-Api-User`; that refusal has its own code so the UI can ask
 * for the id instead of a new token.
 */
function accessRefused(said: string, code?: string): AccountApiError {
  if (/New-Api-User/i.test(said)) {
    return new AccountApiError(
      `This gateway (new-api) needs the account's numeric user id with the access token (${said}). Set the account user id: it is the ID shown in the gateway console's personal settings.`,
      { status: 401, type: 'authentication_error', code: NEW_API_USER_REQUIRED },
    );
  }
  return new AccountApiError(
    `The account API refused the system access token (${said}). Set a valid system access token from the gateway console's account settings.`,
    { status: 401, type: 'authentication_error', code },
  );
}

export class Account {
  readonly tokens: Tokens;
  readonly usage: Usage;
  private readonly api: AccountTransport;

  constructor(transport: Transport) {
    this.api = new AccountTransport(transport);
    this.tokens = new Tokens(this.api);
    this.usage = new Usage(this.api, transport);
  }

  /** The user and balance (dollars = quota / 500,000). */
  async self(opts: RequestOptions = {}): Promise<AccountUser> {
    const data = await this.api.call({ method: 'GET', path: '/api/user/self', signal: opts.signal }, 'read the account');
    const r = z.looseObject({ username: z.string(), quota: z.number(), used_quota: z.number().optional(), id: z.number().optional(), group: z.string().optional() }).safeParse(data);
    if (!r.success) throw new GatewayError("The account API's user record has no username or quota.", { type: 'invalid_response' });
    return { username: r.data.username, group: r.data.group, quota: r.data.quota, balanceDollars: quotaToDollars(r.data.quota), usedQuota: r.data.used_quota, id: r.data.id, raw: r.data };
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
