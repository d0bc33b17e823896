import * as vscode from 'vscode';
import type { AccountUser, ActiveSubscription, ApiKeyRecord, CheckinStatus, KeyStatus, SubscriptionPlan, UsageLogEntry } from '../../gateway';
import { formatDollars, isSameKey } from '../../common/money';
import { describeError, showGatewayError } from '../../shell/errors';
import { loadGateway, type SettingsSource, type GatewayConnection, type CredentialSource, type LogSource } from '../../shell/services';
import { keyDescription, keyTooltip } from '../core/format';
import { formatCount, formatDateTime, formatWhen } from '../../common/locale';
import { counted } from '../../shell/listeners';

export type AccountNode =
  | { kind: 'account'; user: AccountUser; low: boolean }
  | { kind: 'message'; text: string; detail?: string; icon: string; command?: vscode.Command }
  | { kind: 'keys' }
  | { kind: 'key'; record: ApiKeyRecord }
  | { kind: 'models' }
  | { kind: 'modelGroup'; which: 'available' | 'all' }
  | { kind: 'model'; id: string; which: 'available' | 'all' }
  /** The API key in use, as it reads its own figures (no access token needed). */
  | { kind: 'thisKey'; status: KeyStatus; hasLog: boolean }
  | { kind: 'call'; call: UsageLogEntry }
  | { kind: 'checkin'; status: CheckinStatus }
  | { kind: 'plan'; active: ActiveSubscription | undefined; plan: SubscriptionPlan | undefined; offered: SubscriptionPlan[] };

type Loaded<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Newest calls the key's row lists. */
const RECENT_CALLS = 20;

/**
 * The Account view: the user and balance, the API keys (with a search filter), and the models.
 * Data is loaded on demand and cached until a refresh; a failure shows as a message in the tree
 * and once as a notification with the action that fixes it.
 */
