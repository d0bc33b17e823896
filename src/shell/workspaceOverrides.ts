import * as vscode from 'vscode';
import { userOnlySettingsIn } from './settingsFiles';
import { tell } from './errors';
import type { Services } from './services';

const SEEN = 'modelGateway.ignoredWorkspaceSettings';

/**
 * Tells the person, once per distinct content, when a workspace's or folder's settings try to set
 * where requests go (`baseUrl`, `extraHeaders`, `userId`). VS Code drops such values for settings
 * of `application` scope, and so does our reader, so the only trace is the file itself: it is
 * read here, at start and when it changes.
 */
export class WorkspaceOverrideNotice implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly services: Services) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/settings.json');
    this.disposables.push(
      watcher,
      watcher.onDidChange(() => void this.check()),
      watcher.onDidCreate(() => void this.check()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.check()),
    );
  }

  /** The files that could hold workspace settings: each folder's `.vscode/settings.json`, and the `.code-workspace` file. */
  private files(): vscode.Uri[] {
    const files = (vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, '.vscode', 'settings.json'));
    const ws = vscode.workspace.workspaceFile;
    if (ws && ws.scheme !== 'untitled') files.push(ws);
    return files;
  }

  /** Reads the files; notifies when they set a user-only setting not notified before. Returns what was found. */
  async check(): Promise<Record<string, unknown>> {
    const found: Record<string, unknown> = {};
    for (const uri of this.files()) {
      let text: string;
      try {
        text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      } catch {
        continue;
      }
      Object.assign(found, userOnlySettingsIn(text));
    }
    const keys = Object.keys(found);
    if (!keys.length) return found;
    const fingerprint = JSON.stringify(found);
    const state = this.services.context.workspaceState;
    if (state.get<string>(SEEN) === fingerprint) return found;
    await state.update(SEEN, fingerprint);
    this.services.log.warn(`workspace settings set ${keys.join(', ')}: ignored (user settings only)`);
    const what = keys.includes('modelGateway.baseUrl') ? vscode.l10n.t('name another gateway') : vscode.l10n.t('set {0}', keys.join(', '));
    const choice = await tell(
      this.services,
      'warning',
      vscode.l10n.t("This folder's settings {0}; ignored. Model Gateway sends requests and your credentials only to the gateway in your user settings.", what),
      vscode.l10n.t('Open Folder Settings'),
    );
    if (choice) await vscode.commands.executeCommand('workbench.action.openWorkspaceSettingsFile');
    return found;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
