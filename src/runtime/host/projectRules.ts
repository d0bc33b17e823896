import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import * as vscode from 'vscode';
import { inside, type PathGuard } from '../../tools/pathGuard';
import { RULE_SOURCES, ruleSourceOf, rulesSection, selectRules, type ProjectRule, type RuleFile, type RuleSource } from '../core/rules';

/** Larger files are read only this far (the prompt takes less still: `MAX_RULE_CHARS`). */
const MAX_READ_BYTES = 64 * 1024;
/** `AGENTS.md` files looked for in one folder. */
const MAX_AGENTS_FILES = 50;

/** The sources the person left on (`modelGateway.chat.projectRules`); all by default. */
export function enabledRuleSources(): Set<RuleSource> {
  const value = vscode.workspace.getConfiguration('modelGateway.chat').get<unknown>('projectRules');
  return new Set(Array.isArray(value) ? RULE_SOURCES.filter((s) => value.includes(s)) : RULE_SOURCES);
}

/**
 * The workspace's rules files, read afresh for each turn (a handful of small files); where the
 * nested `AGENTS.md` files are is searched once and again when one comes or goes. Only in a trusted
 * workspace: in Restricted Mode a cloned repository's instructions do not reach the model. Each
 * file passes the path guard first, like a tool's read: a rules file that is a link to a file
 * outside the workspace, a secret file or an excluded one is not read.
 */
export class ProjectRules implements vscode.Disposable {
  /** Workspace-relative paths of the `AGENTS.md` files, per folder root. */
  private agents: Promise<Map<string, string[]>> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly guard: () => PathGuard) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.md');
    const changed = (uri: vscode.Uri) => {
      if (ruleSourceOf(vscode.workspace.asRelativePath(uri, false)) === 'agents') this.agents = undefined;
    };
    this.disposables.push(
      watcher,
      watcher.onDidCreate(changed),
      watcher.onDidDelete(changed),
      vscode.workspace.onDidChangeWorkspaceFolders(() => (this.agents = undefined)),
    );
  }

  /** The rules for a turn about these files (absolute paths), and their prompt section. */
  async forTurn(inPlay: readonly string[]): Promise<{ rules: ProjectRule[]; section: string }> {
    if (!vscode.workspace.isTrusted) return { rules: [], section: '' };
    const enabled = enabledRuleSources();
    if (!enabled.size) return { rules: [], section: '' };
    this.agents ??= this.findAgents();
    const byFolder = await this.readAll(await this.agents);
    const folders = vscode.workspace.workspaceFolders ?? [];
    const rules: ProjectRule[] = [];
    for (const folder of folders) {
      const files = byFolder.get(folder.uri.fsPath) ?? [];
      if (!files.length) continue;
      const root = folder.uri.fsPath;
      const mine = inPlay.filter((p) => inside(p, root)).map((p) => relative(root, p).replace(/\\/g, '/'));
      // In a workspace of several folders, a folder's rules apply to its own files (its root rules when nothing is in play).
      if (folders.length > 1 && inPlay.length && !mine.length) continue;
      const prefix = folders.length > 1 ? `${folder.name}/` : '';
      for (const r of selectRules(files, mine, enabled)) rules.push({ ...r, path: prefix + r.path });
    }
    return { rules, section: rulesSection(rules) };
  }

  private async findAgents(): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== 'file') continue;
      const found = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, '**/AGENTS.md'), '**/{node_modules,.git}/**', MAX_AGENTS_FILES);
      out.set(
        folder.uri.fsPath,
        found.map((uri) => vscode.workspace.asRelativePath(uri, false).replace(/\\/g, '/')),
      );
    }
    return out;
  }

  private async readAll(agents: Map<string, string[]>): Promise<Map<string, RuleFile[]>> {
    const out = new Map<string, RuleFile[]>();
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== 'file') continue;
      const root = folder.uri.fsPath;
      const paths = new Set<string>(['AGENTS.md', '.github/copilot-instructions.md', 'CLAUDE.md']);
      try {
        for (const name of await readdir(join(root, '.modelgateway', 'rules')))
          if (name.toLowerCase().endsWith('.md')) paths.add(`.modelgateway/rules/${name}`);
      } catch {
        // No rules folder.
      }
      for (const path of agents.get(root) ?? []) paths.add(path);
      const files: RuleFile[] = [];
      for (const path of [...paths].sort()) {
        if (!ruleSourceOf(path)) continue;
        const allowed = await this.guard()
          .resolve(join(root, ...path.split('/')))
          .catch(() => undefined);
        const text = allowed && (await readSmall(allowed.abs));
        if (text !== undefined) files.push({ path, text });
      }
      out.set(root, files);
    }
    return out;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

async function readSmall(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return undefined;
    const data = await readFile(file);
    return data.subarray(0, MAX_READ_BYTES).toString('utf8');
  } catch {
    return undefined;
  }
}
