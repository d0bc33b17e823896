import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { setDisplayLocale } from '../common/locale';

/**
 * The display language for what the modules without `vscode` say (core/, common/, and the
 * gateway bundle, each of which holds its own copy of `@vscode/l10n`): the bundle VS Code loaded
 * for this extension (l10n/bundle.l10n.<language>.json), and the language's number and time formats.
 * In English there is no bundle and every string is its own translation.
 */
export function useDisplayLanguage(): void {
  setDisplayLocale(vscode.env.language);
  shareTranslations((contents) => l10n.config({ contents }));
}

/** Hands VS Code's bundle for this extension to a lazily loaded bundle's copy of `@vscode/l10n`. */
export function shareTranslations(configure: (contents: l10n.l10nJsonFormat) => void): void {
  if (vscode.l10n.bundle) configure(vscode.l10n.bundle);
}

/** What the webviews get to speak the same language (their messages carry it; see chatProtocol). */
export function webviewLanguage(): { language: string; bundle?: Record<string, string> } {
  return { language: vscode.env.language, ...(vscode.l10n.bundle ? { bundle: vscode.l10n.bundle } : {}) };
}
