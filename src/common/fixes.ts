/**
 * The one map from an error to the actions that fix it, shared by notifications and the chat's
 * error cards. Pure (no `vscode`): it reads the facts an error carries, so a stored chat turn
 * (which keeps only those facts) gets the same buttons as a live error.
 */
import * as l10n from '@vscode/l10n';

/** What an error says about itself: its class name and the fields the fixes depend on. */
export interface ErrorFacts {
  kind: string;
  message: string;
  cause403?: string;
  keyRefusal?: string;
  /** The account API's error type and code (new-api's user id, for one). */
  type?: string;
  code?: string;
}

export interface Fix {
  title: string;
  command: FixCommand;
}

/**
 * Every command a fix may run. Webviews send a fix back by its command id; the hosts accept only
 * these (never an arbitrary command id from a webview).
 */
export const FIX_COMMANDS = [
  'modelGateway.setApiKey',
  'modelGateway.setAccessToken',
  'modelGateway.setBaseUrl',
  'modelGateway.setAccountUserId',
  'modelGateway.useCredentialsHere',
  'modelGateway.topUp',
  'modelGateway.chat.pickModel',
  'modelGateway.models.setDefault',
  'modelGateway.account.focus',
  'modelGateway.keys.edit',
  'modelGateway.showLog',
  'modelGateway.openSettings',
  'modelGateway.openNetworkSettings',
  'modelGateway.mcp.reviewWaiting',
] as const;
export type FixCommand = (typeof FIX_COMMANDS)[number];

/** The gateway client's error type for a credential held for another origin (`src/gateway/core/transport.ts`). */
const CREDENTIAL_WITHHELD = 'credential_withheld';

/** Where the fix is offered: the chat picks its own model, elsewhere the default model is set. */
export type FixPlace = 'chat' | 'notification';

/** The account API's code when new-api wants the user id header (`src/gateway/core/accountApi.ts`). */
const NEW_API_USER_REQUIRED = 'new_api_user_required';

export function factsOf(err: unknown): ErrorFacts {
  const e = (err ?? {}) as Partial<Record<'name' | 'message' | 'cause403' | 'keyRefusal' | 'type' | 'code', unknown>>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    kind: (err instanceof Error ? err.name : str(e.name)) ?? 'Error',
    message: err instanceof Error ? err.message : (str(e.message) ?? String(err)),
    cause403: str(e.cause403),
    keyRefusal: str(e.keyRefusal),
    type: str(e.type),
    code: str(e.code),
  };
}

export function fixesFor(e: ErrorFacts, ctx: { hasBaseUrl: boolean; place: FixPlace }): Fix[] {
  const setKey: Fix = { title: l10n.t('Set API Key'), command: 'modelGateway.setApiKey' };
  const setToken: Fix = { title: l10n.t('Set Access Token'), command: 'modelGateway.setAccessToken' };
  const setUrl: Fix = { title: l10n.t('Set Gateway URL'), command: 'modelGateway.setBaseUrl' };
  const showLog: Fix = { title: l10n.t('Show Log'), command: 'modelGateway.showLog' };
  const topUp: Fix = { title: l10n.t('Top Up Balance'), command: 'modelGateway.topUp' };
  const pickModel: Fix = {
    title: l10n.t('Pick Another Model'),
    command: ctx.place === 'chat' ? 'modelGateway.chat.pickModel' : 'modelGateway.models.setDefault',
  };
  switch (e.kind) {
    case 'MissingCredentialError': {
      // The code names the credential; a turn stored before codes existed has only the English message.
      const token = e.code ? e.code === 'system_access_token' : /system access token/i.test(e.message);
      if (e.type === CREDENTIAL_WITHHELD)
        return [{ title: l10n.t('Use My Credentials Here…'), command: 'modelGateway.useCredentialsHere' }, token ? setToken : setKey];
      if (token) return [setToken];
      if (!ctx.hasBaseUrl || (e.code ? e.code === 'base_url' : /URL/.test(e.message))) return [setUrl];
      return [setKey];
    }
    case 'AuthenticationError':
      // A key the gateway knows but refuses (its own quota used up, expired, disabled) is fixed in the Account view.
      return e.keyRefusal && e.keyRefusal !== 'invalid' ? [{ title: l10n.t('Open Account View'), command: 'modelGateway.account.focus' }, setKey] : [setKey];
    case 'KeyStateError':
      return [{ title: l10n.t('Edit Key'), command: 'modelGateway.keys.edit' }];
    case 'AccountApiError':
      if (e.type !== 'authentication_error') return [showLog];
      return e.code === NEW_API_USER_REQUIRED ? [{ title: l10n.t('Set Account User Id'), command: 'modelGateway.setAccountUserId' }, setToken] : [setToken];
    case 'PermissionDeniedError':
      if (e.cause403 === 'balance') return [topUp];
      if (e.cause403 === 'model') return [pickModel];
      return [setKey, topUp];
    case 'ServiceUnavailableError':
    case 'NotFoundError':
      return [pickModel];
    case 'ProxyError':
    case 'TlsError':
      return [{ title: l10n.t('Open Proxy and Certificate Settings'), command: 'modelGateway.openNetworkSettings' }, showLog];
    case 'ConnectionError':
    case 'TimeoutError':
      return [setUrl, showLog];
    case 'RateLimitError':
    case 'ValidationError':
    case 'AbortError':
      return [];
    default:
      return [showLog];
  }
}
