import * as vscode from 'vscode';
import { redact } from './redact';
import { factsOf, fixesFor } from './fixes';
import type { Services } from './services';

export interface FixAction {
  title: string;
  run: () => Thenable<unknown> | void;
}

/** The message to show for an error, and the actions that fix it (`fixes.ts`). Never contains a secret. */
export function describeError(services: Services, err: unknown): { message: string; actions: FixAction[] } {
  // Gateway errors are cleaned where they are made; anything else is cleaned here.
  const message = redact(err instanceof Error ? err.message : String(err), services.credentials.values());
  const fixes = fixesFor({ ...factsOf(err), message }, { hasBaseUrl: !!services.settings().baseUrl, place: 'notification' });
  return { message, actions: fixes.map((f) => ({ title: f.title, run: () => vscode.commands.executeCommand(f.command) })) };
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
