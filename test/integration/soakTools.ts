/**
 * What the short soak (`soak.test.ts`) and the long one (`bench/inhost/soak.test.ts`) share: the
 * extension host's collector, a sample of its memory and handles, and the person's actions (a chat
 * turn with its approvals answered, inline completions typed, an MCP server killed).
 */
import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import type { ApprovalInfo } from '../../src/chat/host/approvals';
import { api, until } from './helpers';

/**
 * The extension host's collector (flag set at run time: the host is not started with --expose-gc):
 * a full collection, then the form V8 runs when memory is short, which also gives back the heap's
 * free pages that an ordinary collection keeps. RSS then counts what the host holds, not what V8
 * last reserved (a run on 1.139.1 grew its reserved heap by 65 MB over the day with its used heap
 * flat, and RSS with it, +15.6%; the next run +0.04%). Node 20's V8 does not know that form and
 * does nothing for it, hence the ordinary collection first.
 */
export function collector(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  return () => {
    gc();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  };
}

/** Processes whose parent is this extension host (MCP servers, terminals' shells; workers are threads), as "pid (command)". */
export function childProcesses(): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent's pid; the command name (field 2) may hold spaces, so read after its ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid)
        found.push(`${name} ${stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1)}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * Waits (at most `ms`) until no more child processes run than `baseline`: a process VS Code or a
 * tool started for a moment (a search, a shell's probe) has ended before a sample counts it.
 */
export async function childrenSettled(baseline: number, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (childProcesses().length > baseline && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
}

export interface Sample {
  heapMB: number;
  heapTotalMB: number;
  rssMB: number;
  externalMB: number;
  arrayBuffersMB: number;
  handles: Record<string, number>;
  openFiles: number;
  terminals: number;
  /** Each terminal's name, so a count that grew says whose terminals they are. */
  terminalNames?: string[];
  children: number;
  childNames: string[];
  /** Resident memory by kind of mapping (/proc/self/smaps), to tell the allocators' growth from the JS heap's. */
  mapped: ResidentByMapping;
  /** What each open file descriptor points at (a file's path, a socket, a pipe), the search index's own files left out. */
  openFileNames: string[];
  /** The search index's files open (its current generation's rows and log, its keywords: one generation at a time). */
  indexFiles: string[];
  /** Live listeners on the extension's own events, by event. */
  listeners: Record<string, number>;
}

export interface ResidentByMapping {
  /** The main malloc arena (brk). */
  brkMB: number;
  /** Anonymous mappings of exactly 64 MB or less inside one: glibc's per-thread malloc arenas. */
  arenasMB: number;
  /** Other anonymous mappings: V8's heap pages, large allocations, thread stacks. */
  anonymousMB: number;
  /** Files mapped in (code, shared libraries, mapped data). */
  filesMB: number;
}

/** Resident kilobytes by kind of mapping, read from /proc/self/smaps (Linux). */
export function residentByMapping(): ResidentByMapping {
  const out = { brkMB: 0, arenasMB: 0, anonymousMB: 0, filesMB: 0 };
  let kind: keyof typeof out = 'anonymousMB';
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const sizeKB = (parseInt(header[2], 16) - parseInt(header[1], 16)) / 1024;
      const name = header[3].trim();
      // A thread arena reserves 64 MB aligned to 64 MB; its pieces after trimming stay under it.
      const arenaLike = parseInt(header[1], 16) % (64 * 2 ** 20) === 0 && sizeKB <= 65536;
      kind = name === '[heap]' ? 'brkMB' : name.startsWith('/') ? 'filesMB' : name === '' && arenaLike ? 'arenasMB' : 'anonymousMB';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]) / 1024;
  }
  return out;
}

export const listenerTotal = (s: Sample): number => Object.values(s.listeners ?? {}).reduce((a, b) => a + b, 0);

export const handleCount = (h: Record<string, number>): number => Object.values(h).reduce((a, b) => a + b, 0);

/**
 * The open files, the search index's own apart: its store keeps the current generation's files
 * open from the first change after a fold until the next fold, so their count follows the index's
 * state rather than the day's length. What must hold for them is that no older generation's stay open.
 */
function openFileSample(): { openFiles: number; openFileNames: string[]; indexFiles: string[] } {
  const all = readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
  const isIndexFile = (f: string) => /[\\/]search-index[\\/][a-z]+-\d+\.(f32|bin|jsonl)$/.test(f);
  const openFileNames = all.filter((f) => !isIndexFile(f));
  return { openFiles: openFileNames.length, openFileNames, indexFiles: all.filter(isIndexFile).map((f) => f.slice(f.lastIndexOf('/') + 1)) };
}

/** The generations of the search index whose files are open. */
export function indexGenerations(s: Sample): number[] {
  return [...new Set((s.indexFiles ?? []).map((f) => Number(/-(\d+)\./.exec(f)![1])))];
}

/** The open files `after` has that `before` had not (by target, counting repeats). */
export function openedSince(before: Sample, after: Sample): string[] {
  const left = new Map<string, number>();
  for (const f of before.openFileNames ?? []) left.set(f, (left.get(f) ?? 0) + 1);
  return (after.openFileNames ?? []).filter((f) => {
    const n = left.get(f) ?? 0;
    if (n > 0) left.set(f, n - 1);
    return n === 0;
  });
}

/**
 * The child processes once the same ones have run for half a second (at most 10 s of waiting): a
 * shell VS Code or a tool starts for a moment must not enter a baseline the later sample is held to.
 */
async function childSample(): Promise<{ children: number; childNames: string[] }> {
  const deadline = Date.now() + 10_000;
  let childNames = childProcesses();
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const again = childProcesses();
    const same = again.length === childNames.length && again.every((c, i) => c === childNames[i]);
    childNames = again;
    if (same || Date.now() > deadline) return { children: childNames.length, childNames };
  }
}

export async function sample(gc: () => void): Promise<Sample> {
  const { testing } = await api();
  // A fold's worker has the next generation's files open while it runs: sampled after it.
  await until('no fold running', () => !testing.search.folding(), 60_000);
  // Twice, a tick apart: what the first frees (finalizers, weak references) the second collects.
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const children = await childSample();
  const handles: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) handles[kind] = (handles[kind] ?? 0) + 1;
  const m = process.memoryUsage();
  return {
    heapMB: m.heapUsed / 2 ** 20,
    heapTotalMB: m.heapTotal / 2 ** 20,
    rssMB: m.rss / 2 ** 20,
    externalMB: m.external / 2 ** 20,
    arrayBuffersMB: m.arrayBuffers / 2 ** 20,
    handles,
    ...openFileSample(),
    terminals: vscode.window.terminals.length,
    terminalNames: vscode.window.terminals.map((t) => t.name),
    ...children,
    mapped: residentByMapping(),
    listeners: testing.listeners(),
  };
}

/** One chat turn; each approval answered by `accept` (yes to all when absent). */
export async function turn(text: string, accept: (a: ApprovalInfo) => boolean = () => true): Promise<AssistantTurn> {
  const { testing } = await api();
  const sent = testing.chat.send(text, [], []);
  let done = false;
  void sent.finally(() => (done = true));
  while (!done) {
    for (const a of testing.chat.pendingApprovals()) testing.chat.decide(a.callId, accept(a));
    await new Promise((r) => setTimeout(r, 10));
  }
  await sent;
  return testing.chat.current!.turns.at(-1) as AssistantTurn;
}

/**
 * `n` completions at the end of line 4 of `file`, a key typed before each (no cache hit); every
 * fifth cancelled, every third answer accepted. The file's line 2 is a comment the keys go into.
 */
export async function completions(file: string, n: number, from: number): Promise<{ answered: number; cancelled: number; skips: string }> {
  const { testing } = await api();
  const provider = testing.completions.provider;
  const document = await vscode.workspace.openTextDocument(file);
  const editor = await vscode.window.showTextDocument(document);
  let answered = 0;
  let cancelled = 0;
  const skips = new Set<string>();
  for (let i = from; i < from + n; i++) {
    // A key typed into the comment on line 2 (a replacement of what was just inserted would read
    // as an input method composing), so that no prompt repeats; the comment starts over now and then.
    if (document.lineAt(1).text.length > 60) await editor.edit((e) => e.replace(document.lineAt(1).range, '// notes '));
    await editor.edit((e) => e.insert(document.lineAt(1).range.end, String.fromCharCode(97 + (i % 26))));
    const at = document.lineAt(3).range.end;
    editor.selection = new vscode.Selection(at, at);
    const source = new vscode.CancellationTokenSource();
    if (i % 5 === 0) setTimeout(() => source.cancel(), 1);
    const items = await provider.provideInlineCompletionItems(
      document,
      at,
      { triggerKind: vscode.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined },
      source.token,
    );
    source.dispose();
    const item = items?.[0];
    if (!item) {
      cancelled++;
      skips.add(String(provider.stats.lastSkip ?? provider.stats.lastError ?? 'none'));
      continue;
    }
    answered++;
    if (i % 3 === 0 && item.command) await vscode.commands.executeCommand(item.command.command, ...((item.command.arguments ?? []) as unknown[]));
  }
  await document.save();
  // The chat would send the open editor with each question (its chip): closed, the questions stay as typed.
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  return { answered, cancelled, skips: [...skips].join(', ') };
}

/** Kills the MCP server `name` (SIGKILL) and waits until the hub has started it again. */
export async function restartMcp(name: string): Promise<void> {
  const { testing } = await api();
  await until('the server runs', () => testing.mcp.get(name)?.state.kind === 'running', 30_000);
  const pid = testing.mcp.get(name)!.pid!;
  process.kill(pid, 'SIGKILL');
  await until('it runs again', () => testing.mcp.get(name)?.state.kind === 'running' && testing.mcp.get(name)!.pid !== pid, 30_000);
}

/** The comparison of two samples, one line per figure. */
export function sampleTable(before: Sample, after: Sample): (string | number)[][] {
  return [
    ['heap MB', before.heapMB.toFixed(1), after.heapMB.toFixed(1)],
    ['heap reserved MB', before.heapTotalMB.toFixed(1), after.heapTotalMB.toFixed(1)],
    ['RSS MB', before.rssMB.toFixed(1), after.rssMB.toFixed(1)],
    ['external MB', before.externalMB.toFixed(1), after.externalMB.toFixed(1)],
    ['array buffers MB', before.arrayBuffersMB.toFixed(1), after.arrayBuffersMB.toFixed(1)],
    ...(['brkMB', 'arenasMB', 'anonymousMB', 'filesMB'] as const).map((k) => [
      `RSS ${{ brkMB: 'malloc (brk)', arenasMB: 'malloc arenas', anonymousMB: 'other anonymous', filesMB: 'mapped files' }[k]} MB`,
      (before.mapped?.[k] ?? 0).toFixed(1),
      (after.mapped?.[k] ?? 0).toFixed(1),
    ]),
    ['listeners on our events', listenerTotal(before), listenerTotal(after)],
    ...[...new Set([...Object.keys(before.listeners ?? {}), ...Object.keys(after.listeners ?? {})])].map((k) => [
      `listeners: ${k}`,
      before.listeners?.[k] ?? 0,
      after.listeners?.[k] ?? 0,
    ]),
    ["open files (the index's apart)", before.openFiles, after.openFiles],
    ["the index's open files", (before.indexFiles ?? []).join(' '), (after.indexFiles ?? []).join(' ')],
    ['terminals', before.terminals, after.terminals],
    ['child processes', before.children, after.children],
    ...[...new Set([...Object.keys(before.handles), ...Object.keys(after.handles)])].map((k) => [
      `handles: ${k}`,
      before.handles[k] ?? 0,
      after.handles[k] ?? 0,
    ]),
  ];
}

/** What a chat request said, by its body's SHA-256 (the emulator's `bodyHash`), and who sent it. */
export interface SentRequest {
  model: string;
  stream: boolean;
  /** The system prompt's start and the last user message's start: which surface asked. */
  system: string;
  user: string;
  /** The extension's functions on the way to the transport (its async stack), nearest last. */
  callers: string;
  at: number;
}

/**
 * Follows every `/v1/chat/completions` request the extension host sends (undici's `request:create`
 * channel, which the bundled transport publishes to), so that a request the emulator answered twice
 * can be named: its model, its prompt's start and the callers that sent it.
 */
export function chatRequestLog(): { sent: Map<string, SentRequest[]>; stop: () => void } {
  const sent = new Map<string, SentRequest[]>();
  const text = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('')
        : '';
  const onCreate = (message: unknown) => {
    const request = (message as { request?: { path?: string; body?: unknown } }).request;
    if (!request?.path?.startsWith('/v1/chat/completions') || !Buffer.isBuffer(request.body)) return;
    const hash = createHash('sha256').update(request.body).digest('hex');
    let body: { model?: string; stream?: boolean; messages?: { role: string; content: unknown }[] } = {};
    try {
      body = JSON.parse(request.body.toString('utf8')) as typeof body;
    } catch {
      // Not JSON: named by its callers alone.
    }
    const messages = body.messages ?? [];
    const first = (role: string, last = false) => {
      const m = (last ? [...messages].reverse() : messages).find((x) => x.role === role);
      return text(m?.content).replace(/\s+/g, ' ').slice(0, 80);
    };
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 60;
    const stack = new Error().stack ?? '';
    Error.stackTraceLimit = limit;
    // The frames above the transport's (undici's own below it are no surface).
    const frames = stack
      .split('\n')
      .map((l) => /at (?:async )?([\w$.<>]+) \(.*\/dist\/\w+\.js/.exec(l)?.[1])
      .filter((f): f is string => !!f);
    const below = frames.map((f) => f.startsWith('Transport.')).lastIndexOf(true);
    const callers = frames
      .slice(below + 1)
      .slice(0, 8)
      .reverse()
      .join(' → ');
    const list = sent.get(hash) ?? [];
    list.push({ model: body.model ?? '?', stream: body.stream === true, system: first('system'), user: first('user', true), callers, at: Date.now() });
    sent.set(hash, list);
  };
  subscribe('undici:request:create', onCreate);
  return { sent, stop: () => unsubscribe('undici:request:create', onCreate) };
}
