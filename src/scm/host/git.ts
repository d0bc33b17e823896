import * as vscode from 'vscode';

/**
 * The parts of the built-in Git extension's API (`vscode.git`, API version 1) used here: which
 * repositories are open, the Source Control box, the branch. Git itself is run through the hardened
 * runner (`tools/git.ts`), never through this API.
 */
export interface GitRepository {
  readonly rootUri: vscode.Uri;
  readonly inputBox: { value: string };
  readonly state: { readonly HEAD?: { readonly name?: string } };
}

interface GitApi {
  readonly state: 'uninitialized' | 'initialized';
  readonly onDidChangeState: vscode.Event<'uninitialized' | 'initialized'>;
  readonly repositories: GitRepository[];
  getRepository(uri: vscode.Uri): GitRepository | null;
}

interface GitExtension {
  readonly enabled: boolean;
  getAPI(version: 1): GitApi;
}

export class GitUnavailableError extends Error {}

/** The Git extension's API once it is ready; an error saying why when it is off or absent. */
export async function gitApi(): Promise<GitApi> {
  const ext = vscode.extensions.getExtension<GitExtension>('vscode.git');
  if (!ext) throw new GitUnavailableError(vscode.l10n.t('The built-in Git extension is not installed or is disabled.'));
  const exports = ext.isActive ? ext.exports : await ext.activate();
  if (!exports.enabled) throw new GitUnavailableError(vscode.l10n.t('Git is turned off (the setting git.enabled).'));
  const api = exports.getAPI(1);
  if (api.state !== 'initialized') {
    await new Promise<void>((resolve) => {
      const sub = api.onDidChangeState((s) => {
        if (s === 'initialized') {
          sub.dispose();
          resolve();
        }
      });
      setTimeout(() => {
        sub.dispose();
        resolve();
      }, 10_000);
    });
  }
  return api;
}

/**
 * The repository a command is about: the Source Control view's (its argument: the title bar passes
 * the `SourceControl`, the box's button its root), else the active editor's, else the only one,
 * else the one the person picks.
 */
export async function chooseRepository(arg: unknown): Promise<GitRepository | undefined> {
  const api = await gitApi();
  const root = arg instanceof vscode.Uri ? arg : (arg as { rootUri?: unknown } | undefined)?.rootUri;
  if (root instanceof vscode.Uri) {
    const repo = api.getRepository(root);
    if (repo) return repo;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const fromEditor = active ? api.getRepository(active) : null;
  if (fromEditor) return fromEditor;
  if (api.repositories.length === 0) throw new GitUnavailableError(vscode.l10n.t('No Git repository is open in this window.'));
  if (api.repositories.length === 1) return api.repositories[0];
  const pick = await vscode.window.showQuickPick(
    api.repositories.map((r) => ({ label: vscode.workspace.asRelativePath(r.rootUri, true) || r.rootUri.fsPath, repo: r })),
    { title: vscode.l10n.t('Which repository?') },
  );
  return pick?.repo;
}
