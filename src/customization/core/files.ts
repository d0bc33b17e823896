/**
 * The customization files VS Code, Copilot and Claude Code share: custom agents (`.agent.md`, and
 * `.chatmode.md`, their older spelling), prompt files (`.prompt.md`) and skills (`SKILL.md`).
 * Front matter is YAML, read with `js-yaml` and checked with zod; what does not fit is reported, not
 * guessed at.
 */
import { load as parseYaml } from 'js-yaml';
import * as z from 'zod/mini';
import type { ToolDefinition } from '../../tools/workspaceTools';

export const CUSTOMIZATION_LIMITS = {
  /** Each file is read this far. */
  fileBytes: 64 * 1024,
  /** An agent's instructions or a skill's body, as sent. */
  bodyChars: 12_000,
  /** Files of each kind. */
  files: 50,
  description: 300,
};

/** Where each kind lives, relative to a workspace folder: a folder, and the files in it (a skill: the folders in it, each with its SKILL.md). */
export const CUSTOMIZATION_PLACES = {
  agents: [
    { folder: '.github/agents', suffix: '.agent.md' },
    { folder: '.github/chatmodes', suffix: '.chatmode.md' },
  ],
  prompts: [{ folder: '.github/prompts', suffix: '.prompt.md' }],
  skills: ['.github/skills', '.claude/skills', '.agents/skills'],
};

const Text = z.pipe(
  z.unknown(),
  z.transform((v) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : undefined)),
);
const Names = z.pipe(
  z.unknown(),
  z.transform((v) =>
    Array.isArray(v)
      ? v
          .filter((x): x is string => typeof x === 'string')
          .map((x) => x.trim())
          .filter(Boolean)
      : typeof v === 'string'
        ? v
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : undefined,
  ),
);
const Front = z.looseObject({
  name: z.optional(Text),
  description: z.optional(Text),
  tools: z.optional(Names),
  model: z.optional(
    z.pipe(
      z.unknown(),
      z.transform((v) => (Array.isArray(v) ? v.find((x): x is string => typeof x === 'string') : typeof v === 'string' ? v.trim() : undefined)),
    ),
  ),
  mode: z.optional(Text),
  agent: z.optional(Text),
});
type Front = z.infer<typeof Front>;

/** `---` YAML front matter and the body after it. */
export function splitFrontMatter(text: string): { front: Front; body: string; error?: string } {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return { front: {}, body: text.trim() };
  const body = text.slice(m[0].length).trim();
  let data: unknown;
  try {
    data = parseYaml(m[1]);
  } catch (err) {
    return { front: {}, body, error: `its front matter is not valid YAML (${(err as Error).message.split('\n')[0]})` };
  }
  const parsed = Front.safeParse(data ?? {});
  if (!parsed.success) return { front: {}, body, error: 'its front matter is not a set of fields' };
  return { front: parsed.data, body };
}

const stem = (path: string, suffix: RegExp) => path.slice(path.lastIndexOf('/') + 1).replace(suffix, '');
const cap = (s: string | undefined, n: number) => (s && s.length > n ? `${s.slice(0, n - 1)}…` : (s ?? ''));

export interface CustomAgent {
  /** `custom:<file name>`: the mode picker's id. */
  id: string;
  name: string;
  description: string;
  /** The tools it names (VS Code's names or ours); undefined: every tool of Agent mode. */
  tools?: string[];
  model?: string;
  instructions: string;
  /** The file, as tools show paths. */
  path: string;
}

export function parseAgent(path: string, text: string): CustomAgent | { error: string } {
  const { front, body, error } = splitFrontMatter(text);
  if (error) return { error: `${path}: ${error}` };
  const file = stem(path, /\.(agent|chatmode)\.md$/i);
  if (!/^[\w.-]{1,80}$/.test(file)) return { error: `${path}: the file name is not a usable agent name` };
  return {
    id: `custom:${file}`,
    name: cap(front.name || file, 80),
    description: cap(front.description, CUSTOMIZATION_LIMITS.description),
    ...(front.tools ? { tools: front.tools } : {}),
    ...(front.model ? { model: front.model } : {}),
    instructions: cap(body, CUSTOMIZATION_LIMITS.bodyChars),
    path,
  };
}

export interface PromptFile {
  /** The `/` command's name (the file name). */
  name: string;
  description: string;
  body: string;
  /** The mode (built-in or custom agent) it runs in, when it says. */
  mode?: string;
  path: string;
}

export function parsePrompt(path: string, text: string): PromptFile | { error: string } {
  const { front, body, error } = splitFrontMatter(text);
  if (error) return { error: `${path}: ${error}` };
  if (!body) return { error: `${path}: the prompt is empty` };
  const mode = front.agent || front.mode;
  return { name: stem(path, /\.prompt\.md$/i), description: cap(front.description, CUSTOMIZATION_LIMITS.description), body, ...(mode ? { mode } : {}), path };
}

export interface Skill {
  name: string;
  description: string;
  /** The skill's folder and its SKILL.md, as tools show paths. */
  dir: string;
  path: string;
}

export function parseSkill(path: string, text: string): Skill | { error: string } {
  const { front, error } = splitFrontMatter(text);
  if (error) return { error: `${path}: ${error}` };
  const dir = path.slice(0, path.lastIndexOf('/'));
  const name = front.name || dir.slice(dir.lastIndexOf('/') + 1);
  if (!front.description) return { error: `${path}: a skill needs a description (front matter), or the model cannot know when to use it` };
  return { name: cap(name, 80), description: cap(front.description, CUSTOMIZATION_LIMITS.description), dir, path };
}

