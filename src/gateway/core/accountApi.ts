import * as l10n from '@vscode/l10n';
import * as z from './z';
import { AccountApiError, AuthenticationError, GatewayError } from './errors';
import type { RequestSpec, Transport } from './transport';

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
      const message = env.data.message || l10n.t('the account API refused the request');
      if (AUTH_WORDS.test(message)) throw accessRefused(message, (env.data as { code?: string }).code);
      throw new AccountApiError(l10n.t('The account API refused to {0}: {1}', what, message), {
        type: 'account_error',
        code: (env.data as { code?: string }).code,
      });
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
      l10n.t(
        "This gateway (new-api) needs the account's numeric user id with the access token ({0}). Set the account user id: it is the ID shown in the gateway console's personal settings.",
        said,
      ),
      { status: 401, type: 'authentication_error', code: NEW_API_USER_REQUIRED },
    );
  }
  return new AccountApiError(
    l10n.t("The account API refused the system access token ({0}). Set a valid system access token from the gateway console's account settings.", said),
    { status: 401, type: 'authentication_error', code },
  );
}
