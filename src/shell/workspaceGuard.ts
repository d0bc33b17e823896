import * as vscode from 'vscode';
import { PathGuard } from '../tools/pathGuard';
import { chatSettings, workspaceExcludeGlobs } from './config';

/** The path guard over the open workspace's local folders, with every exclude rule that applies. */
export function workspaceGuard(): PathGuard {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, path: f.uri.fsPath }));
  const chat = chatSettings();
  return new PathGuard(folders, [...workspaceExcludeGlobs(), ...chat.extraExcludes], chat.secretFiles);
}
