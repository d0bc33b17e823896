/**
 * Which tools a request carries. Sending every definition with every request is what a plain
 * question cost most (about 11,000 of 12,000 input tokens on VS Code 1.139.1): so a request
 * carries a small core chosen for the mode, plus `find_tools`. The other tools (language-server
 * navigation, problems, rename, tasks, skills, media, MCP and other extensions' tools) are found
 * by `find_tools` or loaded when the conversation names them, and from then on stay offered for
 * the rest of the conversation.
 *
 * The prompt cache: the offered list only grows, core first in a fixed order and loaded tools
 * after it in the order they were loaded, so a cached prefix stays valid until a tool is loaded
 * (and only the part after the tools is written again then).
 */
import type { Turn } from '../../common/conversation';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import type { ToolRunner } from './engine';
import type { BuiltInMode } from './modes';

export const FIND_TOOLS: ToolDefinition = {
  name: 'find_tools',
  kind: 'read',
  description:
    'Find more tools by what they do: code navigation (definitions, references, symbols), problems, rename, tasks, skills, images/speech, MCP servers, other extensions. The tools found can be called from your next step on.',
  parameters: { type: 'object', properties: { query: { type: 'string', description: 'What the tool should do, or tool names' } }, required: ['query'] },
};

/**
 * The tools each mode carries from the first request (when the mode offers them at all: the
 * semantic search once the index is ready, `read_skill` when the workspace has skills, which the
 * system prompt then lists).
 */
const CORE: Record<BuiltInMode, readonly string[]> = {
  agent: [
    'read_file',
    'list_dir',
    'find_files',
    'search_text',
    'semantic_search',
    'read_skill',
    'create_file',
    'replace_in_file',
    'run_command',
    'update_plan',
    'run_subagent',
    'memory',
  ],
  ask: ['read_file', 'list_dir', 'find_files', 'search_text', 'semantic_search', 'read_skill', 'run_subagent'],
  plan: ['read_file', 'list_dir', 'find_files', 'search_text', 'semantic_search', 'read_skill', 'update_plan', 'run_subagent'],
};

export function coreToolNames(mode: BuiltInMode): readonly string[] {
  return CORE[mode];
}

/** Tools found per `find_tools` call at most (the rest are named in its result). */
const FOUND_AT_MOST = 5;
/** Other tools' names listed in a `find_tools` result at most. */
const NAMES_AT_MOST = 40;

export interface ToolOfferOptions {
  /** Every tool the mode allows now (after a custom agent's narrowing), in a stable order. */
  all: readonly ToolDefinition[];
  mode: BuiltInMode;
  /** Tools loaded earlier in this conversation, in the order they were loaded. */
  loaded?: readonly string[];
  /** False: every tool is offered from the first request (the person's setting; no `find_tools`). */
  defer?: boolean;
  /** The core instead of the mode's (a custom agent's own short list of tools). */
  core?: readonly string[];
}

/** A custom agent that names this many tools or fewer gets them all from the first request: its author chose them. */
export const CUSTOM_AGENT_CORE_AT_MOST = 20;

/** The offer of one turn: what each request carries, and what `find_tools` loads into it. */
export class ToolOffer {
  private readonly all: readonly ToolDefinition[];
  private readonly byName: Map<string, ToolDefinition>;
  private readonly core: ToolDefinition[];
  private readonly loadedNames: string[] = [];
  private readonly defer: boolean;

  constructor(o: ToolOfferOptions) {
    this.all = o.all.filter((d) => d.name !== FIND_TOOLS.name);
    this.byName = new Map(this.all.map((d) => [d.name, d]));
    const core = new Set(o.core ?? CORE[o.mode]);
    this.core = this.all.filter((d) => core.has(d.name));
    this.defer = o.defer !== false;
    this.load(o.loaded ?? []);
  }

  /** The tools not offered yet. */
  deferred(): ToolDefinition[] {
    if (!this.defer) return [];
    const offered = new Set([...this.core.map((d) => d.name), ...this.loadedNames]);
    return this.all.filter((d) => !offered.has(d.name));
  }

  /** What the next request carries: the core, `find_tools` while anything is left to find, then the loaded tools. */
  offered(): ToolDefinition[] {
    if (!this.defer) return [...this.all];
    // find_tools stays once offered (it is in the cached prefix), so only its first offer depends on what is left.
    const finder = this.loadedNames.length > 0 || this.deferred().length > 0 ? [FIND_TOOLS] : [];
    return [...this.core, ...finder, ...this.loadedNames.map((n) => this.byName.get(n)).filter((d): d is ToolDefinition => !!d)];
  }

