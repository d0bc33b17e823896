import * as vscode from 'vscode';
import { isSecretPath, PathGuard, SecretFileError } from '../tools/pathGuard';
import { chatSettings, workspaceExcludeGlobs } from './config';

/** The path guard over the open workspace's local folders, with every exclude rule that applies. */
export function workspaceGuard(): PathGuard {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, path: f.uri.fsPath }));
  const chat = chatSettings();
  return new PathGuard(folders, [...workspaceExcludeGlobs(), ...chat.extraExcludes], chat.secretFiles);
}

/**
 * Whether a file's content may leave the editor without the person naming it: 'secret' (the deny
 * list: `.env`, keys…), 'excluded' (ignored or excluded in the workspace), or undefined (it may).
 * Files outside the workspace folders are checked against the deny list only.
 */
export async function fileVerdict(uri: vscode.Uri, guard: () => PathGuard = workspaceGuard): Promise<'secret' | 'excluded' | undefined> {
  if (isSecretPath(uri.fsPath, chatSettings().secretFiles)) return 'secret';
  if (!vscode.workspace.getWorkspaceFolder(uri)) return undefined;
  try {
    await guard().resolve(uri.fsPath);
    return undefined;
  } catch (err) {
    return err instanceof SecretFileError ? 'secret' : 'excluded';
  }
}
