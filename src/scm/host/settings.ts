import * as vscode from 'vscode';
import { readSettings, userValue } from '../../shell/config';
import { stringSetting } from '../../shell/settingsSchema';
import type { GatewayConnection } from '../../shell/services';
import { chooseRepository, GitUnavailableError, type GitRepository } from './git';

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

/**
 * What a commit message or a review starts from: a connected gateway, the model, the repository.
 * Undefined (the person told why, or they cancelled a pick) when one is missing.
 */
export async function scmStart(services: GatewayConnection, arg: unknown): Promise<{ model: string; repo: GitRepository } | undefined> {
  if (!services.isConfigured()) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Connect to a gateway first (Model Gateway: Set Up).'));
    return undefined;
  }
  const model = await resolveScmModel(async () => (await services.client().models.list()).map((m) => m.id));
  if (!model) return undefined;
  try {
    const repo = await chooseRepository(arg);
    return repo && { model, repo };
  } catch (err) {
    if (!(err instanceof GitUnavailableError)) throw err;
    void vscode.window.showWarningMessage(err.message);
    return undefined;
  }
}
