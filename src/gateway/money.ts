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

/** `sk-abcd…wxyz`: enough to recognise a key, never enough to use it. */
export function maskKey(key: string): string {
  const raw = key.replace(/^sk-/, '');
  if (raw.includes('*')) return `sk-${raw.slice(0, 4)}…${raw.slice(-4)}`;
  if (raw.length < 12) return `sk-${raw.slice(0, 4)}…`;
  return `sk-${raw.slice(0, 4)}…${raw.slice(-4)}`;
}
