import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { usageSettings } from '../../shell/config';
import type { SettingsSource, GatewayConnection, CredentialSource, LogSource } from '../../shell/services';
import { CLOCK_SKEW_SECONDS } from '../core/collect';
import { balanceWarning, forecastFromSpend, type Forecast } from '../core/forecast';
import { localDay, rangeStart } from '../core/report';

/** Where the key's first use of the day is kept (the extension's global state). */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/** The key's total use at the first check of the day (API key only: the billing routes have no days). */
const KEY_BASELINE = 'modelGateway.usage.keyBaseline';
const SEVEN_DAYS_FRESH_MS = 60 * 60_000;

/**
 * What the status bar says about money: today's spend, how long the balance lasts at the last
 * 7 days' rate, and the warning when it runs low. Each read that fails is left out, never fatal.
 */
export class SpendWatch {
  private lastWeek: { at: number; day: string; dollars: number } | undefined;
  private readonly warned = new Set<string>();

  constructor(
    private readonly services: SettingsSource & GatewayConnection & CredentialSource & LogSource,
    private readonly globalState?: StateStore,
  ) {}

  /** Today's spend from the gateway's log; undefined (left out) when the gateway cannot say. */
  async today(): Promise<{ dollars: number } | undefined> {
    const now = Date.now();
    try {
      return { dollars: await this.services.client().account.usage.spent({ start: rangeStart(1, now), end: Math.floor(now / 1000) + CLOCK_SKEW_SECONDS }) };
    } catch (err) {
      this.services.log.warn(`status: today's spend could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** The last 7 complete days' rate (read at most once an hour) and how long the balance lasts at it. */
  async forecast(balanceDollars: number): Promise<Forecast | undefined> {
    const now = Date.now();
    const day = localDay(now / 1000);
    try {
      if (!this.lastWeek || this.lastWeek.day !== day || now - this.lastWeek.at > SEVEN_DAYS_FRESH_MS) {
        const start = rangeStart(8, now);
        const dollars = await this.services.client().account.usage.spent({ start, end: rangeStart(1, now) - 1 });
        this.lastWeek = { at: now, day, dollars };
      }
      return forecastFromSpend(balanceDollars, this.lastWeek.dollars, 7);
    } catch (err) {
      this.services.log.warn(`status: the last 7 days' spend could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** API key only: the key's use now, less its use at the first check today. */
  async keyToday(): Promise<{ dollars: number; since: number } | undefined> {
    try {
      const billing = await this.services.client().account.key.status();
      const day = localDay(Date.now() / 1000);
      // Which key the baseline is for, without keeping the key: a short one-way fingerprint.
      const key = createHash('sha256')
        .update(this.services.credentials.getApiKey() ?? '')
        .digest('hex')
        .slice(0, 12);
      let base = this.globalState?.get<{ day: string; used: number; at: number; key?: string }>(KEY_BASELINE);
      if (!base || base.day !== day || base.key !== key || base.used > billing.usedDollars) {
        base = { day, used: billing.usedDollars, at: Date.now(), key };
        await this.globalState?.update(KEY_BASELINE, base);
      }
      return { dollars: billing.usedDollars - base.used, since: base.at };
    } catch (err) {
      this.services.log.warn(`status: the key's billing could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** Once a day per cause: under the low-balance level, or fewer days left than the setting. */
  warnIfRunningOut(balanceDollars: number, forecast: Forecast | undefined): void {
    const warning = balanceWarning(
      balanceDollars,
      forecast ?? { ratePerDay: 0, basisDays: 0, daysLeft: Infinity },
      this.services.settings().lowBalanceDollars,
      usageSettings().warnDaysLeft,
    );
    if (!warning) return;
    const id = `${warning.kind}:${localDay(Date.now() / 1000)}`;
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.services.recordNotice('warning', warning.text);
    const showUsage = vscode.l10n.t('Show Usage');
    void vscode.window.showWarningMessage(warning.text, showUsage, vscode.l10n.t('Top Up')).then((pick) => {
      if (pick === showUsage) void vscode.commands.executeCommand('modelGateway.usage.open');
      else if (pick !== undefined) void vscode.commands.executeCommand('modelGateway.topUp');
    });
  }
}
