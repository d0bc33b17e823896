import * as vscode from 'vscode';
import { describeError, showGatewayError } from '../../shell/errors';
import { loadGateway, type SettingsSource, type GatewayConnection, type CredentialSource, type LogSource } from '../../shell/services';
import { formatDollars } from '../../common/money';
import { usageSettings } from '../../shell/config';
import { describeDays, type Forecast } from '../core/forecast';
import { SpendWatch, type StateStore } from './spendWatch';
import { formatTime } from '../../common/locale';

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
      /** What the account side still needs (new-api's user id, a refused access token): a hint, the key works. */
      accountHint?: string;
      /** With the API key alone: what the key has left (its own figures; no access token needed). */
      key?: { unlimited: boolean; remainingDollars?: number; limitDollars?: number; name?: string };
    }
  | { kind: 'error'; message: string };

/** The status-bar item: connection state and balance; a click offers the next useful action. */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('modelGateway.status', vscode.StatusBarAlignment.Right, 100);
  private state: ConnectionState = { kind: 'unconfigured' };
  private generation = 0;
  private readonly spend: SpendWatch;

  constructor(
    private readonly services: SettingsSource & GatewayConnection & CredentialSource & LogSource,
    globalState?: StateStore,
  ) {
    this.spend = new SpendWatch(services, globalState);
    this.item.name = vscode.l10n.t('Model Gateway');
    this.item.command = 'modelGateway.statusActions';
    this.render();
    this.item.show();
  }

  get current(): ConnectionState {
    return this.state;
  }

  /** What hovering the item shows (read by the tests). */
  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : (this.item.tooltip?.value ?? '');
  }

  private set(state: ConnectionState): void {
    this.state = state;
    // The walkthrough's "check the connection" step completes on this.
    void vscode.commands.executeCommand('setContext', 'modelGateway.connected', state.kind === 'connected');
    this.render();
  }

  private render(): void {
    const s = this.state;
    this.item.backgroundColor = undefined;
    switch (s.kind) {
      case 'unconfigured':
        this.item.text = vscode.l10n.t('$(plug) Model Gateway');
        this.item.tooltip = vscode.l10n.t('Model Gateway is not set up: click to set the gateway URL and API key.');
        break;
      case 'checking':
        this.item.text = vscode.l10n.t('$(sync~spin) Model Gateway');
        this.item.tooltip = vscode.l10n.t('Checking the connection to the gateway…');
        break;
      case 'connected': {
        const keyLeft = s.balanceDollars === undefined && s.key && !s.key.unlimited ? ` $(key) ${formatDollars(s.key.remainingDollars ?? 0)}` : '';
        const balance = s.balanceDollars === undefined ? keyLeft : ` ${formatDollars(s.balanceDollars)}`;
        const today = s.today ? ` · ${vscode.l10n.t('today {0}', formatDollars(s.today.dollars))}` : '';
        this.item.text = vscode.l10n.t('{0} Model Gateway{1}{2}', s.low ? '$(warning)' : '$(pass-filled)', balance, today);
        const lines = [s.username ? vscode.l10n.t('Connected to {0} as {1}.', s.host, s.username) : vscode.l10n.t('Connected to {0}.', s.host)];
        if (s.accountHint) lines.push(vscode.l10n.t('The API key works; for the balance: {0}', s.accountHint));
        else if (s.balanceDollars === undefined) {
          if (s.key)
            lines.push(
              s.key.unlimited
                ? vscode.l10n.t('This API key has no limit of its own.')
                : vscode.l10n.t('Left on this API key: {0} of {1}.', formatDollars(s.key.remainingDollars ?? 0), formatDollars(s.key.limitDollars ?? 0)),
            );
          lines.push(vscode.l10n.t('Set the system access token to see the balance.'));
        } else
          lines.push(
            s.low ? vscode.l10n.t('Balance {0} (low).', formatDollars(s.balanceDollars)) : vscode.l10n.t('Balance {0}.', formatDollars(s.balanceDollars)),
          );
        if (s.today)
          lines.push(
            s.today.since
              ? vscode.l10n.t('Spent today on this key since {0}: {1}.', formatTime(s.today.since), formatDollars(s.today.dollars))
              : vscode.l10n.t('Spent today: {0}.', formatDollars(s.today.dollars)),
          );
        if (s.forecast && Number.isFinite(s.forecast.daysLeft))
          lines.push(
            vscode.l10n.t(
              "At the last 7 days' rate ({0} a day) the balance lasts {1}.",
              formatDollars(s.forecast.ratePerDay),
              describeDays(s.forecast.daysLeft),
            ),
          );
        this.item.tooltip = lines.join(' ');
        const network = this.services.network();
        if (network.notes.length) this.item.tooltip += `\n\n${network.notes.join('\n')}`;
        if (s.low || network.insecure) this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        if (network.insecure) this.item.text = this.item.text.replace('$(pass-filled)', '$(unlock)');
        break;
      }
      case 'error':
        this.item.text = vscode.l10n.t('$(error) Model Gateway');
        this.item.tooltip = s.message;
        if (this.services.isConfigured()) {
          const notes = this.services.network().notes;
          if (notes.length) this.item.tooltip += `\n\n${notes.join('\n')}`;
        }
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
      let me: Awaited<ReturnType<typeof client.account.self>> | undefined;
      let accountHint: string | undefined;
      if (services.credentials.getAccessToken()) {
        try {
          me = await client.account.self();
        } catch (err) {
          // The key works; only the account side (new-api's user id, the access token) is missing or
          // refused: a hint in the tooltip, not a red status (the walkthrough asks for both at once).
          if (!(err instanceof loadGateway().AccountApiError && err.type === 'authentication_error')) throw err;
          accountHint = describeError(services, err).message;
        }
      }
      if (me) {
        const [today, forecast] = await Promise.all([showToday ? this.spend.today() : undefined, this.spend.forecast(me.balanceDollars)]);
        next = {
          kind: 'connected',
          host,
          username: me.username,
          balanceDollars: me.balanceDollars,
          low: me.balanceDollars < services.settings().lowBalanceDollars,
          today,
          forecast,
        };
        if (generation === this.generation) this.spend.warnIfRunningOut(me.balanceDollars, forecast);
      } else {
        const key = await client.account.key.status().catch((err: unknown) => {
          services.log.warn(`status: the key's own figures could not be read (${err instanceof Error ? err.message : String(err)})`);
          return undefined;
        });
        const low = !!key && !key.unlimited && (key.remainingDollars ?? 0) < services.settings().lowBalanceDollars;
        next = {
          kind: 'connected',
          host,
          low,
          today: showToday ? await this.spend.keyToday() : undefined,
          accountHint,
          key: key && { unlimited: key.unlimited, remainingDollars: key.remainingDollars, limitDollars: key.limitDollars, name: key.name },
        };
      }
    } catch (err) {
      services.log.error('Connection check failed', err);
      next = { kind: 'error', message: describeError(services, err).message };
      // Credentials held for another gateway: the person decides at once (the notification's buttons).
      if ((err as { type?: unknown }).type === 'credential_withheld') showGatewayError(services, vscode.l10n.t('Model Gateway'), err);
    }
    if (generation === this.generation) this.set(next);
    return next;
  }

  dispose(): void {
    this.item.dispose();
  }
}
