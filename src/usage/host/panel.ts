import * as vscode from 'vscode';
import { receiveChecked, webviewHtml } from '../../shell/webviewPage';
import { factsOf, fixesFor } from '../../common/fixes';
import { redact } from '../../shell/redact';
import type { SettingsSource, GatewayConnection, CredentialSource, PriceSource, LogSource } from '../../shell/services';
import { collectUsage } from '../core/collect';
import { fallbackRows } from '../core/fallbacks';
import { fallbackCounts, onDidFallBack } from '../../runtime/host/fallbackChain';
import { FromUsageView, type ToUsageView } from '../../common/usageProtocol';
import type { CompletionSpendByDay, CompletionSpendSource } from '../../common/usageReport';

export type { CompletionSpendSource };
import { RANGES, reportCsv, type RangeDays, type UsageReport } from '../core/report';

const RANGE_KEY = 'modelGateway.usage.rangeDays';

/** The Usage tab's webview type (package.json activates on it, so a reload restores the tab). */
export const USAGE_VIEW_TYPE = 'modelGateway.usage';

/**
 * The Usage view: an editor tab with spend per day stacked by model, tokens and cache, keys, the
 * costliest calls and the forecast. It reloads when money was spent while it is open.
 */
export class UsagePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private report: UsageReport | undefined;
  private loading: Promise<UsageReport | undefined> | undefined;
  private generation = 0;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Each MCP server's sampling spend as counted here (set by the MCP feature, which starts later). */
  serverSpend: (() => Record<string, CompletionSpendByDay>) | undefined;
  /** This extension's other uses (commit messages, reviews, next edits) by series name (set by their features). */
  ownSpend: (() => Record<string, CompletionSpendByDay>) | undefined;

  constructor(
    private readonly services: SettingsSource & GatewayConnection & CredentialSource & PriceSource & LogSource,
    private readonly context: vscode.ExtensionContext,
    /** Today's spend by other extensions and VS Code's chat, against its cap. */
    private readonly otherCallers?: { spentToday(): number; capDollars(): number },
    /** Inline completions' spend as counted here: per day and model, and today's against the cap. */
    private readonly completions?: CompletionSpendSource,
  ) {
    const soon = () => {
      if (!this.panel) return;
      clearTimeout(this.reloadTimer);
      this.reloadTimer = setTimeout(() => void this.reload(), 1000);
    };
    this.disposables.push(services.onDidSpend(soon), services.onDidChangeConnection(soon), onDidFallBack(soon));
  }

  /** The figures on screen (tests read them). */
  get current(): UsageReport | undefined {
    return this.report;
  }

  get rangeDays(): RangeDays {
    const v = this.context.globalState.get<number>(RANGE_KEY);
    return (RANGES as readonly number[]).includes(v ?? 0) ? (v as RangeDays) : 7;
  }

  async open(): Promise<UsageReport | undefined> {
    if (this.panel) this.panel.reveal();
    else this.create();
    return this.reload();
  }

  /** Reads the gateway again; resolves with what is shown (undefined after an error). */
  reload(): Promise<UsageReport | undefined> {
    const generation = ++this.generation;
    const rangeDays = this.rangeDays;
    this.post({ type: 'loading', rangeDays });
    const run = (async () => {
      if (!this.services.isConfigured()) throw new Error('Model Gateway is not set up: set the gateway URL and the API key first.');
      const report = await collectUsage(this.services.client(), {
        rangeDays,
        hasAccessToken: !!this.services.credentials.getAccessToken(),
        prices: await this.services.prices.book(),
        completions: this.completions?.spendByDay(),
        servers: this.serverSpend?.(),
        own: this.ownSpend?.(),
      });
      const today = this.completions?.today();
      const fallbacks = fallbackRows(fallbackCounts(), report.days);
      return {
        ...report,
        ...(fallbacks.length ? { fallbacks } : {}),
        ...(this.otherCallers ? { otherCallers: { dollars: this.otherCallers.spentToday(), capDollars: this.otherCallers.capDollars() } } : {}),
        ...(today && this.completions && (today.requests > 0 || this.completions.inUse())
          ? { completions: { ...today, capDollars: this.completions.capDollars() } }
          : {}),
      };
    })().then(
      (report) => {
        if (generation !== this.generation) return this.loading;
        this.report = report;
        this.post({ type: 'report', report });
        return report;
      },
      (err: unknown) => {
        if (generation !== this.generation) return this.loading;
        this.services.log.error('Usage view: could not read usage', err);
        const message = redact(err instanceof Error ? err.message : String(err));
        const fixes = fixesFor({ ...factsOf(err), message }, { hasBaseUrl: !!this.services.settings().baseUrl, place: 'notification' });
        this.post({ type: 'error', message, fixes });
        return undefined;
      },
    );
    this.loading = run;
    return run;
  }

  /** Writes the shown figures as CSV: to `target`, or where the user picks. Returns the file. */
  async exportCsv(target?: vscode.Uri): Promise<vscode.Uri | undefined> {
    const report = this.report ?? (await this.loading);
    if (!report) {
      void vscode.window.showWarningMessage(vscode.l10n.t('There are no usage figures to export yet.'));
      return undefined;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = `gateway-usage-${report.days[0]}-to-${report.days[report.days.length - 1]}.csv`;
    const uri =
      target ??
      (await vscode.window.showSaveDialog({
        title: vscode.l10n.t('Export usage as CSV'),
        defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
        filters: { CSV: ['csv'] },
      }));
    if (!uri) return undefined;
    await vscode.workspace.fs.writeFile(uri, Buffer.from(reportCsv(report), 'utf8'));
    this.post({ type: 'exported', rows: report.rows.length, file: vscode.workspace.asRelativePath(uri) });
    this.services.log.info(`Usage view: exported ${report.rows.length} rows`);
    return uri;
  }

  /** The tab VS Code kept open across a window reload: it shows fresh figures again. */
  restore(panel: vscode.WebviewPanel): Promise<UsageReport | undefined> {
    this.panel?.dispose();
    this.adopt(panel);
    return this.reload();
  }

  private create(): void {
    const panel = vscode.window.createWebviewPanel(USAGE_VIEW_TYPE, vscode.l10n.t('Gateway Usage'), vscode.ViewColumn.Active, this.webviewOptions());
    this.adopt(panel);
  }

  private webviewOptions(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [dist] };
  }

  private adopt(panel: vscode.WebviewPanel): void {
    panel.webview.options = this.webviewOptions();
    panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'media', 'gateway.svg');
    panel.webview.html = this.html(panel.webview);
    this.panel = panel;
    panel.onDidDispose(() => {
      if (this.panel !== panel) return;
      this.panel = undefined;
      clearTimeout(this.reloadTimer);
    });
    receiveChecked(panel.webview, FromUsageView, 'Usage view', this.services.log, (m) => this.receive(m));
  }

  private async receive(m: FromUsageView): Promise<void> {
    switch (m.type) {
      case 'ready':
        // A view that was hidden and comes back draws the last figures at once.
        if (this.report) this.post({ type: 'report', report: this.report });
        else if (!this.loading) void this.reload();
        return;
      case 'range':
        await this.context.globalState.update(RANGE_KEY, m.days);
        void this.reload();
        return;
      case 'refresh':
        // Asked for by hand: the gateway's prices are read again too.
        this.services.prices.reset();
        void this.reload();
        return;
      case 'export':
        try {
          await this.exportCsv();
        } catch (err) {
          void vscode.window.showErrorMessage(vscode.l10n.t('The usage CSV could not be written: {0}', err instanceof Error ? err.message : String(err)));
        }
        return;
      case 'fix':
        void vscode.commands.executeCommand(m.command);
        return;
    }
  }

  private post(m: ToUsageView): void {
    void this.panel?.webview.postMessage(m);
  }

  private html(webview: vscode.Webview): string {
    return webviewHtml(webview, this.context.extensionUri, {
      title: vscode.l10n.t('Gateway Usage'),
      stylesheets: [
        ['dist', 'codicons', 'codicon.css'],
        ['dist', 'usage.css'],
      ],
      body: '<main id="app" aria-busy="true"></main>',
      scripts: [['dist', 'usage.js']],
    });
  }

  dispose(): void {
    clearTimeout(this.reloadTimer);
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
