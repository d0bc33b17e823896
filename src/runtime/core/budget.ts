/**
 * Fitting a conversation into the model's context window before each request (pure: unit-tested
 * in Node). Only what is sent changes; the stored conversation keeps everything. In order:
 * 1. the newest condensation (a model-written summary) replaces the turns it covers;
 * 2. oversized tool results are cut with a note on how to read the rest;
 * 3. results stubbed by earlier requests stay stubs (so the sent prefix, and the cache, hold);
 * 4. over the limit, older results become stubs, oldest first, down to half the limit at once,
 *    so the next steps of a loop append to a stable prefix instead of changing it every step;
 *    when stubs cannot get there, or a pile of them has built up (stubs keep no facts, a summary
 *    does), the caller is told to condense (`wantsCondense`, `condenseCut`);
 * 5. as a last resort the oldest exchanges are left out, with a note where they were.
 */
import type { ContextParts, ContextUse } from '../../common/contextUse';
import { sentImages, type AssistantTurn, type Condensation, type Step, type ToolCallRecord, type Turn, type UserTurn } from '../../common/conversation';
import { IMAGE_TOKENS, tokensOf } from './tokens';
import { userText } from './wire';

export type { ContextParts, ContextUse } from '../../common/contextUse';
export { IMAGE_TOKENS, tokensOf } from './tokens';

/** Per message: role and framing. */
const MESSAGE_TOKENS = 4;
/** Compaction aims this far under the limit, so it happens once every several steps. */
const LOW_WATER = 0.5;
/** Stubbed results in what is sent beyond which the next compaction condenses instead. */
const STUBS_BEFORE_CONDENSING = 10;
/** What a condensation keeps verbatim at the end of the conversation, as a share of the limit. */
const KEEP_AFTER_CONDENSING = 0.25;
/** Characters a token, for cutting a text to a token budget (a little under what text averages). */
const CHARS_PER_TOKEN = 3.5;

/** Context windows by model family, where neither the gateway nor the settings say (conservative). */
const FAMILY_WINDOWS: [RegExp, number][] = [
  [/claude/i, 200_000],
  [/gpt-5|gpt-4\.1/i, 400_000],
  [/gpt-4o|o[134](-|$)|gpt-4-turbo/i, 128_000],
  [/gemini/i, 1_000_000],
  [/deepseek|qwen|glm|kimi|moonshot/i, 64_000],
];
export const DEFAULT_CONTEXT_WINDOW = 32_000;

