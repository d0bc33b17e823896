/**
 * How long the balance lasts at the recent rate of spend, and when to warn about it.
 */

export interface DailySpend {
  /** Local calendar day, `YYYY-MM-DD`. */
  day: string;
  dollars: number;
}

export type { Forecast } from '../../common/usageReport';
import type { Forecast } from '../../common/usageReport';

/** Spend over the last `window` complete days before today; a shorter history divides by its own length. */
export function forecast(balanceDollars: number, days: readonly DailySpend[], today: string, window = 7): Forecast {
  const past = days.filter((d) => d.day < today).sort((a, b) => a.day.localeCompare(b.day));
  const recent = past.slice(-window);
  const firstSpend = recent.findIndex((d) => d.dollars > 0);
  // A history that starts inside the window: rate over the days since the first spend.
  const basis = firstSpend === -1 ? recent.length : recent.length - firstSpend;
  const total = recent.reduce((n, d) => n + d.dollars, 0);
  return forecastFromSpend(balanceDollars, total, basis);
}

/** How long the balance lasts at the rate of `spentDollars` over `basisDays` days. */
export function forecastFromSpend(balanceDollars: number, spentDollars: number, basisDays: number): Forecast {
  const ratePerDay = basisDays > 0 ? spentDollars / basisDays : 0;
  return { ratePerDay, basisDays, daysLeft: ratePerDay > 0 ? Math.max(0, balanceDollars) / ratePerDay : Infinity };
}

export type BalanceWarning = { kind: 'low'; text: string } | { kind: 'days'; text: string } | undefined;

/** The warning a user should get, if any: under the low-balance setting, or fewer days left than `warnDays`. */
export function balanceWarning(balanceDollars: number, f: Forecast, lowBalanceDollars: number, warnDays: number): BalanceWarning {
  const money = `$${balanceDollars.toFixed(2)}`;
  if (balanceDollars < lowBalanceDollars) {
    const last = Number.isFinite(f.daysLeft) ? ` At the last ${f.basisDays} days' rate it lasts ${describeDays(f.daysLeft)}.` : '';
    return { kind: 'low', text: `The gateway balance is ${money}, under your warning level of $${lowBalanceDollars.toFixed(2)}.${last}` };
  }
  if (warnDays > 0 && f.daysLeft < warnDays) {
    return { kind: 'days', text: `At the last ${f.basisDays} days' rate ($${f.ratePerDay.toFixed(2)} a day) the balance of ${money} lasts ${describeDays(f.daysLeft)}.` };
  }
  return undefined;
}

export function describeDays(days: number): string {
  if (!Number.isFinite(days)) return 'indefinitely (nothing spent lately)';
  if (days < 1) return 'less than a day';
  const n = Math.floor(days);
  return `${n} more day${n === 1 ? '' : 's'}`;
}
