import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type * as z from 'zod/mini';
import { escapeHtml } from '../common/html';
import { languageScriptJson, WEBVIEW_LANGUAGE_ELEMENT } from '../common/webviewLanguage';
import { webviewLanguage } from './language';
import type { Log } from './log';

/** A webview page: our scripts and stylesheets only, under a CSP with a fresh nonce. */
export interface WebviewPage {
  title: string;
  /** Paths under the extension, e.g. `['dist', 'webview.js']`; each runs with the page's nonce. */
  scripts?: string[][];
  /** Paths under the extension, e.g. `['dist', 'chat.css']`. */
  stylesheets?: string[][];
  /** A `<style>` block allowed by the nonce (no scripts needed for it). */
  inlineStyle?: string;
  /** The body's inner HTML: the caller escapes what it puts in. */
  body: string;
  /** Attributes of `<body>` (values escaped here). */
  bodyAttributes?: Record<string, string>;
  /** Sources allowed besides the webview's own, e.g. `{ img: ['data:'] }`. */
  allow?: { img?: string[]; media?: string[] };
}

/**
 * The one place a webview's HTML is made: `default-src 'none'`, scripts only by nonce, images,
 * fonts, media and styles only from the extension (and what the page names in `allow`).
 */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, page: WebviewPage): string {
  const nonce = randomBytes(18).toString('base64');
  const uri = (p: string[]) => escapeHtml(webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString());
  const source = webview.cspSource;
  const csp = [
    "default-src 'none'",
    `img-src ${[source, ...(page.allow?.img ?? [])].join(' ')}`,
    `media-src ${[source, ...(page.allow?.media ?? [])].join(' ')}`,
    `style-src ${source}${page.inlineStyle ? ` 'nonce-${nonce}'` : ''}`,
    `font-src ${source}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const attributes = Object.entries(page.bodyAttributes ?? {})
    .map(([k, v]) => ` ${k}="${escapeHtml(v)}"`)
    .join('');
  const language = webviewLanguage();
  const languageScript = page.scripts?.length
    ? `<script type="application/json" id="${WEBVIEW_LANGUAGE_ELEMENT}">${languageScriptJson(language)}</script>`
    : '';
  return `<!DOCTYPE html><html lang="${escapeHtml(language.language)}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
${(page.stylesheets ?? []).map((p) => `<link rel="stylesheet" href="${uri(p)}">`).join('\n')}
${page.inlineStyle ? `<style nonce="${nonce}">${page.inlineStyle}</style>` : ''}
<title>${escapeHtml(page.title)}</title></head>
<body${attributes}>${page.body}${languageScript}${(page.scripts ?? []).map((p) => `<script nonce="${nonce}" src="${uri(p)}"></script>`).join('')}</body></html>`;
}

/**
 * Listens to a webview: each message is checked against the view's protocol before it is handled;
 * one of another shape is logged (its first problem, never its content) and dropped.
 */
export function receiveChecked<T>(
  webview: vscode.Webview,
  schema: z.ZodMiniType<T>,
  view: string,
  log: Log,
  handle: (message: T) => unknown,
): vscode.Disposable {
  return webview.onDidReceiveMessage((raw: unknown) => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      log.warn(`${view}: ignored a message that is not in its protocol (${parsed.error.issues[0]?.message ?? 'wrong shape'})`);
      return;
    }
    void handle(parsed.data);
  });
}
