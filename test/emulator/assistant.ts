/**
 * The emulator's deterministic "model": the same conversation always gets the same answer, so
 * tests can assert on it, and the answers still read sensibly in a demo.
 *
 * - With tools offered and tool_choice allowing it, the last user message decides which tools to
 *   call: a tool is called when its name (or every word of it) appears in the message. Several
 *   matching tools, or one path-taking tool with several paths mentioned, give parallel calls.
 *   `required` calls the first tool when none matches; a forced function is always called.
 * - With a tool search offered (`find_tools`) and a request that needs a tool not offered, it
 *   searches first (`tool-search.ts`).
 * - After tool results, the answer quotes them. `#steps=N` in the user message keeps calling
 *   tools for N rounds before answering (for agent-loop tests).
 * - `#words=N` asks for an answer of about N words (long streams); the word "code" adds a code block.
 */
import { delegationPlan, memoryPlan } from './delegation';
import { editorPlan } from './editor-agent';
import { toolSearchPlan } from './tool-search';
import { scmAnswer } from './scm-model';
import { nextEditAnswer } from './next-edit-model';
import { assistantReply } from './prose';

export interface ToolSpec {
  name: string;
  description?: string;
  parameters?: JsonSchema;
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  items?: JsonSchema;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
  images: number;
  /** Tool results carried by this turn (chat: tool messages; messages format: tool_result blocks). */
  toolResults: { name: string; content: string; isError: boolean }[];
  /** Tool calls the assistant made in this turn. */
  toolCalls: string[];
  /** Their arguments, in the same order, where the format carried them as an object. */
  callArgs?: Record<string, unknown>[];
}

export interface Plan {
  thinking?: string;
  text: string;
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
}

