import * as vscode from 'vscode';
import type { ChatInformation } from './api';
import { LM_VENDOR } from './chatProvider';
import { inputPriceOf } from '../core/pricing';

/** VS Code's settings (1.13x) for the model its chat uses for titles, summaries and other small requests. */
const UTILITY = 'utilityModel';
const UTILITY_SMALL = 'utilitySmallModel';
const BYOK_DEFAULT = 'byokUtilityModelDefault';
const MAIN_AGENT = 'mainAgent';

/** How VS Code names a model in those settings: `vendor/id`. */
export function utilityModelValue(id: string): string {
  return `${LM_VENDOR}/${id}`;
}

/**
 * VS Code's chat sends its small requests (titles, summaries, checks) to GitHub's models unless
 * the person names a model for them; signed out, those fail and the chat shows "Set BYOK utility
 * models". A provider cannot answer that itself: this asks the person and writes their choice to
 * their user settings (never a workspace's).
 */
export async function chooseUtilityModel(list: () => Promise<ChatInformation[]>): Promise<void> {
  const chat = vscode.workspace.getConfiguration('chat');
  if (!chat.inspect(UTILITY)) {
    void vscode.window.showInformationMessage(vscode.l10n.t("This version of VS Code has no setting for its chat's utility model."));
    return;
  }
  const models = (await list()).sort((a, b) => inputPriceOf(a.pricing) - inputPriceOf(b.pricing) || a.id.localeCompare(b.id));
  if (models.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Model Gateway has no chat models to offer: check the connection (Model Gateway: Set API Key).'));
    return;
  }
  const current = chat.inspect<string>(UTILITY)?.globalValue;
  type Item = vscode.QuickPickItem & { apply: () => Thenable<void> };
  const mainAgent: Item = {
    label: vscode.l10n.t('$(comment-discussion) The model picked in the chat'),
    description: vscode.l10n.t('each request uses the model you chat with'),
    apply: async () => {
      await chat.update(BYOK_DEFAULT, MAIN_AGENT, vscode.ConfigurationTarget.Global);
      // Our own earlier choice would take precedence over it: cleared; anyone else's is left alone.
      for (const key of [UTILITY, UTILITY_SMALL]) {
        if (chat.inspect<string>(key)?.globalValue?.startsWith(`${LM_VENDOR}/`)) await chat.update(key, undefined, vscode.ConfigurationTarget.Global);
      }
    },
  };
  const items: (Item | vscode.QuickPickItem)[] = [
    mainAgent,
    { label: vscode.l10n.t('Gateway models, cheapest first'), kind: vscode.QuickPickItemKind.Separator },
    ...models.map<Item>((m) => ({
      label: m.id,
      description: [m.pricing ?? vscode.l10n.t('price unknown'), current === utilityModelValue(m.id) ? vscode.l10n.t('in use') : '']
        .filter(Boolean)
        .join(' · '),
      apply: async () => {
        await chat.update(UTILITY, utilityModelValue(m.id), vscode.ConfigurationTarget.Global);
        await chat.update(UTILITY_SMALL, utilityModelValue(m.id), vscode.ConfigurationTarget.Global);
      },
    })),
  ];
  const pick = (await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t("Model for VS Code chat's utility requests (titles, summaries)"),
    placeHolder: vscode.l10n.t('A fast, inexpensive model is enough; your user settings are changed'),
  })) as Item | undefined;
  if (!pick?.apply) return;
  await pick.apply();
  void vscode.window.showInformationMessage(
    pick === mainAgent
      ? vscode.l10n.t("VS Code's chat now uses the model you chat with for its utility requests.")
      : vscode.l10n.t("VS Code's chat now uses {0} for its utility requests.", pick.label),
  );
}
