// Small helpers with no dependencies, shared by the client and the UI bundle.

/** 1 dollar = 500,000 quota units (spec, Limits). */
export const QUOTA_PER_DOLLAR = 500_000;

export function quotaToDollars(quota: number): number {
  return quota / QUOTA_PER_DOLLAR;
}

export function dollarsToQuota(dollars: number): number {
  return Math.round(dollars * QUOTA_PER_DOLLAR);
}

/** `$12.34`; amounts under a cent keep four decimals. */
export function formatDollars(d: number): string {
  return `$${d.toFixed(d !== 0 && Math.abs(d) < 0.01 ? 4 : 2)}`;
}

/** A cost: `$1.23`, and four decimals under a dollar (`$0.0123`), as one answer or day often costs cents. */
export function formatCost(d: number): string {
  return `$${d.toFixed(Math.abs(d) >= 1 || d === 0 ? 2 : 4)}`;
}

/**
 * Whether a key record (whole, or masked as a server lists it: first and last four) is the key
 * in use. A masked match is a strong hint, not proof; it is only used to warn and to label.
 */
export function isSameKey(listed: string, inUse: string | undefined): boolean {
  if (!inUse) return false;
  const a = listed.replace(/^sk-/, '');
  const b = inUse.replace(/^sk-/, '');
  if (!a.includes('*')) return a === b;
  return b.length >= 12 && a.slice(0, 4) === b.slice(0, 4) && a.slice(-4) === b.slice(-4);
}

/** `sk-abcd…wxyz`: enough to recognise a key, never enough to use it. */
export function maskKey(key: string): string {
  const raw = key.replace(/^sk-/, '');
  if (raw.includes('*')) return `sk-${raw.slice(0, 4)}…${raw.slice(-4)}`;
  if (raw.length < 12) return `sk-${raw.slice(0, 4)}…`;
  return `sk-${raw.slice(0, 4)}…${raw.slice(-4)}`;
}
