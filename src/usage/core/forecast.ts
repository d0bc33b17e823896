/**
 * How long the balance lasts at the recent rate of spend, and when to warn about it.
 */

export interface DailySpend {
  /** Local calendar day, `YYYY-MM-DD`. */
  day: string;
  dollars: number;
}

export type { Forecast } from '../../common/usageReport';
import * as l10n from '@vscode/l10n';
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
    const low = l10n.t('The gateway balance is {0}, under your warning level of ${1}.', money, lowBalanceDollars.toFixed(2));
    return {
      kind: 'low',
      text: Number.isFinite(f.daysLeft) ? `${low} ${l10n.t("At the last {0} days' rate it lasts {1}.", f.basisDays, describeDays(f.daysLeft))}` : low,
    };
  }
  if (warnDays > 0 && f.daysLeft < warnDays) {
    return {
      kind: 'days',
      text: l10n.t(
        "At the last {0} days' rate (${1} a day) the balance of {2} lasts {3}.",
        f.basisDays,
        f.ratePerDay.toFixed(2),
        money,
        describeDays(f.daysLeft),
      ),
    };
  }
  return undefined;
}

export function describeDays(days: number): string {
  if (!Number.isFinite(days)) return l10n.t('indefinitely (nothing spent lately)');
  if (days < 1) return l10n.t('less than a day');
  const n = Math.floor(days);
  return n === 1 ? l10n.t('1 more day') : l10n.t('{0} more days', n);
}
