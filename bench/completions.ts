/**
 * Inline completions over a recorded typing session: lines of this repository's own source typed
 * back at human speed (gaps between keys log-normal around 120 ms, pauses at line ends and now
 * and then between words) into the file they were cut from, against the emulator with 150 ms of
 * model latency. VS Code's part is played as it behaves: every key cancels the pending request
 * and asks again. The person presses Tab when the ghost text is what they were about to type and
 * has been on screen for 250 ms (time to read it); otherwise they type on (through it).
 *
 * The model stand-in knows the file the lines were cut from: it answers the rest of the line (or,
 * at a line's end, the next line) right for 7 of 10 prompts (seeded by the prompt), and a wrong
 * guess for the others. The figures measure the scheduling (requests, cancellations, the cache,
 * latency), not a model's quality.
 *
 * The same session runs twice at once: our completer (adaptive pause, typing-through cache) and a
 * fixed 350 ms pause without cache (Continue's default), each against its own emulator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayClient } from '../src/gateway';
import { InlineCompleter, type CompletionOutcome } from '../src/completions/core/completer';
import { AdaptiveDebounce } from '../src/completions/core/debounce';
import { holeBesideItem } from '../src/completions/core/selectedItem';
import { EditHistory, nextEditRequest, parseNextEdit } from '../src/completions/core/nextEdit';
import { GatewayEmulator } from '../test/emulator/server';
import { estimateTokens } from '../test/emulator/assistant';

const MODEL_LATENCY_MS = 150;
const ROOT = join(__dirname, '..');

/** Where lines are cut out and typed back: real code of different kinds. */
const SOURCES: { file: string; from: number; lines: number }[] = [
  { file: 'src/completions/core/context.ts', from: 9, lines: 5 },
  { file: 'src/usage/core/forecast.ts', from: 12, lines: 4 },
  { file: 'src/completions/core/cache.ts', from: 16, lines: 5 },
  { file: 'src/common/money.ts', from: 19, lines: 4 },
  { file: 'src/tools/commandPolicy.ts', from: 40, lines: 4 },
];
const ACCEPT_AFTER_MS = 250;
/** A gap before the next key this long is a pause: was a suggestion on screen by its end? */
const PAUSE_MS = 400;
const RIGHT_OUT_OF_10 = 7;

export interface Keystroke {
  /** Milliseconds after the previous key. */
  gapMs: number;
  char: string;
}

export interface TypingTask {
  file: string;
  before: string;
  typed: string;
  after: string;
  keys: Keystroke[];
}

/** A small seeded generator (mulberry32): the same session on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The session: for each source, the lines cut out, and the keys (with human timing) that type them back. */
export function typingSession(seed = 7): TypingTask[] {
  const rnd = random(seed);
  return SOURCES.map(({ file, from, lines }) => {
    const all = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const head = all.slice(0, from);
    // Each typed line starts at its indentation (the editor's auto-indent puts the cursor there).
    const body = all.slice(from, from + lines);
    const typed = body.join('\n') + '\n';
    const keys: Keystroke[] = [];
    let previous = '';
    for (const char of typed) {
      // Log-normal around 120 ms (σ 0.3: 95% of gaps under ~200 ms), as measured typing is.
      const normal = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
      let gap = 120 * Math.exp(0.3 * normal);
      if (previous === '\n')
        gap += 500 + rnd() * 700; // reading the next line
      else if (previous === ' ' && rnd() < 0.12)
        gap += 250 + rnd() * 350; // thinking of the next word
      // Recalling a name half typed (IntelliSense's list is open then): one key in twelve inside a word.
      else if (/[\w$]/.test(previous) && /[\w$]/.test(char) && rnd() < 0.08) gap += 250 + rnd() * 350;
      keys.push({ gapMs: gap, char });
      previous = char;
    }
    return { file, before: head.join('\n') + '\n', typed, after: all.slice(from + lines).join('\n'), keys };
  });
}

export interface CompletionRunResult {
  name: string;
  keystrokes: number;
  requestsSent: number;
  requestsCancelled: number;
  cacheHits: number;
  suggestionsShown: number;
  acceptedChars: number;
  /** Keystroke to ghost text, for every key after which one was shown. */
  p50Ms: number;
  p95Ms: number;
  /** The same for suggestions that came from the model (not the cache). */
  modelP50Ms: number;
  modelP95Ms: number;
  /** Time to ghost text beyond the pause and the model's latency, answers from the model only. */
  overheadP50Ms: number;
  overheadP95Ms: number;
  tokensSent: number;
  tokensPerAcceptedChar: number;
  /** Typing pauses (a gap of 400 ms or more) with IntelliSense's list open or closed, and in how many a suggestion was on screen by the pause's end. */
  pauses: { listOpen: number; listOpenShown: number; listClosed: number; listClosedShown: number };
  wallMs: number;
}

