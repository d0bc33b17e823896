import * as vscode from 'vscode';
import { readSettings, userValue } from '../../shell/config';
import { stringSetting } from '../../shell/settingsSchema';

/**
 * The model for commit messages and reviews: `modelGateway.scm.model` from the person's own
 * settings (a cloned repository does not choose what its diff is sent to), else the chat's.
 */
export function scmModel(): string {
  return stringSetting('modelGateway.scm.model', userValue(vscode.workspace.getConfiguration('modelGateway'), 'scm.model')) || readSettings().defaultModels.chat;
}

/** The model, or the one the person picks now from the gateway's list (kept in `modelGateway.scm.model`). */
export async function resolveScmModel(listModels: () => Promise<string[]>): Promise<string | undefined> {
  const set = scmModel();
  if (set) return set;
  const ids = await listModels().catch(() => []);
  if (!ids.length) return undefined;
  const pick = await vscode.window.showQuickPick(ids, { title: vscode.l10n.t('Model for commit messages and reviews'), placeHolder: vscode.l10n.t('A small, fast chat model is enough; kept in modelGateway.scm.model') });
  if (pick) await vscode.workspace.getConfiguration('modelGateway').update('scm.model', pick, vscode.ConfigurationTarget.Global);
  return pick;
}