  /** Whether the model may call it: offered, or deferred (calling a tool by a name it learned loads it). */
  allows(name: string): boolean {
    return name === FIND_TOOLS.name ? this.defer && this.offered().some((d) => d.name === name) : this.byName.has(name);
  }

  kindOf(name: string): ToolDefinition['kind'] | undefined {
    return name === FIND_TOOLS.name ? 'read' : this.byName.get(name)?.kind;
  }

  /** The loaded names, in the order they were loaded (kept with the conversation). */
  loaded(): readonly string[] {
    return this.loadedNames;
  }

  /** Loads tools by name (unknown names and core tools are left out); the names newly loaded. */
  load(names: Iterable<string>): string[] {
    const added: string[] = [];
    const core = new Set(this.core.map((d) => d.name));
    for (const n of names) {
      if (!this.byName.has(n) || core.has(n) || this.loadedNames.includes(n)) continue;
      this.loadedNames.push(n);
      added.push(n);
    }
    return added;
  }

  /** Loads the deferred tools the text names (`find_references`, "the echo tool"); the names newly loaded. */
  loadNamedIn(text: string): string[] {
    // "read_file" names ours, not an MCP server's `filesystem__read_file`: a server's tool whose own name is an offered tool's is left to find_tools.
    const offered = new Set(this.offered().map((d) => d.name));
    const shadowed = (name: string) => name.includes('__') && offered.has(name.slice(name.indexOf('__') + 2));
    return this.load(
      this.deferred()
        .filter((d) => !shadowed(d.name) && namedIn(d.name, text))
        .map((d) => d.name),
    );
  }

  /** Runs `find_tools`: the best matches are loaded and described; the others are named. */
  find(rawArgs: string): ToolResult {
    let args: { query?: unknown };
    try {
      args = JSON.parse(rawArgs || '{}') as { query?: unknown };
    } catch {
      return { content: 'Error: the arguments are not JSON: {"query": "what the tool should do"}.', isError: true };
    }
    const query = typeof args.query === 'string' ? args.query : '';
    const left = this.deferred();
    if (left.length === 0) return { content: 'Every tool available here is already offered to you.', isError: false };
    const found = rankTools(left, query).slice(0, FOUND_AT_MOST);
    this.load(found.map((d) => d.name));
    const others = this.deferred();
    const lines: string[] = [];
    if (found.length > 0) {
      lines.push(`Found ${found.length} tool${found.length === 1 ? '' : 's'}; call ${found.length === 1 ? 'it' : 'them'} from your next step on:`);
      for (const d of found) lines.push(`- ${d.name}: ${oneLine(d.description)}`);
    } else {
      lines.push(`No tool matches "${query.slice(0, 100)}".`);
    }
    if (others.length > 0) {
      const named = others.slice(0, NAMES_AT_MOST).map((d) => (found.length > 0 ? d.name : `${d.name} (${oneLine(d.description, 60)})`));
      lines.push(
        '',
        `Other tools you can find by name: ${named.join(', ')}${others.length > NAMES_AT_MOST ? `, and ${others.length - NAMES_AT_MOST} more` : ''}.`,
      );
    }
    return { content: lines.join('\n'), isError: false };
  }
}

/** The words of a name: `find_references` → find, references; `server__getWeather` → get, weather. */
export function nameWords(name: string): string[] {
  const tool = name.includes('__') ? name.slice(name.indexOf('__') + 2) : name;
  return tool
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function textWords(text: string): Set<string> {
  return new Set(
    text
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean)
      .map(stem),
  );
}

/** Plural and verb endings off, so "references" finds "reference" and "renaming" finds "rename". */
function stem(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3).replace(/(.)\1$/, '$1');
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('es') && /(ch|sh|x|ss)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/**
 * Whether a text names a tool: its whole name (`find_references`), or every word of a name of two
 * words or more ("find references", "rename the symbol"), or a one-word tool's word with "tool",
 * "call" or "use" near it ("call the echo tool").
 */