export class AccountTree implements vscode.TreeDataProvider<AccountNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<AccountNode | undefined>();
  readonly onDidChangeTreeData = counted('accountTree.onDidChangeTreeData', this.changed.event);
  private cache: {
    user?: Promise<Loaded<AccountUser>>;
    keys?: Promise<Loaded<ApiKeyRecord[]>>;
    thisKey?: Promise<Loaded<KeyStatus>>;
    wallet?: Promise<AccountNode[]>;
    models: Map<string, Promise<Loaded<string[]>>>;
  } = { models: new Map() };
  private notified = new Set<string>();
  private filterText = '';
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly services: SettingsSource & GatewayConnection & CredentialSource & LogSource) {
    this.disposables.push(
      this.changed,
      services.onDidChangeConnection(() => this.refresh()),
      services.onDidSpend(() => this.refreshBalance()),
    );
  }

  get filter(): string {
    return this.filterText;
  }

  setFilter(text: string): void {
    this.filterText = text.trim();
    void vscode.commands.executeCommand('setContext', 'modelGateway.keysFiltered', this.filterText.length > 0);
    this.cache.keys = undefined;
    this.changed.fire(undefined);
  }

  refresh(): void {
    this.cache = { models: new Map() };
    this.notified.clear();
    this.changed.fire(undefined);
  }

  refreshBalance(): void {
    this.cache.user = undefined;
    this.cache.thisKey = undefined;
    this.cache.wallet = undefined;
    this.notified.delete('account');
    this.changed.fire(undefined);
  }

  refreshKeys(): void {
    this.cache.keys = undefined;
    this.notified.delete('keys');
    this.changed.fire(undefined);
  }

  private load<T>(section: string, run: () => Promise<T>): Promise<Loaded<T>> {
    return run().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => {
        // new-api's missing user id is the row's own fix (Set Account User Id), and is usually
        // asked for the moment after the access token: no notification on top.
        const gw = loadGateway();
        const rowFixes = error instanceof gw.AccountApiError && error.code === gw.NEW_API_USER_REQUIRED;
        if (!rowFixes && !this.notified.has(section)) {
          this.notified.add(section);
          showGatewayError(this.services, vscode.l10n.t('Account view ({0})', section), error);
        }
        return { ok: false as const, error };
      },
    );
  }

  private errorNode(error: unknown): AccountNode {
    const text = describeError(this.services, error).message;
    const gw = loadGateway();
    // The refusals the person fixes from here: the row runs the command that fixes it.
    if (error instanceof gw.AccountApiError && error.code === gw.NEW_API_USER_REQUIRED) {
      return { kind: 'message', text, icon: 'error', command: { title: vscode.l10n.t('Set Account User Id'), command: 'modelGateway.setAccountUserId' } };
    }
    if (error instanceof gw.AccountApiError && error.type === 'authentication_error') {
      return { kind: 'message', text, icon: 'error', command: { title: vscode.l10n.t('Set Access Token'), command: 'modelGateway.setAccessToken' } };
    }
    return { kind: 'message', text, icon: 'error' };
  }

  user(): Promise<Loaded<AccountUser>> {
    return (this.cache.user ??= this.load('account', () => this.services.client().account.self()));
  }

  /** The key in use, as the gateway reports it to the key itself. */
  thisKey(): Promise<Loaded<KeyStatus>> {
    return (this.cache.thisKey ??= this.load('this key', () => this.services.client().account.key.status()));
  }

  /** Check-in and plans, where the gateway has them (quietly nothing where it does not). */
  wallet(): Promise<AccountNode[]> {
    return (this.cache.wallet ??= (async () => {
      const wallet = this.services.client().account.wallet;
      const quiet = <T>(p: Promise<T>) =>
        p.catch((err: unknown) => (this.services.log.warn(`account: ${err instanceof Error ? err.message : String(err)}`), undefined));
      const [checkin, offered, active] = await Promise.all([quiet(wallet.checkinStatus()), quiet(wallet.plans()), quiet(wallet.subscriptions())]);
      const rows: AccountNode[] = [];
      if (checkin?.enabled) rows.push({ kind: 'checkin', status: checkin });
      const current = active?.[0];
      if (current || offered?.length)
        rows.push({ kind: 'plan', active: current, plan: offered?.find((p) => p.id === current?.planId), offered: offered ?? [] });
      return rows;
    })());
  }

  keys(): Promise<Loaded<ApiKeyRecord[]>> {
    const filter = this.filterText;
    // The servers search differently (one-api: name prefix, new-api: exact name), so the filter
    // is applied here, to every key, the same way on both: part of the name, any letter case.
    return (this.cache.keys ??= this.load('keys', async () => {
      const all = await this.services.client().account.tokens.listAll();
      const needle = filter.toLowerCase();
      return needle ? all.filter((k) => k.name.toLowerCase().includes(needle)) : all;
    }));
  }

  private models(which: 'available' | 'all'): Promise<Loaded<string[]>> {
    let p = this.cache.models.get(which);
    if (!p) {
      p = this.load(`models-${which}`, async () => {
        const client = this.services.client();
        if (which === 'all') return client.account.models();
        // With an access token, the account's own list; otherwise what the key can see.
        if (this.services.credentials.getAccessToken()) return client.account.availableModels();
        return (await client.models.list()).map((m) => m.id).sort();
      });
      this.cache.models.set(which, p);
    }
    return p;
  }

  /** Rows handed to VS Code; commands accept only these as their target. */
  private readonly issued = new WeakSet<object>();

  /** Whether a command argument is a row of this tree (not an object made by a caller). */
  owns(arg: unknown): arg is AccountNode {
    return typeof arg === 'object' && arg !== null && this.issued.has(arg);
  }

  async getChildren(node?: AccountNode): Promise<AccountNode[]> {
    const nodes = await this.childrenOf(node);
    for (const n of nodes) this.issued.add(n);
    return nodes;
  }

  private async childrenOf(node?: AccountNode): Promise<AccountNode[]> {
    if (!node) {
      // Empty until a URL and key are set, so the welcome view shows instead.
      if (!this.services.isConfigured()) return [];
      if (!this.services.credentials.getAccessToken()) {
        // The key reads its own figures: nothing here needs the access token.
        const key = await this.thisKey();
        const own: AccountNode[] = key.ok ? [{ kind: 'thisKey', status: key.value, hasLog: !this.services.client().account.key.lacks('/api/log/token') }] : [];
        return [
          ...own,
          {
            kind: 'message',
            text: vscode.l10n.t('For the account (its balance and all its keys), set the system access token'),
            icon: 'key',
            command: { title: vscode.l10n.t('Set Access Token'), command: 'modelGateway.setAccessToken' },
          },
          { kind: 'models' },
        ];
      }
      const user = await this.user();
      const head: AccountNode = user.ok
        ? { kind: 'account', user: user.value, low: user.value.balanceDollars < this.services.settings().lowBalanceDollars }
        : this.errorNode(user.error);
      return [head, ...(user.ok ? await this.wallet() : []), { kind: 'keys' }, { kind: 'models' }];
    }
    switch (node.kind) {
      case 'keys': {
        const keys = await this.keys();
        if (!keys.ok) return [this.errorNode(keys.error)];
        if (keys.value.length === 0) {
          return [
            {
              kind: 'message',
              text: this.filterText ? vscode.l10n.t('No key matches "{0}"', this.filterText) : vscode.l10n.t('No API keys yet'),
              icon: 'info',
            },
          ];
        }
        return keys.value.map((record) => ({ kind: 'key', record }));
      }
      case 'models':
        return this.services.credentials.getAccessToken()
          ? [
              { kind: 'modelGroup', which: 'available' },
              { kind: 'modelGroup', which: 'all' },
            ]
          : this.modelChildren('available');
      case 'modelGroup':
        return this.modelChildren(node.which);
      case 'thisKey': {
        const logs = await this.load('this key', () => this.services.client().account.key.logs());
        if (!logs.ok) return [this.errorNode(logs.error)];
        if (!logs.value) return [{ kind: 'message', text: vscode.l10n.t('This gateway keeps no log per key'), icon: 'info' }];
        if (logs.value.items.length === 0) return [{ kind: 'message', text: vscode.l10n.t('No calls with this key yet'), icon: 'info' }];
        return logs.value.items.slice(0, RECENT_CALLS).map((call) => ({ kind: 'call', call }));
      }
      default:
        return [];
    }
  }

  private async modelChildren(which: 'available' | 'all'): Promise<AccountNode[]> {
    const models = await this.models(which);
    if (!models.ok) return [this.errorNode(models.error)];
    return models.value.map((id) => ({ kind: 'model', id, which }));
  }

  getTreeItem(node: AccountNode): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    switch (node.kind) {
      case 'account': {
        const item = new vscode.TreeItem(node.user.username, C.None);
        item.description = node.low ? vscode.l10n.t('{0} (low balance)', formatDollars(node.user.balanceDollars)) : formatDollars(node.user.balanceDollars);
        item.iconPath = new vscode.ThemeIcon(node.low ? 'warning' : 'account', node.low ? new vscode.ThemeColor('list.warningForeground') : undefined);
        item.tooltip = vscode.l10n.t('Balance {0} ({1} quota units)', formatDollars(node.user.balanceDollars), formatCount(node.user.quota));
        item.contextValue = 'account';
        item.id = 'account';
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.text, C.None);
        item.iconPath = new vscode.ThemeIcon(node.icon, node.icon === 'error' ? new vscode.ThemeColor('errorForeground') : undefined);
        item.tooltip = node.text;
        item.command = node.command;
        item.contextValue = 'message';
        return item;
      }
      case 'keys': {
        const item = new vscode.TreeItem(vscode.l10n.t('API Keys'), C.Expanded);
        item.iconPath = new vscode.ThemeIcon('key');
        item.description = this.filterText ? vscode.l10n.t('matching "{0}"', this.filterText) : undefined;
        item.contextValue = 'keys';
        item.id = 'keys';
        return item;
      }
      case 'key': {
        const k = node.record;
        const item = new vscode.TreeItem(k.name || vscode.l10n.t('key {0}', k.id), C.None);
        const inUse = isSameKey(k.key, this.services.credentials.getApiKey());
        item.description = inUse ? vscode.l10n.t('in use here · {0}', keyDescription(k)) : keyDescription(k);
        item.tooltip = new vscode.MarkdownString(inUse ? `${keyTooltip(k)}\n\n${vscode.l10n.t('This is the key Model Gateway uses.')}` : keyTooltip(k));
        item.iconPath = new vscode.ThemeIcon(k.state === 'enabled' ? 'pass' : k.state === 'disabled' ? 'circle-slash' : 'warning');
        item.contextValue = k.enabled ? 'key.enabled' : 'key.disabled';
        item.id = `key-${k.id}`;
        return item;
      }
      case 'thisKey': {
        const k = node.status;
        const item = new vscode.TreeItem(k.name ? vscode.l10n.t('API key “{0}”', k.name) : vscode.l10n.t('This API key'), node.hasLog ? C.Collapsed : C.None);
        item.description = k.unlimited
          ? vscode.l10n.t('unlimited · {0} used', formatDollars(k.usedDollars))
          : vscode.l10n.t('{0} left of {1}', formatDollars(k.remainingDollars ?? 0), formatDollars(k.limitDollars ?? 0));
        const lines = [
          vscode.l10n.t('Used on this key: {0}.', formatDollars(k.usedDollars)),
          k.unlimited
            ? vscode.l10n.t('No limit on this key (the account balance still applies).')
            : vscode.l10n.t('Left on this key: {0} of {1}.', formatDollars(k.remainingDollars ?? 0), formatDollars(k.limitDollars ?? 0)),
          k.accessUntil ? vscode.l10n.t('Expires {0}.', formatDateTime(k.accessUntil * 1000)) : vscode.l10n.t('Never expires.'),
        ];
        if (k.modelLimits) lines.push(vscode.l10n.t('Limited to: {0}.', k.modelLimits.join(', ')));
        if (node.hasLog) lines.push(vscode.l10n.t('Expand for its newest calls; Show Usage for its spend per day.'));
        item.tooltip = lines.join('\n');
        item.iconPath = new vscode.ThemeIcon('key');
        item.contextValue = 'thisKey';
        item.id = 'this-key';
        return item;
      }
      case 'call': {
        const c = node.call;
        const item = new vscode.TreeItem(c.model, C.None);
        item.description = `${formatDollars(c.dollars)} · ${formatWhen(c.at * 1000)}`;
        item.tooltip = vscode.l10n.t(
          '{0} at {1}: {2} tokens in, {3} out{4}, {5}.',
          c.model,
          formatDateTime(c.at * 1000),
          formatCount(c.promptTokens),
          formatCount(c.completionTokens),
          c.cacheRead ? vscode.l10n.t(' ({0} from the cache)', formatCount(c.cacheRead)) : '',
          formatDollars(c.dollars),
        );
        item.iconPath = new vscode.ThemeIcon('arrow-swap');
        item.contextValue = 'call';
        return item;
      }
      case 'checkin': {
        const s = node.status;
        const item = new vscode.TreeItem(s.checkedInToday ? vscode.l10n.t('Checked in today') : vscode.l10n.t('Check In'), C.None);
        item.description =
          s.minDollars !== undefined && s.maxDollars !== undefined
            ? vscode.l10n.t('{0} to {1} a day', formatDollars(s.minDollars), formatDollars(s.maxDollars))
            : undefined;
        item.tooltip = s.checkedInToday
          ? vscode.l10n.t('Come back tomorrow for the next check-in.')
          : vscode.l10n.t("Check in once a day for a bonus on the balance (the gateway's offer).");
        item.iconPath = new vscode.ThemeIcon(s.checkedInToday ? 'pass' : 'gift');
        if (!s.checkedInToday) item.command = { title: vscode.l10n.t('Check In'), command: 'modelGateway.account.checkIn' };
        item.contextValue = s.checkedInToday ? 'checkin.done' : 'checkin';
        item.id = 'checkin';
        return item;
      }
      case 'plan': {
        const a = node.active;
        const title = a ? (node.plan?.title ?? vscode.l10n.t('plan {0}', a.planId)) : undefined;
        const item = new vscode.TreeItem(
          title ? vscode.l10n.t('Plan: {0}', title) : vscode.l10n.t('Plans offered: {0}', node.offered.map((p) => p.title).join(', ')),
          C.None,
        );
        item.description = a
          ? vscode.l10n.t(
              '{0} of {1} used · until {2}',
              formatDollars(a.usedDollars),
              a.totalDollars !== undefined ? formatDollars(a.totalDollars) : vscode.l10n.t('unlimited'),
              formatDateTime(a.endsAt * 1000),
            )
          : node.offered.map((p) => vscode.l10n.t('{0} {1} / {2} {3}', p.price, p.currency, p.duration.value, p.duration.unit)).join(' · ');
        item.tooltip = [
          ...node.offered.map(
            (p) =>
              `${p.title}: ${p.price} ${p.currency} / ${p.duration.value} ${p.duration.unit}${p.includedDollars !== undefined ? ` (${formatDollars(p.includedDollars)})` : ''}${p.subtitle ? ` — ${p.subtitle}` : ''}`,
          ),
          vscode.l10n.t("Click to open the gateway's page to buy or renew."),
        ].join('\n');
        item.iconPath = new vscode.ThemeIcon(a ? 'verified' : 'tag');
        item.command = { title: vscode.l10n.t('Open Plans'), command: 'modelGateway.account.openPlans' };
        item.contextValue = 'plan';
        item.id = 'plan';
        return item;
      }
      case 'models': {
        const item = new vscode.TreeItem(vscode.l10n.t('Models'), C.Collapsed);
        item.iconPath = new vscode.ThemeIcon('symbol-class');
        item.contextValue = 'models';
        item.id = 'models';
        return item;
      }
      case 'modelGroup': {
        const item = new vscode.TreeItem(node.which === 'available' ? vscode.l10n.t('Available to this account') : vscode.l10n.t('All models'), C.Collapsed);
        item.contextValue = 'modelGroup';
        item.id = `models-${node.which}`;
        return item;
      }
      case 'model': {
        const item = new vscode.TreeItem(node.id, C.None);
        item.iconPath = new vscode.ThemeIcon('symbol-misc');
        item.contextValue = 'model';
        item.tooltip = vscode.l10n.t('{0} — right-click to make it the default for a job', node.id);
        item.id = `model-${node.which}-${node.id}`;
        return item;
      }
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
