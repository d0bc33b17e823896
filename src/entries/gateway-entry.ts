// The gateway client as its own bundle (dist/gateway.js), loaded on first use so that
// activation does not pay for undici and the schemas.
import * as l10n from '@vscode/l10n';

export * from '../gateway';

/** This bundle's copy of @vscode/l10n speaks the display language (shell/language.ts). */
export function useTranslations(contents: l10n.l10nJsonFormat): void {
  l10n.config({ contents });
}
