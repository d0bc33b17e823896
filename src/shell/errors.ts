import * as vscode from 'vscode';
import { redact } from './redact';
import { factsOf, fixesFor } from '../common/fixes';
import type { GatewayConnection, GatewayFeature } from './services';

export interface FixAction {
  title: string;
  run: () => Thenable<unknown> | void;
}

/** The message to show for an error, and the actions that fix it (`fixes.ts`). Never contains a secret. */
export function describeError(services: GatewayFeature, err: unknown): { message: string; actions: FixAction[] } {
  // Gateway errors are cleaned where they are made; anything else is cleaned here.
  const message = redact(err instanceof Error ? err.message : String(err));
  const fixes = fixesFor({ ...factsOf(err), message }, { hasBaseUrl: !!services.settings().baseUrl, place: 'notification' });
  return { message, actions: fixes.map((f) => ({ title: f.title, run: () => vscode.commands.executeCommand(f.command) })) };
}

/** An error notification still on screen (not yet answered or closed). */
const OPEN = Number.POSITIVE_INFINITY;
/** The same error is not notified again within this long of the last one being closed. */
const REPEAT_AFTER_MS = 60_000;
/**
 * Causes that outlive the action that met them (credentials, balance, reachability): several
 * parts meet them at once. Anything else answers what the person just did and is always shown.
 */
const STANDING_CAUSES = new Set([
  'AuthenticationError',
  'PermissionDeniedError',
  'MissingCredentialError',
  'ConnectionError',
  'ProxyError',
  'TlsError',
  'TimeoutError',
  'ServiceUnavailableError',
  'AccountApiError',
]);
const shownBy = new WeakMap<GatewayConnection, Map<string, number>>();

/**
 * The error notifications of one extension instance, by message. A cause several parts report
 * at once (a refused key: the status check, the Account view, the chat's model list) is one
 * notification; a change of URL or credentials (the likely fix) lets it show again.
 */
function shownErrors(services: GatewayFeature): Map<string, number> {
  let shown = shownBy.get(services);
  if (!shown) {
    const map = new Map<string, number>();
    shown = map;
    shownBy.set(services, map);
    services.onDidChangeConnection(() => map.clear());
  }
  return shown;
}

/**
 * Logs the error (redacted) and shows it with its fixing actions, unless the same error is on
 * screen or was just closed. Does not wait for the person: the calling command finishes at once
 * and the chosen action runs when it is clicked.
 */
export function showGatewayError(services: GatewayFeature, what: string, err: unknown): void {
  services.log.error(what, err);
  const { message, actions } = describeError(services, err);
  const shown = shownErrors(services);
  const last = shown.get(message);
  if (STANDING_CAUSES.has(factsOf(err).kind) && last !== undefined && (last === OPEN || Date.now() - last < REPEAT_AFTER_MS)) {
    services.log.info(`${what}: the same error is already shown; not notified again`);
    return;
  }
  shown.set(message, OPEN);
  const text = vscode.l10n.t('{0}: {1}', what, message);
  services.recordNotice('error', text);
  void vscode.window.showErrorMessage(text, ...actions.map((a) => a.title)).then((choice) => {
    if (shown.get(message) === OPEN) shown.set(message, Date.now());
    return actions.find((a) => a.title === choice)?.run();
  });
}

/** Shows a message without waiting for it to be dismissed, and records it; resolves to the chosen item. */
export function tell(services: GatewayFeature, level: 'info' | 'warning' | 'error', message: string, ...items: string[]): Thenable<string | undefined> {
  services.recordNotice(level, message);
  const show =
    level === 'error' ? vscode.window.showErrorMessage : level === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(message, ...items);
}