/**
 * What the suggest widget does while the person types: VS Code opens its list on a word character
 * when some word of the file starts with the word being typed (its word-based suggestions; a
 * language server adds more), and selects the first item (exact match first, then by name).
 * `beside`: the completer goes on from the selected item (ours now, and Continue's provider);
 * `skip`: nothing is asked while the list is open (ours before).
 */
export type IntelliSense = 'beside' | 'skip';

function wordsOf(text: string): string[] {
  return [...new Set(text.match(/[A-Za-z_$][\w$]{2,}/g) ?? [])].sort();
}

/** The selected item for the word before the cursor, if the list is open. */
export function selectedItem(words: string[], prefix: string, lastKey: string): { typed: string; text: string } | undefined {
  if (!/[\w$]/.test(lastKey)) return undefined;
  const typed = /[A-Za-z_$][\w$]*$/.exec(prefix)?.[0];
  if (!typed) return undefined;
  const matches = words.filter((w) => w.startsWith(typed) && w !== typed);
  if (!matches.length) return undefined;
  return { typed, text: words.includes(typed) ? typed : matches[0] };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The model stand-in: the rest of the line where the prompt ends in one of the session's files. */
export function oracle(session: TypingTask[]): (prefix: string, suffix: string) => string {
  const files = session.map((t) => t.before + t.typed + t.after);
  return (prefix) => {
    const tail = prefix.slice(-120);
    for (const text of files) {
      const at = text.indexOf(tail);
      if (at < 0) continue;
      const cursor = at + tail.length;
      const lineEnd = text.indexOf('\n', cursor);
      let right = text.slice(cursor, lineEnd < 0 ? undefined : lineEnd);
      if (!right.trim() && lineEnd >= 0) {
        const next = text.indexOf('\n', lineEnd + 1);
        right = text.slice(lineEnd, next < 0 ? undefined : next);
      }
      let h = 0;
      for (let i = 0; i < prefix.length; i += 7) h = (h * 31 + prefix.charCodeAt(i)) >>> 0;
      return (h + prefix.length) % 10 < RIGHT_OUT_OF_10 ? right : right ? 'undefined;' : '';
    }
    // The prompt ends where the file does not go (after an IntelliSense item the person is not
    // typing): a model still answers something, which the person does not take.
    return '();';
  };
}

/** Plays the session against one completer; VS Code's behaviour is played here. */
async function play(
  name: string,
  session: TypingTask[],
  make: (client: GatewayClient) => InlineCompleter,
  intelliSense: IntelliSense = 'beside',
): Promise<CompletionRunResult> {
  const emu = await GatewayEmulator.start();
  emu.codeModel = oracle(session);
  emu.inject({ path: '/v1/completions', times: 1_000_000, fault: { kind: 'slowFirstByte', ms: MODEL_LATENCY_MS } });
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
  // One request first, outside the figures: the connection and the code paths warm, as they are
  // after the first minute of typing (the first suggestion of a window is not what is measured).
  await client.completions.create({ model: 'codestral-emu', prompt: 'const a = 1;\n', max_tokens: 8 });
  const warmUp = emu.requestsTo('/v1/completions').length;
  const completer = make(client);
  const latencies: number[] = [];
  const overheads: number[] = [];
  const fromModel: number[] = [];
  let keystrokes = 0;
  let shown = 0;
  let accepted = 0;
  const pauses = { listOpen: 0, listOpenShown: 0, listClosed: 0, listClosedShown: 0 };
  const started = performance.now();
  try {
    for (const task of session) {
      let done = 0; // characters of `typed` in the document
      let current: AbortController | undefined;
      /** The text on screen after the cursor (the rest of the selected item, then the model's). */
      let ghost: { at: number; text: string } | undefined;
      let listOpen = false;
      const words = wordsOf(task.before + task.after);
      const ask = (keyAt: number, lastKey: string) => {
        current?.abort();
        const controller = new AbortController();
        current = controller;
        ghost = undefined;
        const prefix = task.before + task.typed.slice(0, done);
        const item = selectedItem(words, prefix, lastKey);
        listOpen = !!item;
        if (item && intelliSense === 'skip') return;
        const beside = item
          ? holeBesideItem(prefix + task.after, prefix.length, { from: prefix.length - item.typed.length, to: prefix.length, text: item.text })
          : undefined;
        const itemRest = item ? item.text.slice(item.typed.length) : '';
        const request = {
          before: beside ? beside.before : prefix,
          after: task.after,
          language: 'typescript',
          path: task.file,
          model: 'codestral-emu',
          maxPrefixTokens: 1500,
          maxSuffixTokens: 500,
          maxLines: 12,
          automatic: true,
        };
        void completer.complete(request, controller.signal).then((outcome: CompletionOutcome) => {
          if (controller.signal.aborted || (outcome.kind !== 'answer' && outcome.kind !== 'cache')) return;
          const at = performance.now();
          shown++;
          latencies.push(at - keyAt);
          if (outcome.kind === 'answer') {
            fromModel.push(at - keyAt);
            overheads.push(at - keyAt - outcome.pauseMs - MODEL_LATENCY_MS);
          }
          ghost = { at, text: itemRest + outcome.text };
        });
      };
      for (let k = 0; done < task.typed.length;) {
        const key = task.keys[k];
        await sleep(key.gapMs);
        if (key.gapMs >= PAUSE_MS && k > 0) {
          if (listOpen) {
            pauses.listOpen++;
            if (ghost?.text) pauses.listOpenShown++;
          } else {
            pauses.listClosed++;
            if (ghost?.text) pauses.listClosedShown++;
          }
        }
        const rest = task.typed.slice(done);
        let lastKey: string;
        if (ghost && ghost.text && rest.startsWith(ghost.text) && performance.now() - ghost.at >= ACCEPT_AFTER_MS) {
          // The suggestion is what the person was about to type: Tab (with the list open, Tab
          // takes the item and the ghost text stays for a second Tab; counted as one here).
          done += ghost.text.length;
          accepted += ghost.text.length;
          k = done;
          lastKey = '\t';
        } else {
          lastKey = task.typed[done];
          done++;
          k++;
        }
        keystrokes++;
        ask(performance.now(), lastKey);
      }
      current?.abort();
      await sleep(MODEL_LATENCY_MS * 2);
    }
  } finally {
    await client.close();
    await emu.close();
  }
  const sent = emu.requestsTo('/v1/completions').slice(warmUp);
  const tokensSent = sent.reduce((n, r) => {
    const body = r.body as { prompt?: string; suffix?: string };
    return n + estimateTokens(body.prompt ?? '') + estimateTokens(body.suffix ?? '');
  }, 0);
  return {
    name,
    keystrokes,
    requestsSent: sent.length,
    requestsCancelled: sent.filter((r) => r.aborted).length,
    cacheHits: completer.stats.cacheHits,
    suggestionsShown: shown,
    acceptedChars: accepted,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    modelP50Ms: percentile(fromModel, 50),
    modelP95Ms: percentile(fromModel, 95),
    overheadP50Ms: percentile(overheads, 50),
    overheadP95Ms: percentile(overheads, 95),
    tokensSent,
    tokensPerAcceptedChar: accepted ? tokensSent / accepted : Infinity,
    pauses,
    wallMs: performance.now() - started,
  };
}

export async function runCompletionsBench(): Promise<{
  keysInSession: number;
  latencyMs: number;
  ours: CompletionRunResult;
  fixed: CompletionRunResult;
  oursSkipping: CompletionRunResult;
}> {
  const session = typingSession();
  const noHost = { learnedPath: () => undefined, remember: () => undefined, answered: () => undefined };
  // Ours alone first (its timings are the ones with targets), then the two it is compared with.
  const ours = await play(
    'ours: adaptive pause + typing-through cache, beside IntelliSense',
    session,
    (client) => new InlineCompleter({ client: () => client, ...noHost }),
  );
  const [fixed, oursSkipping] = await Promise.all([
    play(
      'fixed 350 ms pause, no cache (Continue)',
      session,
      (client) =>
        new InlineCompleter(
          { client: () => client, ...noHost },
          { debounce: new AdaptiveDebounce({ initialMs: 350, minMs: 350, maxMs: 350, window: 1 }), cache: false },
        ),
    ),
    play('ours before: nothing while the list is open', session, (client) => new InlineCompleter({ client: () => client, ...noHost }), 'skip'),
  ]);
  return { keysInSession: session.reduce((n, t) => n + t.keys.length, 0), latencyMs: MODEL_LATENCY_MS, ours, fixed, oursSkipping };
}

/**
 * Next-edit suggestions over a scripted editing session: in real files of this repository, the
 * person renames an identifier where it is first used and then every other line that uses it.
 * After each edit and a pause, the settled edits and the lines around the cursor go to the
 * emulator's model (150 ms of latency) as the extension sends them; the person takes a suggestion
 * (Tab, Tab) when it renames a line they still have to change, else makes the next change by hand.
 * Between renames they make an unrelated edit (a comment line) that gives the model nothing.
 */
const RENAMES: { file: string; from: string; to: string }[] = [
  { file: 'src/completions/core/cache.ts', from: 'best', to: 'longest' },
  { file: 'src/completions/core/cache.ts', from: 'typed', to: 'typedSoFar' },
  { file: 'src/completions/core/recentEdits.ts', from: 'kept', to: 'keptLines' },
  { file: 'src/completions/core/debounce.ts', from: 'gaps', to: 'keyGaps' },
  { file: 'src/scm/core/diff.ts', from: 'allowance', to: 'shareOf' },
];

export interface NextEditBenchResult {
  renames: number;
  /** Edits in all: by hand and accepted. */
  edits: number;
  byHand: number;
  requests: number;
  shown: number;
  accepted: number;
  /** Our work per request beyond the request itself (building it, reading and placing the answer). */
  overheadP50Ms: number;
  overheadP95Ms: number;
  tokensSent: number;
}

export async function runNextEditBench(): Promise<NextEditBenchResult> {
  const emu = await GatewayEmulator.start();
  emu.inject({ path: '/v1/chat/completions', times: 1_000_000, fault: { kind: 'slowFirstByte', ms: MODEL_LATENCY_MS } });
  const client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey });
  const r: NextEditBenchResult = {
    renames: RENAMES.length,
    edits: 0,
    byHand: 0,
    requests: 0,
    shown: 0,
    accepted: 0,
    overheadP50Ms: 0,
    overheadP95Ms: 0,
    tokensSent: 0,
  };
  const overheads: number[] = [];
  const word = (name: string) => new RegExp(`(^|[^\\w$])${name}(?![\\w$])`);
  try {
    for (const rename of RENAMES) {
      let text = readFileSync(join(ROOT, rename.file), 'utf8');
      const history = new EditHistory(text);
      const uses = () =>
        text
          .split('\n')
          .map((l, n) => (word(rename.from).test(l) ? n : -1))
          .filter((n) => n >= 0);
      const renameLine = (n: number) => {
        const lines = text.split('\n');
        lines[n] = lines[n].replace(new RegExp(`(^|[^\\w$])${rename.from}(?![\\w$])`, 'g'), `$1${rename.to}`);
        text = lines.join('\n');
      };
      /** After a settled edit at `cursor`: ask, and take the suggestion if it is one the person wants. */
      const askAfterEdit = async (cursor: number): Promise<number | undefined> => {
        history.settle(text);
        const began = performance.now();
        const request = nextEditRequest({ model: 'gpt-4o-mini', path: rename.file, language: 'typescript', text, cursorLine: cursor, edits: history.recent });
        const sent = performance.now();
        r.requests++;
        const reply = await client.chat.completions.create(request);
        const answered = performance.now();
        const content = reply.choices[0]?.message.content;
        const next = parseNextEdit(typeof content === 'string' ? content : '', text, cursor, history.recent);
        overheads.push(sent - began + (performance.now() - answered));
        r.tokensSent += reply.usage?.prompt_tokens ?? 0;
        if (!next) return undefined;
        r.shown++;
        // Wanted: it renames a line that still uses the old name, as the person would have.
        const after = text.slice(0, next.start) + next.text + text.slice(next.end);
        const line = text.split('\n')[next.line];
        const wanted =
          uses().includes(next.line) && after.split('\n')[next.line] === line.replace(new RegExp(`(^|[^\\w$])${rename.from}(?![\\w$])`, 'g'), `$1${rename.to}`);
        if (!wanted) return undefined;
        text = after;
        r.accepted++;
        r.edits++;
        return next.line;
      };
      // The first use by hand, then each suggestion taken or the next use by hand.
      let cursor = uses()[0];
      renameLine(cursor);
      r.byHand++;
      r.edits++;
      while (uses().length) {
        const taken = await askAfterEdit(cursor);
        if (taken !== undefined) {
          cursor = taken;
          // A line may use the name twice: the person finishes it by hand.
          if (uses().includes(cursor)) {
            renameLine(cursor);
            r.byHand++;
            r.edits++;
          }
          continue;
        }
        cursor = uses()[0];
        renameLine(cursor);
        r.byHand++;
        r.edits++;
      }
      await askAfterEdit(cursor);
      // An unrelated edit: a comment line; the model has nothing to propose.
      const lines = text.split('\n');
      lines.splice(cursor, 0, '  // checked');
      text = lines.join('\n');
      r.byHand++;
      r.edits++;
      await askAfterEdit(cursor);
    }
  } finally {
    await client.close();
    await emu.close();
  }
  r.overheadP50Ms = percentile(overheads, 50);
  r.overheadP95Ms = percentile(overheads, 95);
  return r;
}
