import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import type { GatewayFeature } from '../../shell/services';
import type { GatewayInlineCompletions, Skip } from './provider';
import type { CompletionSettings } from './settings';
import { formatCount, formatTime } from '../../common/locale';

const skipWords = (skip: Skip): string | undefined =>
  skip === 'language'
    ? vscode.l10n.t('off for this language (modelGateway.completions.languages)')
    : skip === 'too-large'
      ? vscode.l10n.t('this file is larger than modelGateway.completions.maxFileKB')
      : skip === 'withheld'
        ? vscode.l10n.t('none in this file: it is a secret or excluded file (the same rules as the chat tools)')
        : undefined;

/** The completions item in the status bar: on/off, snoozed, the model, today's spend; a click opens the menu. */
export class CompletionsStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('modelGateway.completions', vscode.StatusBarAlignment.Right, 98);
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly services: GatewayFeature,
    private readonly provider: GatewayInlineCompletions,
    private readonly settings: () => CompletionSettings,
  ) {
    this.item.name = vscode.l10n.t('Model Gateway Completions');
    this.item.command = 'modelGateway.completions.menu';
    this.disposables.push(
      provider.onDidChangeState(() => this.render()),
      services.onDidChangeConnection(() => this.render()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('modelGateway') && this.render()),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
    );
    this.render();
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : (this.item.tooltip?.value ?? '');
  }

  render(): void {
    const s = this.settings();
    if (!this.services.isConfigured()) {
      this.item.hide();
      return;
    }
    const today = this.provider.today();
    const stats = this.provider.stats;
    this.item.backgroundColor = undefined;
    const lines: string[] = [];
    if (!s.enabled) {
      this.item.text = vscode.l10n.t('$(circle-slash) Completions');
      lines.push(vscode.l10n.t('Inline completions are off. Click to turn them on.'));
    } else if (!s.model) {
      this.item.text = vscode.l10n.t('$(sparkle) Completions');
      lines.push(vscode.l10n.t('Inline completions need a model: click to choose one (a code model with fill-in-the-middle is fastest and cheapest).'));
    } else if (this.provider.snoozedUntil) {
      const minutes = Math.max(1, Math.ceil((this.provider.snoozedUntil - Date.now()) / 60_000));
      this.item.text = vscode.l10n.t('$(clock) Completions {0} min', minutes);
      lines.push(vscode.l10n.t('Inline completions are snoozed until {0}.', formatTime(this.provider.snoozedUntil)));
    } else if (today.dollars >= s.capDollars) {
      this.item.text = vscode.l10n.t('$(warning) Completions: cap reached');
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      lines.push(
        vscode.l10n.t(
          "Today's cap for inline completions is reached ({0} of {1}). They start again at midnight; raise the cap with modelGateway.completions.dailyCapDollars.",
          formatCost(today.dollars),
          formatCost(s.capDollars),
        ),
      );
    } else {
      this.item.text = `$(sparkle) ${s.model}`;
      lines.push(vscode.l10n.t('Inline completions with {0} ({1}).', s.model, describePath(this.provider.pathOf(s.model, s))));
      const skip = stats.lastSkip && skipWords(stats.lastSkip);
      if (skip) lines.push(vscode.l10n.t('Here: {0}.', skip));
    }
    if (s.model)
      lines.push(
        vscode.l10n.t(
          'Today: {0} of the {1} cap · {2} · {3} accepted.',
          formatCost(today.dollars),
          formatCost(s.capDollars),
          today.requests === 1 ? vscode.l10n.t('1 request') : vscode.l10n.t('{0} requests', formatCount(today.requests)),
          today.accepted === 1 ? vscode.l10n.t('1 character') : vscode.l10n.t('{0} characters', formatCount(today.accepted)),
        ),
      );
    if (stats.last) lines.push(vscode.l10n.t('Last answer in {0} ms.', stats.last.ms));
    if (stats.lastError) lines.push(vscode.l10n.t('Last failure: {0}', stats.lastError));
    this.item.tooltip = lines.join('\n\n');
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

export function describePath(path: 'fim' | 'prompt' | 'chat'): string {
  return path === 'fim'
    ? vscode.l10n.t('fill-in-the-middle')
    : path === 'prompt'
      ? vscode.l10n.t('completions without the code after the cursor')
      : vscode.l10n.t('a chat prompt');
}
