/** A request field as text: strings as they are, numbers and booleans spelled out, anything else the fallback. */
export function asText(v: unknown, fallback = ''): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return fallback;
}
