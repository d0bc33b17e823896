// Imported first by each webview entry: the page's language is set before any module says a word.
import * as l10n from '@vscode/l10n';
import { setDisplayLocale } from '../common/locale';
import { WEBVIEW_LANGUAGE_ELEMENT, WebviewLanguage } from '../common/webviewLanguage';

function readLanguage(): WebviewLanguage | undefined {
  const text = document.getElementById(WEBVIEW_LANGUAGE_ELEMENT)?.textContent;
  if (!text) return undefined;
  try {
    const parsed = WebviewLanguage.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const page = readLanguage();
if (page) {
  setDisplayLocale(page.language);
  if (page.bundle) l10n.config({ contents: page.bundle });
}
