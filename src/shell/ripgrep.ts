import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

/** ripgrep as VS Code ships it (code-server too), else none (the built-in search is used). */
export function ripgrepPath(): string | undefined {
  const root = vscode.env.appRoot;
  for (const dir of ['node_modules', 'node_modules.asar.unpacked']) {
    const p = join(root, dir, '@vscode', 'ripgrep', 'bin', process.platform === 'win32' ? 'rg.exe' : 'rg');
    if (existsSync(p)) return p;
  }
  return undefined;
}
