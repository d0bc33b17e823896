import * as vscode from 'vscode';
import { redact } from './redact';
import { loadGateway, type Services } from './services';

export interface FixAction {
  title: string;
  run: () => Thenable<unknown> | void;
}

/** The message to show for an error, and the actions that fix it. Never contains a secret. */
export function describeError(services: Services, err: unknown): { message: string; actions: FixAction[] } {
  const gw = loadGateway();
  const command = (title: string, id: string, ...args: unknown[]): FixAction => ({ title, run: () => vscode.commands.executeCommand(id, ...args) });
  const setKey = command('Set API Key', 'modelGateway.setApiKey');
  const setToken = command('Set Access Token', 'modelGateway.setAccessToken');
  const setUrl = command('Set Gateway URL', 'modelGateway.setBaseUrl');
  const showLog = command('Show Log', 'modelGateway.showLog');
  // Gateway errors are cleaned where they are made; anything else is cleaned here.
  const message = redact(err instanceof Error ? err.message : String(err), services.credentials.values());
  if (err instanceof gw.MissingCredentialError) {
    if (/system access token/i.test(message)) return { message, actions: [setToken] };
    if (/URL/.test(message)) return { message, actions: [setUrl] };
    return { message, actions: [setKey] };
  }
  if (err instanceof gw.AuthenticationError) {
    // A key the gateway knows but refuses (own quota used up, expired, disabled) is fixed in the Account view.
    if (err.keyRefusal !== 'invalid') return { message, actions: [command('Open Account View', 'modelGateway.account.focus'), setKey] };
    return { message, actions: [setKey] };
  }
  if (err instanceof gw.KeyStateError) return { message, actions: [command('Edit Key', 'modelGateway.keys.edit')] };
  if (err instanceof gw.AccountApiError) {
    if (err.type === 'authentication_error') {
      const actions = [setToken];
      if (err.code === gw.NEW_API_USER_REQUIRED) return { message, actions: [command('Set Account User Id', 'modelGateway.setAccountUserId'), setToken] };
      return { message, actions };
    }
    return { message, actions: [showLog] };
  }
  if (err instanceof gw.PermissionDeniedError) {
    const base = services.settings().baseUrl;
    const topUp: FixAction = { title: 'Top Up Balance', run: () => vscode.env.openExternal(vscode.Uri.parse(base)) };
    const pick = command('Pick Another Model', 'modelGateway.models.setDefault');
    switch (err.cause403) {
      case 'balance':
        return { message, actions: [topUp] };
      case 'model':
        return { message, actions: [pick] };
      default:
        return { message, actions: [setKey, topUp] };
    }
  }
  if (err instanceof gw.ServiceUnavailableError) return { message, actions: [command('Pick Another Model', 'modelGateway.models.setDefault')] };
  if (err instanceof gw.ConnectionError || err instanceof gw.TimeoutError) return { message, actions: [setUrl, showLog] };
  if (err instanceof gw.ValidationError || err instanceof gw.AbortError) return { message, actions: [] };
  return { message, actions: [showLog] };
}

/**
 * Logs the error (redacted) and shows it with its fixing actions. Does not wait for the person:
 * the calling command finishes at once and the chosen action runs when it is clicked.
 */
export function showGatewayError(services: Services, what: string, err: unknown): void {
  services.log.error(what, err);
  const { message, actions } = describeError(services, err);
  services.recordNotice('error', `${what}: ${message}`);
  void vscode.window.showErrorMessage(`${what}: ${message}`, ...actions.map((a) => a.title)).then((choice) => actions.find((a) => a.title === choice)?.run());
}

/** Shows a message without waiting for it to be dismissed, and records it; resolves to the chosen item. */
export function tell(services: Services, level: 'info' | 'warning' | 'error', message: string, ...items: string[]): Thenable<string | undefined> {
  services.recordNotice(level, message);
  const show = level === 'error' ? vscode.window.showErrorMessage : level === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(message, ...items);
}