const NAVIGATE = ['find_references', 'find_definition', 'workspace_symbols', 'document_symbols'];

/**
 * VS Code's and Copilot's tool and tool-set names, as the tools of this chat: the older names agent
 * files were written with, and the names VS Code 1.139 uses (its built-in tools and tool sets, and
 * the Copilot extension's `languageModelTools`/`languageModelToolSets`, read from code-server
 * 4.139.1: `edit`, `execute`, `read`, `search`, `vscodeGeneral`, `vscodeTasks`, `todo`…). A name
 * VS Code says was renamed works under both names here.
 */
export const TOOL_ALIASES: Record<string, readonly string[]> = {
  // Tools.
  codebase: ['semantic_search', 'read_file', 'search_text', 'find_files'],
  readfile: ['read_file'],
  listdirectory: ['list_dir'],
  filesearch: ['find_files'],
  textsearch: ['search_text'],
  createfile: ['create_file'],
  createdirectory: ['create_file'],
  editfiles: ['create_file', 'replace_in_file'],
  replacestring: ['replace_in_file'],
  multireplacestring: ['replace_in_file'],
  applypatch: ['replace_in_file'],
  insertedit: ['replace_in_file'],
  runcommands: ['run_command'],
  runinterminal: ['run_command'],
  getterminaloutput: ['run_command'],
  terminal: ['run_command'],
  runtasks: ['run_task'],
  runtask: ['run_task'],
  createandruntask: ['run_task'],
  gettaskoutput: ['run_task'],
  problems: ['get_problems'],
  usages: NAVIGATE,
  symbols: ['workspace_symbols'],
  rename: ['rename_symbol'],
  skill: ['read_skill'],
  todos: ['update_plan'],
  todo: ['update_plan'],
  // Tool sets.
  edit: ['create_file', 'replace_in_file', 'rename_symbol'],
  execute: ['run_command', 'run_task'],
  read: ['read_file', 'list_dir', 'find_files', 'get_problems'],
  search: ['search_text', 'find_files', 'list_dir', 'read_file', 'semantic_search', ...NAVIGATE],
  vscodegeneral: ['rename_symbol', ...NAVIGATE],
  vscodetasks: ['run_task', 'get_problems'],
};

/**
 * The sets a qualified name starts with (`vscodeGeneral/usages`, `read/problems`, and the older
 * `runCommands/getTerminalOutput`, `search/readFile`): the tool after the slash is what counts.
 */
const TOOL_SETS = new Set([
  'edit',
  'execute',
  'read',
  'search',
  'vscode',
  'web',
  'agent',
  'vscodegeneral',
  'vscodetasks',
  'vscodebrowser',
  'vscodenotebooks',
  'vscodeautomations',
  'runcommands',
  'runtasks',
  'runnotebooks',
  'new',
]);

/**
 * The tools a custom agent keeps: those it names (VS Code's names, old and new, mapped to ours; an
 * MCP server's name, or `server/*`, for all its tools). `update_plan` and `read_skill` always stay:
 * they change nothing. Unknown names are returned, to be reported.
 */
export function toolsOfAgent(names: readonly string[], definitions: readonly ToolDefinition[]): { kept: ToolDefinition[]; unknown: string[] } {
  const wanted = new Set<string>(['update_plan', 'read_skill']);
  const unknown: string[] = [];
  const offered = new Set(definitions.map((d) => d.name));
  for (const raw of names) {
    const name = raw.replace(/^#/, '');
    const server = /^([\w.-]+)\/\*$/.exec(name)?.[1];
    const ofServer = [...offered].filter((t) => t.startsWith(`${server ?? name}__`));
    const slash = name.indexOf('/');
    const set = slash > 0 ? name.slice(0, slash).toLowerCase() : undefined;
    // `set/tool` names the tool; `set/*` the whole set.
    const vsName = set && TOOL_SETS.has(set) && !ofServer.length ? (name.slice(slash + 1) === '*' ? set : name.slice(slash + 1)) : name;
    const alias = TOOL_ALIASES[vsName.toLowerCase()];
    if (offered.has(vsName)) wanted.add(vsName);
    else if (server && ofServer.length) ofServer.forEach((t) => wanted.add(t));
    else if (alias) alias.forEach((a) => wanted.add(a));
    else if (ofServer.length) ofServer.forEach((t) => wanted.add(t));
    else unknown.push(raw);
  }
  return { kept: definitions.filter((d) => wanted.has(d.name)), unknown };
}

export const READ_SKILL: ToolDefinition = {
  name: 'read_skill',
  kind: 'read',
  description:
    "Read a skill's instructions (its SKILL.md), or a file of its folder that those instructions name. Read a skill before a task its description matches.",
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The skill, as listed in the system prompt' },
      file: { type: 'string', description: "A file of the skill's folder, relative to it (optional; default SKILL.md)" },
    },
    required: ['name'],
  },
};

/** The system prompt's list of skills: names and descriptions only (the bodies are read on demand). */
export function skillsSection(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  return [
    "Skills of this workspace (instructions for particular tasks). When a task matches a skill's description, read it with read_skill first and follow it:",
    ...skills.map((s) => `- ${s.name}: ${s.description}`),
  ].join('\n');
}

/** What a custom agent adds to the system prompt. */
export function agentPrompt(agent: CustomAgent): string {
  return [`Mode: ${agent.name} (a custom agent of this workspace, ${agent.path}). Follow its instructions:`, agent.instructions].join('\n');
}