/** A tool call's arguments (JSON text or an object) as an object; {} when they are neither. */
export function argsObject(raw: unknown): Record<string, unknown> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  try {
    const v = JSON.parse(typeof raw === 'string' ? raw : '') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function words(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function nameParts(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

const PATH_TOKEN = /(?:^|[\s"'`(])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z0-9]{1,8})(?=$|[\s"'`),.;:!?])/g;

function pathsIn(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(PATH_TOKEN)) if (!found.includes(m[1])) found.push(m[1]);
  return found;
}

function quotedAll(text: string): string[] {
  return [...text.matchAll(/"([^"]{1,2000})"|`([^`]{1,2000})`/g)].map((m) => m[1] ?? m[2]);
}

function quotedIn(text: string): string | undefined {
  return quotedAll(text)[0];
}

function argumentFor(prop: string, schema: JsonSchema, text: string, path: string | undefined, root: string | undefined): unknown {
  const lower = prop.toLowerCase();
  if (schema.enum && schema.enum.length > 0) {
    const mentioned = schema.enum.find((v) => typeof v === 'string' && text.toLowerCase().includes(v.toLowerCase()));
    return mentioned ?? schema.enum[0];
  }
  switch (schema.type) {
    case 'number':
    case 'integer': {
      const n = /\b(\d{1,6})\b/.exec(text);
      // A line range nobody named: the whole of a small file, as a model asks for.
      if (!n && /^end|last/.test(lower)) return 200;
      return n ? Number(n[1]) : 1;
    }
    case 'boolean':
      return false;
    case 'array':
      return path && /path|file/.test(lower) ? [path] : [];
    case 'object':
      return {};
    default:
      // replace-style tools: the first quoted string is the old text, the second the new one.
      if (/^old|^search|^find/.test(lower)) return quotedAll(text)[0] ?? '';
      if (/^new|^replace/.test(lower)) return quotedAll(text)[1] ?? quotedAll(text)[0] ?? '';
      if (/content|text|body/.test(lower)) return quotedAll(text).at(-1) ?? text;
      if (/path|file|dir|folder/.test(lower)) {
        // A tool that wants absolute paths gets them under the workspace folder the client named.
        const wanted = path ?? '.';
        if (root && /absolute/i.test(schema.description ?? '') && !wanted.startsWith('/'))
          return wanted === '.' ? root : `${root.replace(/\/$/, '')}/${wanted}`;
        return wanted;
      }
      if (/glob|pattern/.test(lower)) return quotedIn(text) ?? '**/*';
      if (/query|search|regex|text|keyword/.test(lower)) return quotedIn(text) ?? words(text).slice(-2).join(' ');
      return quotedIn(text) ?? words(text).slice(-1)[0] ?? '';
  }
}

function argumentsFor(tool: ToolSpec, text: string, path: string | undefined, root?: string): Record<string, unknown> {
  const props = tool.parameters?.properties ?? {};
  const required = new Set(tool.parameters?.required ?? []);
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props)) {
    const isPathish = /path|file|dir/.test(name.toLowerCase());
    if (required.has(name) || (isPathish && path)) args[name] = argumentFor(name, schema, text, path, root);
    else {
      // An optional argument the person gave by name ('with the description "…"'), as a model takes it.
      const given = new RegExp(`\\b${name.replace(/_/g, '[ _]')}\\s+"([^"]{1,2000})"`, 'i').exec(text)?.[1];
      if (given !== undefined && (schema.type === 'string' || schema.type === undefined)) args[name] = given;
    }
  }
  return args;
}

/** The workspace folder the client told the model about (VS Code's chat: `<workspace_info>`'s folder list). */
function workspaceRoot(turns: Turn[]): string | undefined {
  for (const t of turns) {
    const m = /following folders:\s*\n-\s+(\/\S+)/.exec(t.text);
    if (m) return m[1];
  }
  return undefined;
}

/** "Run the tests", "build it", "run `make check`": the command line a model would run, if the request asks for one. */
export function commandAsked(text: string): string | undefined {
  const quoted = /(?:run|execute)\s+(?:the\s+command\s+)?`([^`]{1,500})`/i.exec(text)?.[1];
  if (quoted) return quoted;
  if (/\b(run|execute)\b[^.?!]*\btests?\b|\btest suite\b/i.test(text)) return 'npm test';
  if (/\b(run|execute)\b[^.?!]*\b(the )?build\b|\bbuild (it|the project)\b/i.test(text)) return 'npm run build';
  if (/\b(run|execute)\b[^.?!]*\b(the )?lint(er)?\b/i.test(text)) return 'npm run lint';
  return undefined;
}

/** A tool from a server (`server__tool`): named by its own name, as people do ("call echo"). */
function serverToolMentioned(tool: ToolSpec, text: string): boolean {
  const at = tool.name.indexOf('__');
  if (at <= 0) return false;
  const parts = nameParts(tool.name.slice(at + 2));
  const present = new Set(words(text));
  return parts.length > 0 && parts.every((p) => present.has(p)) && /\b(tool|call|use|using|with)\b/i.test(text);
}

function toolMentioned(tool: ToolSpec, text: string): boolean {
  const lower = text.toLowerCase();
  if (lower.includes(tool.name.toLowerCase())) return true;
  const parts = nameParts(tool.name);
  const present = new Set(words(text).map((w) => w.replace(/s$/, '')));
  return parts.length > 0 && parts.every((p) => present.has(p) || present.has(p.replace(/s$/, '')));
}

/**
 * What the person typed: the user message without the file context the client put before it
 * ("Context from README.md:" and a fenced block), which a model reads but does not answer. VS
 * Code's own chat wraps the request in `<userRequest>` after its context blocks (environment,
 * workspace, reminders): a model answers that part.
 */
export function typedText(text: string): string {
  const wrapped = [...text.matchAll(/<userRequest>\s*([\s\S]*?)\s*<\/userRequest>/g)].at(-1)?.[1];
  if (wrapped !== undefined) return wrapped;
  return text.replace(/^Context from [^\n]*:\n(`{3,})[^\n]*\n[\s\S]*?\n\1(?:\n\n|$)/gm, '').trim();
}

