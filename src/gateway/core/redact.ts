/**
 * Removes credentials from text before anything shows, logs or stores it.
 *
 * Known secrets (the API key and access token a client was built with) are removed in every form
 * a server may echo them: whole, without the `sk-` prefix (one-api and new-api store and print
 * keys without it), and URL-encoded. Unknown secrets are caught by shape: key-like tokens, bearer
 * credentials, credential fields in JSON and headers, credential parameters in URLs, and the
 * user:password part of a URL.
 */
export const REDACTED = '«redacted»';

/** Shorter values are not treated as secrets: replacing them would garble ordinary text. */
const MIN_SECRET_LENGTH = 8;

const registered = new Set<string>();

/** Every form of a secret that a server or a URL may carry. */
export function secretVariants(secret: string): string[] {
  const s = secret.trim();
  if (s.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set([s]);
  const bare = s.replace(/^sk-/, '');
  if (bare.length >= MIN_SECRET_LENGTH) forms.add(bare);
  for (const f of [...forms]) forms.add(encodeURIComponent(f));
  // Longest first, so that the whole key goes before its bare tail.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Adds a credential this process uses; every GatewayError message is cleaned of it from now on. */
export function registerSecret(secret: string | undefined): void {
  if (!secret) return;
  for (const v of secretVariants(secret)) registered.add(v);
}

const FIELD_NAMES = String.raw`x-goog-api-key|x-api-key|api-key|api_key|apikey|authorization|access_token|accesstoken|refresh_token|token|key|secret|client_secret|password|new-api-user`;
const JSON_FIELD = new RegExp(String.raw`("(?:${FIELD_NAMES})"\s*:\s*")((?:[^"\\]|\\.)+)(")`, 'gi');
/** Fields as `util.inspect` prints them: single-quoted values, keys quoted with `'` or bare (`{ 'x-api-key': '…', token: '…' }`). */
const INSPECT_FIELD = new RegExp(String.raw`((?:'(?:${FIELD_NAMES})'|\b(?:${FIELD_NAMES}))\s*:\s*')((?:[^'\\]|\\.)+)(')`, 'gi');
const HEADER_LINE = /\b(x-goog-api-key|x-api-key|api-key|authorization|proxy-authorization)(\s*[:=]\s*)(?:(bearer|basic)\s+)?([^\s"',;]+)/gi;
const BEARER = /\b(Bearer|Basic)\s+(?!«)[A-Za-z0-9._~+/=-]{6,}/g;
const URL_PARAM =
  /([?&](?:key|api[_-]?key|access[_-]?token|token|auth|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)[^&#\s"'<>]+/gi;
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;
const KEY_SHAPED = /\bsk-(?!«)[A-Za-z0-9_-]{6,}/g;

/** The text without the given or registered secrets, nor anything shaped like a credential. */
export function redactSecrets(text: string, extra: readonly (string | undefined)[] = []): string {
  if (!text) return text;
  let out = text;
  const known = new Set(registered);
  for (const s of extra) if (s) for (const v of secretVariants(s)) known.add(v);
  for (const v of [...known].sort((a, b) => b.length - a.length)) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return out
    .replace(JSON_FIELD, (_m, open: string, value: string, close: string) => (value === REDACTED ? `${open}${value}${close}` : `${open}${REDACTED}${close}`))
    .replace(INSPECT_FIELD, (_m, open: string, value: string, close: string) => (value === REDACTED ? `${open}${value}${close}` : `${open}${REDACTED}${close}`))
    .replace(HEADER_LINE, (_m, name: string, sep: string, scheme: string | undefined) => `${name}${sep}${scheme ? `${scheme} ` : ''}${REDACTED}`)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(URL_PARAM, `$1${REDACTED}`)
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(KEY_SHAPED, `sk-${REDACTED}`);
}
