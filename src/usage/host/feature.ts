import * as vscode from 'vscode';
import type { FeatureHost } from '../../shell/featureHost';
import { USAGE_VIEW_TYPE, UsagePanel, type CompletionSpendSource } from './panel';
import { StatusBar } from './statusBar';

/** The status bar (connection, balance, spend today, forecast) and the Usage view. */
/** `lmAccess`: what other extensions' calls (VS Code's chat) spent today, and their cap (the language-model feature's). */
export function activateUsage(
  host: FeatureHost,
  lmAccess: { spentToday(): number; capDollars(): number },
  completions: CompletionSpendSource,
): { status: StatusBar; usage: UsagePanel } {
  const { services, context } = host;
  const status = host.own(new StatusBar(services, context.globalState));
  const usage = host.own(new UsagePanel(services, context, lmAccess, completions));
  host.own(services.onDidChangeConnection(() => void status.refresh()));
  host.own(services.onDidSpend(() => void status.refresh()));
  host.command('modelGateway.refreshStatus', () => status.refresh());
  host.command('modelGateway.usage.open', () => usage.open());
  host.own(vscode.window.registerWebviewPanelSerializer(USAGE_VIEW_TYPE, { deserializeWebviewPanel: async (panel) => void (await usage.restore(panel)) }));
  host.command('modelGateway.usage.exportCsv', async () => {
    if (!usage.current) await usage.open();
    return usage.exportCsv();
  });
  // The first connection check loads the gateway bundle: after activation.
  host.afterActivation(() => status.refresh());
  return { status, usage };
}
