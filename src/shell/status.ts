import * as vscode from 'vscode';
import { describeError } from './errors';
import type { Services } from './services';
import { formatDollars } from '../gateway/money';
import { usageSettings } from './config';
import { balanceWarning, describeDays, type Forecast } from '../usage/forecast';
import { CLOCK_SKEW_SECONDS } from '../usage/collect';
import { localDay, rangeStart } from '../usage/report';

export type ConnectionState =
  | { kind: 'unconfigured' }
  | { kind: 'checking' }
  | {
      kind: 'connected';
      host: string;
      username?: string;
      balanceDollars?: number;
      low: boolean;
      /** Spent today: the gateway's log (access token), or this key's use since the first check today. */
      today?: { dollars: number; since?: number };
      forecast?: Forecast;
    }
  | { kind: 'error'; message: string };

/** The key's total use at the first check of the day (API key only: the billing routes have no days). */
const KEY_BASELINE = 'modelGateway.usage.keyBaseline';
const SEVEN_DAYS_FRESH_MS = 60 * 60_000;


/** The status-bar item: connection state and balance; a click offers the next useful action. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('modelGateway.status', vscode.StatusBarAlignment.Right, 100);
  private state: ConnectionState = { kind: 'unconfigured' };
  private generation = 0;
  private lastWeek: { at: number; day: string; dollars: number } | undefined;
  private readonly warned = new Set<string>();

  constructor(
    private readonly services: Services,
    private readonly globalState?: { get<T>(key: string): T | undefined; update(key: string, value: unknown): Thenable<void> },
  ) {
    this.item.name = 'Model Gateway';
    this.item.command = 'modelGateway.statusActions';
    this.render();
    this.item.show();
  }

  get current(): ConnectionState {
    return this.state;
  }

  private set(state: ConnectionState): void {
    this.state = state;
    this.render();
  }

  private render(): void {
    const s = this.state;
    this.item.backgroundColor = undefined;
    switch (s.kind) {
      case 'unconfigured':
        this.item.text = '$(plug) Model Gateway';
        this.item.tooltip = 'Model Gateway is not set up: click to set the gateway URL and API key.';
        break;
      case 'checking':
        this.item.text = '$(sync~spin) Model Gateway';
        this.item.tooltip = 'Checking the connection to the gateway…';
        break;
      case 'connected': {
        const balance = s.balanceDollars === undefined ? '' : ` ${formatDollars(s.balanceDollars)}`;
        const today = s.today ? ` · today ${formatDollars(s.today.dollars)}` : '';
        this.item.text = `${s.low ? '$(warning)' : '$(pass-filled)'} Model Gateway${balance}${today}`;
        const since = s.today?.since ? ` on this key since ${new Date(s.today.since).toLocaleTimeString()}` : '';
        this.item.tooltip =
          `Connected to ${s.host}${s.username ? ` as ${s.username}` : ''}.` +
          (s.balanceDollars === undefined ? ' Set the system access token to see the balance.' : ` Balance ${formatDollars(s.balanceDollars)}${s.low ? ' (low)' : ''}.`) +
          (s.today ? ` Spent today${since}: ${formatDollars(s.today.dollars)}.` : '') +
          (s.forecast && Number.isFinite(s.forecast.daysLeft) ? ` At the last 7 days' rate (${formatDollars(s.forecast.ratePerDay)} a day) the balance lasts ${describeDays(s.forecast.daysLeft)}.` : '');
        if (s.low) this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      }
      case 'error':
        this.item.text = '$(error) Model Gateway';
        this.item.tooltip = s.message;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
  }

  /** Checks the key (GET /v1/models) and, with an access token, reads the balance. */
  async refresh(): Promise<ConnectionState> {
    const generation = ++this.generation;
    const services = this.services;
    if (!services.isConfigured()) {
      this.set({ kind: 'unconfigured' });
      return this.state;
    }
    this.set({ kind: 'checking' });
    let next: ConnectionState;
    try {
      const client = services.client();
      await client.models.list();
      const host = new URL(services.settings().baseUrl).host;
      const showToday = usageSettings().todayInStatusBar;
      if (services.credentials.getAccessToken()) {
        const me = await client.account.self();
        const [today, forecast] = await Promise.all([showToday ? this.spentToday() : undefined, this.forecast(me.balanceDollars)]);
        next = { kind: 'connected', host, username: me.username, balanceDollars: me.balanceDollars, low: me.balanceDollars < services.settings().lowBalanceDollars, today, forecast };
        if (generation === this.generation) this.warnIfRunningOut(me.balanceDollars, forecast);
      } else {
        next = { kind: 'connected', host, low: false, today: showToday ? await this.keySpentToday() : undefined };
      }
    } catch (err) {
      services.log.error('Connection check failed', err);
      next = { kind: 'error', message: describeError(services, err).message };
    }
    if (generation === this.generation) this.set(next);
    return next;
  }

  /** Today's spend from the gateway's log; undefined (left out) when the gateway cannot say. */
  private async spentToday(): Promise<{ dollars: number } | undefined> {
    const now = Date.now();
    try {
      return { dollars: await this.services.client().account.usage.spent({ start: rangeStart(1, now), end: Math.floor(now / 1000) + CLOCK_SKEW_SECONDS }) };
    } catch (err) {
      this.services.log.warn(`status: today's spend could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** The last 7 complete days' rate (read at most once an hour) and how long the balance lasts at it. */
  private async forecast(balanceDollars: number): Promise<Forecast | undefined> {
    const now = Date.now();
    const day = localDay(now / 1000);
    try {
      if (!this.lastWeek || this.lastWeek.day !== day || now - this.lastWeek.at > SEVEN_DAYS_FRESH_MS) {
        const start = rangeStart(8, now);
        const dollars = await this.services.client().account.usage.spent({ start, end: rangeStart(1, now) - 1 });
        this.lastWeek = { at: now, day, dollars };
      }
      const ratePerDay = this.lastWeek.dollars / 7;
      return { ratePerDay, basisDays: 7, daysLeft: ratePerDay > 0 ? Math.max(0, balanceDollars) / ratePerDay : Infinity };
    } catch (err) {
      this.services.log.warn(`status: the last 7 days' spend could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** API key only: the key's use now, less its use at the first check today. */
  private async keySpentToday(): Promise<{ dollars: number; since: number } | undefined> {
    try {
      const billing = await this.services.client().account.usage.keyBilling();
      const day = localDay(Date.now() / 1000);
      let base = this.globalState?.get<{ day: string; used: number; at: number }>(KEY_BASELINE);
      if (!base || base.day !== day || base.used > billing.usedDollars) {
        base = { day, used: billing.usedDollars, at: Date.now() };
        await this.globalState?.update(KEY_BASELINE, base);
      }
      return { dollars: billing.usedDollars - base.used, since: base.at };
    } catch (err) {
      this.services.log.warn(`status: the key's billing could not be read (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** Once a day per cause: under the low-balance level, or fewer days left than the setting. */
  private warnIfRunningOut(balanceDollars: number, forecast: Forecast | undefined): void {
    const warning = balanceWarning(balanceDollars, forecast ?? { ratePerDay: 0, basisDays: 0, daysLeft: Infinity }, this.services.settings().lowBalanceDollars, usageSettings().warnDaysLeft);
    if (!warning) return;
    const id = `${warning.kind}:${localDay(Date.now() / 1000)}`;
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.services.recordNotice('warning', warning.text);
    void vscode.window.showWarningMessage(warning.text, 'Show Usage', 'Top Up').then((pick) => {
      if (pick === 'Show Usage') void vscode.commands.executeCommand('modelGateway.usage.open');
      else if (pick === 'Top Up') void vscode.commands.executeCommand('modelGateway.topUp');
    });
  }

  dispose(): void {
    this.item.dispose();
  }
}
