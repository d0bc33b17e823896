import * as vscode from 'vscode';
import { stringSetting } from '../../shell/settingsSchema';
import type { GatewayConnection, LogSource } from '../../shell/services';
import { locateRepository, type GitPlace } from '../../tools/git';
import { scmModelOf } from '../core/model';
import { chooseRepository, GitUnavailableError, type GitRepository } from './git';

/** The settings named in the log once per value (a workspace's value, ignored). */
let toldIgnored = '';

/**
 * The model for commit messages and reviews: `modelGateway.scm.model` from the person's own
 * settings, else the chat's model from the same (a cloned repository does not choose what its diff
 * is sent to: a workspace or folder value of either is ignored, and the log says so once).
 */
export function scmModel(log?: LogSource['log']): string {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const { model, ignored } = scmModelOf(c.inspect('scm.model'), c.inspect('defaultModels.chat'));
  const said = ignored.join(', ');
  if (said && said !== toldIgnored) log?.info(`Commit messages and reviews: this workspace's ${said} ignored; only your user settings choose the model.`);
  toldIgnored = said;
  return stringSetting('modelGateway.scm.model', model);
}

/** The model, or the one the person picks now from the gateway's list (kept in `modelGateway.scm.model`). */
export async function resolveScmModel(listModels: () => Promise<string[]>, log?: LogSource['log']): Promise<string | undefined> {
  const set = scmModel(log);
  if (set) return set;
  const ids = await listModels().catch(() => []);
  if (!ids.length) return undefined;
  const pick = await vscode.window.showQuickPick(ids, {
    title: vscode.l10n.t('Model for commit messages and reviews'),
    placeHolder: vscode.l10n.t('A small, fast chat model is enough; kept in modelGateway.scm.model'),
  });
  if (pick) await vscode.workspace.getConfiguration('modelGateway').update('scm.model', pick, vscode.ConfigurationTarget.Global);
  return pick;
}

/**
 * What a commit message or a review starts from: a connected gateway, the model, the repository
 * (as the Git extension knows it, and as git is told it: `place`, for every git run through the
 * hardened runner). Undefined (the person told why, or they cancelled a pick) when one is missing.
 */
export async function scmStart(
  services: GatewayConnection & LogSource,
  arg: unknown,
): Promise<{ model: string; repo: GitRepository; place: GitPlace } | undefined> {
  if (!services.isConfigured()) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Connect to a gateway first (Model Gateway: Set Up).'));
    return undefined;
  }
  const model = await resolveScmModel(async () => (await services.client().models.list()).map((m) => m.id), services.log);
  if (!model) return undefined;
  try {
    const repo = await chooseRepository(arg);
    if (!repo) return undefined;
    const place = await locateRepository(repo.rootUri.fsPath);
    if (!place) throw new GitUnavailableError(vscode.l10n.t('Git could not read the repository at {0}.', repo.rootUri.fsPath));
    return { model, repo, place };
  } catch (err) {
    if (!(err instanceof GitUnavailableError)) throw err;
    void vscode.window.showWarningMessage(err.message);
    return undefined;
  }
}