export function namedIn(name: string, text: string): boolean {
  if (!text) return false;
  const lower = text.toLowerCase();
  const bare = name.includes('__') ? name.slice(name.indexOf('__') + 2) : name;
  if (lower.includes(name.toLowerCase()) || (bare.length >= 6 && new RegExp(`\\b${bare.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(lower)))
    return true;
  const parts = nameWords(name).map(stem);
  if (parts.length === 0) return false;
  const present = textWords(text);
  if (!parts.every((p) => present.has(p))) return false;
  return parts.length >= 2 || /\b(tool|call|use|using)\b/i.test(text);
}

/** Words that say the same job as a tool's words ("errors" for problems, "callers" for references). */
const SYNONYMS: Record<string, string[]> = {
  error: ['problem', 'diagnostic'],
  warning: ['problem', 'diagnostic'],
  diagnostic: ['problem'],
  compile: ['problem'],
  caller: ['reference'],
  usage: ['reference'],
  declaration: ['definition'],
  declared: ['definition'],
  defined: ['definition'],
  outline: ['symbol'],
  function: ['symbol'],
  class: ['symbol'],
  picture: ['image'],
  draw: ['image'],
  voice: ['speech'],
  audio: ['speech', 'transcribe'],
  speak: ['speech'],
  transcript: ['transcribe'],
  build: ['task'],
  launch: ['task'],
  instruction: ['skill'],
  plan: ['plan'],
  todo: ['plan'],
};

const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'for',
  'in',
  'on',
  'and',
  'or',
  'with',
  'that',
  'this',
  'tool',
  'tools',
  'is',
  'it',
  'me',
  'my',
  'i',
  'do',
  'can',
  'want',
  'need',
  'some',
  'from',
]);

/** The tools that match a query best, best first (none when nothing matches). */
export function rankTools(tools: readonly ToolDefinition[], query: string): ToolDefinition[] {
  const exact = tools.filter((d) => query.split(/[\s,]+/).some((q) => q === d.name || (d.name.includes('__') && q === d.name.slice(d.name.indexOf('__') + 2))));
  if (exact.length > 0) return exact;
  const words = [...textWords(query)].filter((w) => !STOP_WORDS.has(w));
  const wanted = new Set(words.flatMap((w) => [w, ...(SYNONYMS[w] ?? [])]));
  if (wanted.size === 0) return [];
  const scored = tools.map((d, order) => {
    const nameSet = new Set(nameWords(d.name).map(stem));
    const server = d.name.includes('__') ? nameWords(d.name.slice(0, d.name.indexOf('__'))).map(stem) : [];
    const described = textWords(d.description);
    let score = 0;
    for (const w of wanted) {
      if (nameSet.has(w)) score += 3;
      else if (server.includes(w)) score += 2;
      else if (described.has(w)) score += 1;
    }
    return { d, score, order };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map((s) => s.d);
}

function oneLine(text: string, max = 120): string {
  const first = /^(.+?[.!?])(\s|$)/.exec(text.replace(/\s+/g, ' ').trim())?.[1] ?? text.replace(/\s+/g, ' ').trim();
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** What the people wrote in the conversation (tools they name are loaded from the start). */
export function userTexts(history: readonly Turn[]): string {
  return history
    .filter((t) => t.role === 'user')
    .map((t) => (t.role === 'user' ? t.text : ''))
    .join('\n');
}

/** The tools the conversation already called (loaded again for a conversation saved before loads were kept). */
export function calledTools(history: readonly Turn[]): string[] {
  const names: string[] = [];
  for (const t of history) if (t.role === 'assistant') for (const s of t.steps) for (const c of s.toolCalls) if (!names.includes(c.name)) names.push(c.name);
  return names;
}

/**
 * A runner that carries the offer's tools and answers `find_tools` itself; every other call goes to
 * `run` (a deferred tool called by name is loaded first). The chat's runner (`host/turnTools.ts`)
 * does the same among its approvals; this one is for the engine without VS Code (benchmarks, tests).
 */
export function offeredRunner(offer: ToolOffer, run: ToolRunner['run']): ToolRunner {
  return {
    get definitions() {
      return offer.offered();
    },
    kindOf: (name) => offer.kindOf(name),
    run: (name, args, signal, callId, onApproved) => {
      if (!offer.allows(name)) return Promise.resolve({ content: `Error: there is no tool named ${name} here.`, isError: true });
      if (name === FIND_TOOLS.name) return Promise.resolve(offer.find(args));
      offer.load([name]);
      return run(name, args, signal, callId, onApproved);
    },
  };
}