function directive(text: string, name: string): number | undefined {
  const m = new RegExp(`#${name}=(\\d{1,6})`).exec(text);
  return m ? Number(m[1]) : undefined;
}

function reply(model: string, turns: Turn[], lastUser: Turn): string {
  return assistantReply({
    model,
    messages: turns.length,
    question: lastUser.text.replace(/#\w+=\d+/g, '').trim(),
    images: lastUser.images,
    words: directive(lastUser.text, 'words'),
  });
}

/**
 * A request to condense a conversation (a transcript in <conversation> tags): a summary made from
 * it, as a model would write one — the requests, the tool calls by tool and argument, the open
 * question — so tests can check what the summary carries on.
 */
function summaryOf(text: string): string | undefined {
  if (!/summari[sz]e the conversation below/i.test(text)) return undefined;
  const transcript = /<conversation>\n?([\s\S]*)<\/conversation>/.exec(text)?.[1] ?? '';
  const earlier = /^Summary of what came before:\n([\s\S]*?)(?:\n\n(?:User|Assistant)|$)/.exec(transcript)?.[1];
  const requests = [...transcript.matchAll(/^User(?: \([^)]*\))?: (.*)$/gm)].map((m) =>
    m[1]
      .replace(/#\w+=\d+/g, '')
      .trim()
      .slice(0, 160),
  );
  const calls = new Map<string, { args: string[]; count: number }>();
  for (const m of transcript.matchAll(/^Assistant called ([\w.-]+)\((.*)\)( and it failed)?:$/gm)) {
    const arg = /"(?:path|query|pattern)":"([^"]{1,200})"/.exec(m[2])?.[1] ?? m[2].slice(0, 60);
    const entry = calls.get(m[1]) ?? { args: [], count: 0 };
    if (!entry.args.includes(arg)) entry.args.push(arg);
    entry.count++;
    calls.set(m[1], entry);
  }
  // Work an earlier summary recorded counts too (a model reads its own summary).
  for (const m of (earlier ?? '').matchAll(/^- ([\w.-]+) ×(\d+):/gm)) {
    const entry = calls.get(m[1]) ?? { args: [], count: 0 };
    entry.count += Number(m[2]);
    calls.set(m[1], entry);
  }
  return [
    ...(earlier ? ['## Before that', earlier.trim().replace(/^- ([\w.-]+) ×\d+:/gm, '- $1 (counted below):'), ''] : []),
    '## Requests',
    ...(requests.length ? requests.map((r) => `- ${r}`) : ['- (none in this part)']),
    '',
    '## Work done',
    ...(calls.size ? [...calls].map(([name, c]) => `- ${name} ×${c.count}: ${c.args.join(', ')}`) : ['- No tool calls.']),
    '',
    '## Next step',
    `- Continue with: ${requests.at(-1) ?? 'the open request'}`,
  ].join('\n');
}

/**
 * The turns without the rounds that only searched for tools (`find_tools` and its results): after
 * a search, the model goes on as if the tools it found had been offered from the start.
 */
function withoutToolSearch(turns: Turn[], from: number): Turn[] {
  const searchOnly = (t: Turn) =>
    (t.toolCalls.length > 0 && t.toolCalls.every((c) => c === 'find_tools')) ||
    (t.toolResults.length > 0 && t.toolResults.every((r) => r.name === 'find_tools') && !t.text);
  return turns.filter((t, i) => i <= from || !searchOnly(t));
}

