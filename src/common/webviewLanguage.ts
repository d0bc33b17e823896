import * as z from 'zod/mini';

/**
 * The display language a webview speaks, handed over in its page (a JSON script element with this
 * id, written by the host's webviewHtml): the language tag and, except in English, the
 * extension's translations (the bundle VS Code loaded for it). The webview checks it with this schema.
 */
export const WEBVIEW_LANGUAGE_ELEMENT = 'model-gateway-language';

export const WebviewLanguage = z.object({
  language: z.string().check(z.maxLength(40)),
  bundle: z.optional(z.record(z.string(), z.string())),
});
export type WebviewLanguage = z.infer<typeof WebviewLanguage>;

/** JSON that is safe inside a <script> element: no `<` can close it. */
export function languageScriptJson(value: WebviewLanguage): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