/** The window a context-length refusal names ("maximum context length is 32000 tokens", "> 32000 maximum"). */
export function windowFromError(message: string): number | undefined {
  const m = /maximum context length is (\d{3,8})|> ?(\d{3,8}) maximum|context window of (\d{3,8})/i.exec(message);
  const n = Number(m?.[1] ?? m?.[2] ?? m?.[3]);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export function contextWindowFor(model: string, override?: number): number {
  if (override) return override;
  return FAMILY_WINDOWS.find(([re]) => re.test(model))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

export interface BudgetInput {
  system: string;
  /** The tool definitions as sent (their JSON). */
  toolsText: string;
  turns: readonly Turn[];
  window: number;
  /** Tokens kept free for the reply. */
  reserveOutput?: number;
  /** After the gateway refused the prompt as too long: aim well under the window. */
  aggressive?: boolean;
  /** Estimates are multiplied by this: the model family's factor and what the gateway's usage taught. */
  scale?: number;
  /** The conversation's newest condensation, if any. */
  condensation?: Condensation;
}

export interface Fitted {
  turns: Turn[];
  use: ContextUse;
  /** Tool calls stubbed for the first time here: the caller marks them `stubbed` for later requests. */
  newlyStubbed: string[];
  /** The prompt was over the limit and stubs could not bring it down far: condense older turns. */
  wantsCondense: boolean;
}

/** The room a request may fill: the window less the reply's share (less still after a refusal). */
export function promptLimit(window: number, reserveOutput?: number, aggressive?: boolean): number {
  const reserve = reserveOutput ?? Math.min(8_192, Math.floor(window * 0.2));
  return Math.floor((window - reserve) * (aggressive ? 0.6 : 1));
}

function stepTokens(s: Step): { history: number; toolResults: number; images: number } {
  let history = tokensOf(s.text) + tokensOf(s.thinking ?? '') + MESSAGE_TOKENS;
  let toolResults = 0;
  let images = 0;
  for (const c of s.toolCalls) {
    history += tokensOf(c.name) + tokensOf(c.args);
    toolResults += (c.stubbed ? tokensOf(stubFor(c)) : tokensOf(c.result ?? '')) + MESSAGE_TOKENS;
    images += sentImages(c).length * IMAGE_TOKENS;
  }
  return { history, toolResults, images };
}

function measure(system: string, toolsText: string, turns: readonly Turn[], scale: number): ContextParts {
  const parts: ContextParts = {
    system: system ? tokensOf(system) + MESSAGE_TOKENS : 0,
    tools: toolsText ? tokensOf(toolsText) : 0,
    history: 0,
    toolResults: 0,
    images: 0,
  };
  for (const t of turns) {
    if (t.role === 'user') {
      parts.history += tokensOf(userText(t)) + MESSAGE_TOKENS;
      parts.images += t.images.length * IMAGE_TOKENS;
      continue;
    }
    for (const s of t.steps) {
      const n = stepTokens(s);
      parts.history += n.history;
      parts.toolResults += n.toolResults;
      parts.images += n.images;
    }
  }
  return {
    system: Math.ceil(parts.system * scale),
    tools: Math.ceil(parts.tools * scale),
    history: Math.ceil(parts.history * scale),
    toolResults: Math.ceil(parts.toolResults * scale),
    images: parts.images,
  };
}

const total = (p: ContextParts) => p.system + p.tools + p.history + p.toolResults + p.images;

function shortArgs(c: ToolCallRecord): string {
  return c.args.length > 80 ? `${c.args.slice(0, 77)}...` : c.args;
}

/** The stub a result is sent as once it is left out (the same text every time: the prefix stays cacheable). */
export function stubFor(c: ToolCallRecord): string {
  return `[Earlier result of ${c.name}(${shortArgs(c)}) left out to fit the context window (${(c.result ?? '').length.toLocaleString('en-US')} characters). Call the tool again if you need it.]`;
}

export const SUMMARY_HEADING = '[The conversation before this point was condensed to fit the context window. Summary:]';

function summaryTurn(c: Condensation): UserTurn {
  return {
    id: `${c.id}-summary`,
    role: 'user',
    text: `${SUMMARY_HEADING}\n\n${c.summary}`,
    images: [],
    context: [],
    at: c.at,
    pinned: true,
    ...(c.serverItems ? { serverItems: c.serverItems, serverModel: c.model } : {}),
  };
}

/** Where a condensation's cut falls in `turns`: the turn index and the steps of it covered (undefined: all). */
function cutIndex(turns: readonly Turn[], c: Pick<Condensation, 'throughTurnId' | 'throughSteps'>): { index: number; steps?: number } | undefined {
  const index = turns.findIndex((t) => t.id === c.throughTurnId);
  if (index < 0) return undefined;
  const t = turns[index];
  if (c.throughSteps !== undefined && t.role === 'assistant' && c.throughSteps < t.steps.length) return { index, steps: c.throughSteps };
  return { index };
}

/** The turns as sent under a condensation: its summary, then what it does not cover. */
export function applyCondensation(turns: readonly Turn[], c: Condensation | undefined): { turns: Turn[]; covered: number } {
  const at = c ? cutIndex(turns, c) : undefined;
  if (!c || !at) return { turns: [...turns], covered: 0 };
  if (at.steps === undefined) return { turns: [summaryTurn(c), ...turns.slice(at.index + 1)], covered: at.index + 1 };
  // Cut inside an answer: its question is sent again after the summary, then the steps not covered.
  const answer = turns[at.index] as AssistantTurn;
  const question = turns[at.index - 1];
  return {
    turns: [summaryTurn(c), ...(question?.role === 'user' ? [question] : []), { ...answer, steps: answer.steps.slice(at.steps) }, ...turns.slice(at.index + 1)],
    covered: at.index,
  };
}

/** The turns as they will be sent, fitted to the window, and how the room is used. */
export function fitToWindow(input: BudgetInput): Fitted {
  const window = input.window;
  const scale = input.scale ?? 1;
  const limit = promptLimit(window, input.reserveOutput, input.aggressive);
  const applied = applyCondensation(structuredClone(input.turns), input.condensation);
  const turns = applied.turns;
  let cut = 0;
  let stubbed = 0;
  let omittedTurns = 0;
  const newlyStubbed: string[] = [];
  let wantsCondense = false;
  const fixed = measure(input.system, input.toolsText, [], scale);
  const used = () => total(measure(input.system, input.toolsText, turns, scale));
  const calls = () => turns.flatMap((t, ti) => (t.role === 'assistant' ? t.steps.flatMap((s, si) => s.toolCalls.map((c) => ({ c, ti, si }))) : []));

  // 1. No single result may take more than a quarter of the room.
  const maxResultChars = Math.max(4_000, Math.floor(((limit - fixed.system - fixed.tools) * 0.25 * CHARS_PER_TOKEN) / scale));
  for (const { c } of calls()) {
    if (c.result && !c.stubbed && c.result.length > maxResultChars) {
      const rest = c.result.length - maxResultChars;
      c.result = `${c.result.slice(0, maxResultChars)}\n[… ${rest.toLocaleString('en-US')} more characters cut to fit the context window. Read the rest in parts (read_file with start_line and end_line, or a narrower search).]`;
      cut++;
    }
  }
  // 2. Results stubbed before stay stubs.
  for (const { c } of calls()) {
    if (c.stubbed) {
      c.result = stubFor(c);
      stubbed++;
    }
  }
  // 3. Over the limit: more stubs, oldest first, down to the low-water mark; the newest step's
  // results stay whole. The count is kept by the difference each stub makes.
  let tokens = used();
  if (tokens > limit) {
    const target = Math.floor(limit * LOW_WATER);
    const all = calls();
    const last = all.at(-1);
    const originals = new Map(input.turns.flatMap((t) => (t.role === 'assistant' ? t.steps.flatMap((s) => s.toolCalls) : [])).map((o) => [o.id, o]));
    for (const { c, ti, si } of all) {
      if (tokens <= target) break;
      if (last && ti === last.ti && si === last.si) continue;
      if (!c.result || c.stubbed) continue;
      const stub = stubFor(originals.get(c.id) ?? c);
      // A stub sends no images either.
      tokens -= Math.ceil((tokensOf(c.result) - tokensOf(stub)) * scale) + sentImages(c).length * IMAGE_TOKENS;
      c.result = stub;
      c.stubbed = true;
      newlyStubbed.push(c.id);
      stubbed++;
    }
    wantsCondense = tokens > target || stubbed >= STUBS_BEFORE_CONDENSING;
  }
  // 4. The oldest exchanges go (a user question and its answer at a time); the newest stays.
  while (used() > limit && turns.length > 2) {
    const firstAnswer = turns.findIndex((t, i) => i > 0 && t.role === 'user' && !t.pinned);
    if (firstAnswer <= 0 || firstAnswer >= turns.length - 1) break;
    turns.splice(0, firstAnswer);
    omittedTurns += firstAnswer;
  }
  if (omittedTurns > 0) {
    const first = turns[0];
    if (first.role === 'user') first.text = `[${omittedTurns} earlier messages of this conversation were left out to fit the context window.]\n\n${first.text}`;
  }
  const parts = measure(input.system, input.toolsText, turns, scale);
  return { turns, use: { used: total(parts), window, parts, cut, stubbed, omittedTurns, condensedTurns: applied.covered }, newlyStubbed, wantsCondense };
}

/** Where to cut when condensing: `throughTurnId` (and `throughSteps` inside an answer). */
export type Cut = Pick<Condensation, 'throughTurnId' | 'throughSteps'>;

function later(turns: readonly Turn[], a: Cut, b: Cut | undefined): boolean {
  if (!b) return true;
  const ia = cutIndex(turns, a);
  const ib = cutIndex(turns, b);
  if (!ia || !ib) return !!ia;
  if (ia.index !== ib.index) return ia.index > ib.index;
  return (ia.steps ?? Infinity) > (ib.steps ?? Infinity);
}

/**
 * What an automatic condensation covers: everything but the newest part of the conversation, about
 * a quarter of the limit, and never the newest step (its results are what the model works on
 * next). A cut falls between steps of an answer or after an answer; undefined when that would
 * cover nothing the current condensation does not already.
 */
export function condenseCut(turns: readonly Turn[], limit: number, current?: Condensation, scale = 1): Cut | undefined {
  const keep = limit * KEEP_AFTER_CONDENSING;
  let kept = 0;
  const size = (n: { history: number; toolResults: number; images: number }) => (n.history + n.toolResults) * scale + n.images;
  for (let ti = turns.length - 1; ti >= 1; ti--) {
    const t = turns[ti];
    if (t.role === 'assistant') {
      for (let k = t.steps.length - 1; k >= 1; k--) {
        kept += size(stepTokens(t.steps[k]));
        const cutHere = { throughTurnId: t.id, throughSteps: k };
        if (kept >= keep) return later(turns, cutHere, current) ? cutHere : undefined;
      }
      if (t.steps[0]) kept += size(stepTokens(t.steps[0]));
    } else {
      kept += (tokensOf(userText(t)) + MESSAGE_TOKENS) * scale + t.images.length * IMAGE_TOKENS;
      const before = turns[ti - 1];
      const cutHere = { throughTurnId: before.id };
      if (kept >= keep && before.role === 'assistant') return later(turns, cutHere, current) ? cutHere : undefined;
    }
  }
  return undefined;
}

/** What Condense (by hand) covers: all but the newest exchange, or the only one there is. */
export function manualCut(turns: readonly Turn[], current?: Condensation): Cut | undefined {
  const lastQuestion = turns.map((t) => t.role === 'user').lastIndexOf(true);
  const through = lastQuestion > 0 ? turns[lastQuestion - 1] : turns.at(-1);
  if (!through) return undefined;
  const cutHere = { throughTurnId: through.id };
  return later(turns, cutHere, current) ? cutHere : undefined;
}

/** The turns a cut covers that the current condensation does not (what the summariser reads). */
export function turnsToSummarise(turns: readonly Turn[], cut: Cut, current?: Condensation): Turn[] {
  const at = cutIndex(turns, cut);
  if (!at) return [];
  const start = current ? (cutIndex(turns, current) ?? { index: -1 }) : { index: -1 };
  const out: Turn[] = [];
  for (let i = Math.max(0, start.index); i <= at.index; i++) {
    const t = turns[i];
    if (i === start.index && start.steps === undefined) continue;
    if (t.role === 'user') {
      out.push(t);
      continue;
    }
    const from = i === start.index ? (start.steps ?? 0) : 0;
    const to = i === at.index && at.steps !== undefined ? at.steps : t.steps.length;
    out.push({ ...t, steps: t.steps.slice(from, to) });
  }
  return out;
}
