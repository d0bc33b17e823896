/**
 * Removes secrets from text before it is logged or shown: the known values in use, anything
 * shaped like a gateway key, and bearer credentials.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('«redacted»');
  return out
    .replace(/\bsk-[A-Za-z0-9_-]{6,}/g, 'sk-«redacted»')
    .replace(/\b(Bearer|Api-Key:|x-api-key:)\s+[^\s"',]+/gi, '$1 «redacted»');
}