export function plan(model: string, allTurns: Turn[], tools: ToolSpec[], choice: ToolChoice, wantThinking: boolean): Plan {
  const summary = summaryOf(allTurns.at(-1)?.text ?? '');
  if (summary && allTurns.at(-1)?.role === 'user') return { text: summary, toolCalls: [] };
  const scm = allTurns.at(-1)?.role === 'user' ? (scmAnswer(allTurns.at(-1)?.text ?? '') ?? nextEditAnswer(allTurns.at(-1)?.text ?? '')) : undefined;
  if (scm) return { text: scm, toolCalls: [] };
  const lastUserIndex = allTurns.map((t) => t.role === 'user' && t.text.length > 0 && t.toolResults.length === 0).lastIndexOf(true);
  const searchedAlready = allTurns.slice(lastUserIndex + 1);
  const turns = withoutToolSearch(allTurns, lastUserIndex);
  const found = turns[lastUserIndex] ?? { role: 'user', text: '', images: 0, toolResults: [], toolCalls: [] };
  const lastUser = { ...found, text: typedText(found.text) || found.text };
  const last = turns[turns.length - 1];
  const resultsNow = last?.toolResults ?? [];
  // A summary made in the middle of this request's work (its next step is this request) says how
  // many tool rounds came before: they count, as a model reading its own summary would count them.
  const asked = lastUser.text
    .replace(/#\w+=\d+/g, '')
    .trim()
    .slice(0, 160);
  const summarised = turns
    .filter((t) => t.role === 'user' && t.text.includes('condensed to fit the context window') && t.text.includes(`- Continue with: ${asked}`))
    .flatMap((t) => [...t.text.matchAll(/^- [\w.-]+ ×(\d+):/gm)].map((m) => Number(m[1])))
    .reduce((a, b) => a + b, 0);
  const roundsSinceUser = summarised + turns.slice(lastUserIndex + 1).filter((t) => t.toolCalls.length > 0).length;
  const thinking = wantThinking ? `The user asked: ${lastUser.text.slice(0, 80)}. I will answer directly.` : undefined;

  const canCall = tools.length > 0 && choice !== 'none';
  const root = workspaceRoot(turns);
  if (canCall && choice === 'auto') {
    const callsFor = (text: string): Plan['toolCalls'] => {
      const named = tools.filter((t) => toolMentioned(t, text));
      // "Read src/a.ts": the verb names the tool, as a model reads it.
      const reader = /^(read|open|look at)\b/i.test(text) && pathsIn(text).length ? tools.filter((t) => t.name === 'read_file') : [];
      return (named.length ? named : reader).slice(0, 3).map((t) => ({ name: t.name, arguments: argumentsFor(t, text, pathsIn(text)[0], root) }));
    };
    const delegated = roundsSinceUser === 0 && resultsNow.length === 0 ? (delegationPlan(lastUser.text, tools) ?? memoryPlan(lastUser.text, tools)) : undefined;
    if (delegated) return { thinking, ...delegated };
    const search = toolSearchPlan(lastUser.text, searchedAlready, tools);
    if (search) return { thinking, ...search };
    const editor = editorPlan({ request: lastUser.text, since: turns.slice(lastUserIndex + 1), tools, callsFor });
    if (editor) return { thinking, ...editor };
  }
  const stepsAsked = directive(lastUser.text, 'steps');
  // A question about the project with no file named: look around first (list the root), then
  // read the files the listing shows, then answer from them, as an agent would.
  const lister = tools.find((t) => /list/i.test(t.name));
  const reader = tools.find((t) => /read/i.test(t.name));
  const exploring =
    canCall &&
    choice === 'auto' &&
    !!lister &&
    !!reader &&
    pathsIn(lastUser.text).length === 0 &&
    !tools.some((t) => toolMentioned(t, lastUser.text)) &&
    /\b(project|repo|repository|codebase|workspace|this code|folder|structure)\b/i.test(lastUser.text);
  if (exploring && roundsSinceUser === 0) {
    return {
      thinking,
      text: 'Let me look at the workspace first.',
      toolCalls: [{ name: lister.name, arguments: argumentsFor(lister, lastUser.text, '.', root) }],
    };
  }
  if (exploring && roundsSinceUser === 1 && resultsNow.length > 0) {
    // Entries of the listing (its "…: N entries" head line left out), files only.
    const listed = resultsNow.flatMap((r) => r.content.split('\n').map((l) => l.trim())).filter((l) => l && !l.endsWith('/') && !/: \d+ entries/.test(l));
    const rank = (f: string) => (/^readme/i.test(f) ? 0 : f === 'package.json' ? 1 : /\.(md|ts|js|py)$/i.test(f) ? 2 : 3);
    const picks = [...listed].sort((a, b) => rank(a) - rank(b)).slice(0, 2);
    if (picks.length > 0) {
      return {
        thinking,
        text: `The workspace has ${listed.length} files at its root; reading ${picks.join(' and ')}.`,
        toolCalls: picks.map((p) => ({ name: reader.name, arguments: argumentsFor(reader, lastUser.text, p, root) })),
      };
    }
  }
  const command = canCall && roundsSinceUser === 0 && resultsNow.length === 0 ? commandAsked(lastUser.text) : undefined;
  const runner = tools.find(
    (t) => t.name === 'run_command' || (Object.keys(t.parameters?.properties ?? {}).includes('command') && /run|exec|shell|terminal/i.test(t.name)),
  );
  if (command && runner && choice !== 'none' && typeof choice !== 'object') {
    return { thinking, text: `I'll run \`${command}\`.`, toolCalls: [{ name: runner.name, arguments: { command } }] };
  }
  const wantSteps = stepsAsked ?? 1;
  const mustCall = choice === 'required' || typeof choice === 'object';
  const shouldCallNow = canCall && (mustCall || (resultsNow.length === 0 ? true : roundsSinceUser < wantSteps));

  if (shouldCallNow) {
    let chosen: ToolSpec[];
    if (typeof choice === 'object') chosen = tools.filter((t) => t.name === choice.name);
    else {
      chosen = tools.filter((t) => toolMentioned(t, lastUser.text));
      if (chosen.length === 0) chosen = tools.filter((t) => serverToolMentioned(t, lastUser.text));
      if (chosen.length === 0 && (choice === 'required' || roundsSinceUser > 0)) chosen = [tools[0]];
    }
    if (chosen.length > 0) {
      const paths = pathsIn(lastUser.text);
      const calls: Plan['toolCalls'] = [];
      for (const tool of chosen.slice(0, 4)) {
        const takesPath = Object.keys(tool.parameters?.properties ?? {}).some((p) => /path|file/.test(p.toLowerCase()));
        const round = roundsSinceUser;
        // Several paths in one request → parallel calls; with #steps, one path per step instead.
        if (takesPath && paths.length > 1 && round === 0 && stepsAsked === undefined) {
          for (const p of paths.slice(0, 4)) calls.push({ name: tool.name, arguments: argumentsFor(tool, lastUser.text, p, root) });
        } else {
          const p = paths.length > 0 ? paths[round % paths.length] : undefined;
          calls.push({ name: tool.name, arguments: argumentsFor(tool, searchOfRound(tool, lastUser.text, round, stepsAsked), p, root) });
        }
      }
      const text = resultsNow.length > 0 ? `Step ${roundsSinceUser + 1}: continuing with ${calls.map((c) => c.name).join(', ')}.` : '';
      return { thinking, text, toolCalls: calls };
    }
  }

  if (resultsNow.length > 0) {
    const failed = resultsNow.filter((r) => r.isError).length;
    const files = resultsNow.map((r) => /^([\w@./-]+\.\w+) — lines/.exec(r.content)?.[1]).filter((f): f is string => !!f);
    return {
      thinking,
      text: [
        `From the tool results (${resultsNow.length}):`,
        ...resultsNow.map((r) => `- ${whatResultShows(r)}`),
        '',
        '### What this means',
        '',
        files.length > 0
          ? `${files.map((f) => `\`${f}\``).join(' and ')} ${files.length === 1 ? 'holds' : 'hold'} what you asked about; the lines above are the relevant part.`
          : resultsNow.some((r) => /^\$ /.test(r.content))
            ? commandVerdict(resultsNow.find((r) => /^\$ /.test(r.content))!)
            : 'The results above are what the tools returned for this question.',
        ...(failed > 0 ? ['', `${failed} of the calls failed; the message says why, and another path or a narrower search may work.`] : []),
        '',
        `That answers: “${lastUser.text
          .replace(/#\w+=\d+/g, '')
          .trim()
          .slice(0, 120)}”.`,
      ].join('\n'),
      toolCalls: [],
    };
  }
  return { thinking, text: reply(model, turns, lastUser), toolCalls: [] };
}

/**
 * "Search "a", "b" and "c" … #steps=6": a search tool's rounds go through the quoted terms in order
 * (two rounds each here), as a model works through a list one item after another.
 */
function searchOfRound(tool: ToolSpec, text: string, round: number, steps: number | undefined): string {
  const props = Object.keys(tool.parameters?.properties ?? {});
  const quotes = quotedAll(text);
  if (!steps || quotes.length < 2 || !props.some((p) => /query|pattern|regex/i.test(p)) || props.some((p) => /^old|^new/i.test(p))) return text;
  const term = quotes[Math.min(quotes.length - 1, Math.floor((round * quotes.length) / steps))];
  return text.replace(/"[^"]{1,2000}"|`[^`]{1,2000}`/, `"${term}"`);
}

function oneLine(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** One tool result in words: what ran and how it ended, what a file begins with, what a tool returned. */
function whatResultShows(r: Turn['toolResults'][number]): string {
  const command = /^\$ (.*)\n\(in ([^;]*); ([^;]*);[^)]*\)\n([\s\S]*)$/.exec(r.content);
  if (command) {
    // Lines that say something (a spinner's last frame does not).
    const lines = command[4]
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /[\p{L}\p{N}]/u.test(l));
    const last = lines.at(-1) ?? '(no output)';
    return `\`${command[1]}\` ran in ${command[2]} and ended with ${command[3]}; its output (${lines.length} line${lines.length === 1 ? '' : 's'}) ends with “${oneLine(last, 120)}”.`;
  }
  if (r.isError) return `\`${r.name}\` failed: ${oneLine(r.content.replace(/^Error:\s*/, ''))}`;
  const file = /^([\w@./-]+\.\w+) — lines (\d+)-(\d+) of (\d+)/.exec(r.content);
  if (file)
    return `\`${r.name}\`: ${file[1]} (lines ${file[2]}-${file[3]} of ${file[4]}): ${oneLine(
      r.content
        .split('\n')
        .slice(1)
        .join(' ')
        .replace(/^\s*\d+\s+/gm, ''),
    )}`;
  return `\`${r.name}\` returned: ${oneLine(r.content)}`;
}

/** What a command's result says about the request: passed or failed, and the line that says so. */
function commandVerdict(r: Turn['toolResults'][number]): string {
  const status = /\n\(in [^;]*; ([^;]*);/.exec(r.content)?.[1] ?? '';
  const line = /^\$ (.*)$/m.exec(r.content)?.[1] ?? 'the command';
  const summary = r.content
    .split('\n')
    .reverse()
    .find((l) => /\b(pass(ed|ing)?|fail(ed|ing|ures?)?|errors?|tests?)\b/i.test(l) && !l.startsWith('$'));
  if (/exit code 0\b/.test(status)) return `\`${line}\` succeeded (exit code 0)${summary ? `: “${oneLine(summary, 120)}”` : ''}.`;
  if (/stopped/.test(status)) return `\`${line}\` did not finish: it was ${status}. Its output so far is above.`;
  return `\`${line}\` failed (${status})${summary ? `: “${oneLine(summary, 120)}”` : ''}. The output above shows where.`;
}

/** Splits text into stream pieces of one to three words, keeping every character. */
export function textPieces(text: string): string[] {
  const tokens = text.match(/\S+\s*|\s+/g) ?? [];
  const pieces: string[] = [];
  let i = 0;
  let n = 0;
  while (i < tokens.length) {
    const take = 1 + (n++ % 3);
    pieces.push(tokens.slice(i, i + take).join(''));
    i += take;
  }
  return pieces;
}

/** Splits JSON text into fragments of about `size` characters (tool arguments streamed in parts). */
export function jsonFragments(json: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
