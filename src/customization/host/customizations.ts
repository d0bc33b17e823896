import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ToolCategory } from '../../runtime/core/autoApproval';
import { objectArgs } from '../../runtime/host/toolCalls';
import type { CustomizationSource, ToolSource } from '../../runtime/host/toolbox';
import { inside, ToolError, type PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import {
  agentPrompt,
  CUSTOMIZATION_LIMITS,
  CUSTOMIZATION_PLACES,
  parseAgent,
  parsePrompt,
  parseSkill,
  READ_SKILL,
  skillsSection,
  toolsOfAgent,
  type CustomAgent,
  type PromptFile,
  type Skill,
} from '../core/files';
import { counted } from '../../shell/listeners';

interface Loaded {
  agents: CustomAgent[];
  prompts: PromptFile[];
  skills: Skill[];
  /** Files that could not be used, and why (logged). */
  problems: string[];
}

const EMPTY: Loaded = { agents: [], prompts: [], skills: [], problems: [] };
const PROMPT_ID = 'prompt-file:';

/**
 * The workspace's custom agents, prompt files and skills. Only in a trusted workspace (in Restricted
 * Mode a cloned repository's instructions reach nothing), each file through the path guard (a link
 * out of the workspace or a secret file is not read). Read again when one of them changes.
 */
export class Customizations implements ToolSource, CustomizationSource, vscode.Disposable {
  private current: Loaded = EMPTY;
  private loading: Promise<void> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('customizations.onDidChange', this.changed.event);
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly guard: () => PathGuard,
    private readonly log: (line: string) => void,
  ) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/{.github,.claude,.agents}/**/*.md');
    const again = () => void this.refresh();
    this.disposables.push(
      watcher,
      watcher.onDidCreate(again),
      watcher.onDidChange(again),
      watcher.onDidDelete(again),
      vscode.workspace.onDidGrantWorkspaceTrust(again),
      vscode.workspace.onDidChangeWorkspaceFolders(again),
    );
    // A file written by another program (a git checkout, a script) into a folder that did not exist
    // when the watcher started can go unseen (3 of 5 times in code-server): the few fixed places are
    // also looked at each second, by their names, times and sizes only.
    const timer = setInterval(() => void this.pollPlaces(), POLL_MS);
    this.disposables.push({ dispose: () => clearInterval(timer) });
  }

  private placesSeen: string | undefined;
  private polling = false;

  /** Reads the files again when the places' listing changed since the last look. */
  private async pollPlaces(): Promise<void> {
    if (this.polling || !vscode.workspace.isTrusted) return;
    this.polling = true;
    try {
      const seen = await placesSignature(workspaceRoots());
      if (this.placesSeen !== undefined && seen !== this.placesSeen) await this.refresh();
      this.placesSeen = seen;
    } finally {
      this.polling = false;
    }
  }

  /** Reads every file again (at most one read at a time; a change during a read reads once more). */
  refresh(): Promise<void> {
    const run = (this.loading ?? Promise.resolve()).then(async () => {
      const loaded = await this.load();
      if (JSON.stringify(loaded) === JSON.stringify(this.current)) return;
      this.current = loaded;
      for (const p of loaded.problems) this.log(`customizations: not used: ${p}`);
      this.changed.fire();
    });
    this.loading = run.catch(() => undefined);
    return run;
  }

  get agents(): readonly CustomAgent[] {
    return this.current.agents;
  }

  get skills(): readonly Skill[] {
    return this.current.skills;
  }

  agent(id: string): CustomAgent | undefined {
    return this.current.agents.find((a) => a.id === id);
  }

  modes(): { id: string; name: string; description: string }[] {
    return this.current.agents.map((a) => ({ id: a.id, name: a.name, description: a.description || vscode.l10n.t('Custom agent ({0})', a.path) }));
  }

  /** A custom agent's tools: those it names, among those Agent mode offers. */
  toolsOf(id: string, definitions: readonly ToolDefinition[]): ToolDefinition[] {
    const agent = this.agent(id);
    if (!agent?.tools) return [...definitions];
    const { kept, unknown } = toolsOfAgent(agent.tools, definitions);
    if (unknown.length) this.log(`customizations: ${agent.path} names tools this chat does not have: ${unknown.join(', ')}`);
    return kept;
  }

  modePrompt(id: string): string | undefined {
    const agent = this.agent(id);
    return agent ? agentPrompt(agent) : undefined;
  }

  modelOf(id: string): string | undefined {
    return this.agent(id)?.model;
  }

  skillsPrompt(): string {
    return skillsSection(this.current.skills);
  }

  promptItems(query: string): { path: string; name: string }[] {
    const q = query.toLowerCase();
    return this.current.prompts
      .filter((p) => p.name.toLowerCase().includes(q))
      .map((p) => ({ path: `${PROMPT_ID}${p.name}`, name: `${p.name}${p.description ? ` — ${p.description}` : ''}` }));
  }

  /** A prompt file picked: its text, and the mode it asks for (when it names one there is). */
  usePrompt(id: string): { text: string; mode?: string } | undefined {
    if (!id.startsWith(PROMPT_ID)) return undefined;
    const p = this.current.prompts.find((x) => x.name === id.slice(PROMPT_ID.length));
    if (!p) return undefined;
    const mode =
      p.mode &&
      (['agent', 'ask', 'plan'].includes(p.mode.toLowerCase())
        ? p.mode.toLowerCase()
        : this.current.agents.find((a) => a.name === p.mode || a.id === `custom:${p.mode}`)?.id);
    return { text: p.body, ...(mode ? { mode } : {}) };
  }

  // ---- read_skill, as a tool source ----

  definitions(): ToolDefinition[] {
    return this.current.skills.length ? [READ_SKILL] : [];
  }

  owns(name: string): boolean {
    return name === READ_SKILL.name;
  }

  category(): ToolCategory {
    return { kind: 'read' };
  }

  async run(_name: string, rawArgs: string): Promise<ToolResult> {
    try {
      return { content: await this.readSkill(objectArgs(rawArgs) ?? {}), isError: false };
    } catch (err) {
      return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
  }

  /** A skill's SKILL.md, or a file inside its folder (never outside it, never a secret file). */
  async readSkill(args: Record<string, unknown>): Promise<string> {
    const name = typeof args.name === 'string' ? args.name.trim() : '';
    const skill = this.current.skills.find((s) => s.name === name) ?? this.current.skills.find((s) => s.name.toLowerCase() === name.toLowerCase());
    if (!skill) throw new ToolError(`There is no skill named "${name}". Skills: ${this.current.skills.map((s) => s.name).join(', ') || 'none'}.`);
    const file = typeof args.file === 'string' && args.file.trim() ? args.file.trim().replace(/^\.\//, '') : 'SKILL.md';
    if (/^([/\\]|[A-Za-z]:)/.test(file) || file.split(/[/\\]/).includes('..'))
      throw new ToolError(`"${file}" is not a file of the skill's folder (${skill.dir}); read_skill reads only inside it, by a path relative to it.`);
    const guard = this.guard();
    const dir = await guard.resolve(skill.dir);
    const p = await guard.resolve(`${skill.dir}/${file}`);
    if (!inside(p.abs, dir.abs) || p.abs === dir.abs)
      throw new ToolError(`"${file}" is not a file of the skill's folder (${skill.dir}); read_skill reads only inside it.`);
    const text = await readSmall(p.abs);
    if (text === undefined) throw new ToolError(`${p.display} is not a readable file.`);
    return `${p.display}:\n${text}`;
  }

  private async load(): Promise<Loaded> {
    if (!vscode.workspace.isTrusted) return EMPTY;
    const out: Loaded = { agents: [], prompts: [], skills: [], problems: [] };
    const roots = workspaceRoots();
    // Fixed places (no search of the whole tree): the files of a folder, or each skill folder's SKILL.md.
    const read = async (files: (root: string) => Promise<string[]>, use: (path: string, text: string) => void) => {
      for (const root of roots) {
        for (const abs of (await files(root)).sort().slice(0, CUSTOMIZATION_LIMITS.files)) {
          const p = await this.guard()
            .resolve(abs)
            .catch(() => undefined);
          const text = p && (await readSmall(p.abs));
          if (p && text !== undefined) use(p.display, text);
        }
      }
    };
    const filesIn = (places: readonly { folder: string; suffix: string }[]) => async (root: string) =>
      (
        await Promise.all(
          places.map(async ({ folder, suffix }) => (await names(join(root, folder))).filter((n) => n.endsWith(suffix)).map((n) => join(root, folder, n))),
        )
      ).flat();
    const skillFiles = async (root: string) =>
      (
        await Promise.all(CUSTOMIZATION_PLACES.skills.map(async (folder) => (await names(join(root, folder))).map((n) => join(root, folder, n, 'SKILL.md'))))
      ).flat();
    await read(filesIn(CUSTOMIZATION_PLACES.agents), (path, text) => {
      const a = parseAgent(path, text);
      if ('error' in a) out.problems.push(a.error);
      else if (out.agents.some((x) => x.id === a.id)) out.problems.push(`${path}: another agent has the same file name`);
      else out.agents.push(a);
    });
    await read(filesIn(CUSTOMIZATION_PLACES.prompts), (path, text) => {
      const p = parsePrompt(path, text);
      if ('error' in p) out.problems.push(p.error);
      else if (!out.prompts.some((x) => x.name === p.name)) out.prompts.push(p);
    });
    await read(skillFiles, (path, text) => {
      const s = parseSkill(path, text);
      if ('error' in s) out.problems.push(s.error);
      else if (!out.skills.some((x) => x.name === s.name)) out.skills.push(s);
    });
    out.agents.sort((a, b) => a.name.localeCompare(b.name));
    return out;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** How often the fixed places are looked at for files written outside VS Code. */
const POLL_MS = 1000;

function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** The customization places as they are now: each file's name, time and size (a skill: its SKILL.md). */
async function placesSignature(roots: readonly string[]): Promise<string> {
  const parts: string[] = [];
  const look = async (file: string) => {
    const s = await stat(file).catch(() => undefined);
    if (s) parts.push(`${file}\u0000${s.mtimeMs}\u0000${s.size}`);
  };
  for (const root of roots) {
    for (const { folder, suffix } of [...CUSTOMIZATION_PLACES.agents, ...CUSTOMIZATION_PLACES.prompts]) {
      for (const n of (await names(join(root, folder)))
        .filter((x) => x.endsWith(suffix))
        .sort()
        .slice(0, CUSTOMIZATION_LIMITS.files))
        await look(join(root, folder, n));
    }
    for (const folder of CUSTOMIZATION_PLACES.skills) {
      for (const n of (await names(join(root, folder))).sort().slice(0, CUSTOMIZATION_LIMITS.files)) await look(join(root, folder, n, 'SKILL.md'));
    }
  }
  return parts.join('\n');
}

async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

async function readSmall(file: string): Promise<string | undefined> {
  try {
    if (!(await stat(file)).isFile()) return undefined;
    return (await readFile(file)).subarray(0, CUSTOMIZATION_LIMITS.fileBytes).toString('utf8');
  } catch {
    return undefined;
  }
}
