/**
 * Fitting a conversation into the model's context window before each request (pure: unit-tested
 * in Node). Only what is sent changes; the stored conversation keeps everything. In order, until
 * the prompt fits: oversized tool results are cut with a note on how to read the rest; older tool
 * results become short stubs (oldest first, never the newest step's); then the oldest exchanges
 * are left out, with a note where they were. Token counts are estimates (about four characters a
 * token, images 765); the gateway's usage corrects the meter after each reply.
 */
import type { ContextParts, ContextUse } from './contextUse';
import type { ToolCallRecord, Turn } from './conversation';

export type { ContextParts, ContextUse } from './contextUse';
import { userText } from './wire';

const CHARS_PER_TOKEN = 4;
/** An image, whatever its size: a 1024×1024 picture at high detail. */
export const IMAGE_TOKENS = 765;
/** Per message: role and framing. */
const MESSAGE_TOKENS = 4;

export function tokensOf(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

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
}

function measure(system: string, toolsText: string, turns: readonly Turn[]): ContextParts {
  const parts: ContextParts = { system: system ? tokensOf(system) + MESSAGE_TOKENS : 0, tools: toolsText ? tokensOf(toolsText) : 0, history: 0, toolResults: 0, images: 0 };
  for (const t of turns) {
    if (t.role === 'user') {
      parts.history += tokensOf(userText(t)) + MESSAGE_TOKENS;
      parts.images += t.images.length * IMAGE_TOKENS;
      continue;
    }
    for (const s of t.steps) {
      parts.history += tokensOf(s.text) + tokensOf(s.thinking ?? '') + MESSAGE_TOKENS;
      for (const c of s.toolCalls) {
        parts.history += tokensOf(c.name) + tokensOf(c.args);
        parts.toolResults += tokensOf(c.result ?? '') + MESSAGE_TOKENS;
      }
    }
  }
  return parts;
}

const total = (p: ContextParts) => p.system + p.tools + p.history + p.toolResults + p.images;

function shortArgs(c: ToolCallRecord): string {
  return c.args.length > 80 ? `${c.args.slice(0, 77)}...` : c.args;
}

/** The turns as they will be sent, fitted to the window, and how the room is used. */
export function fitToWindow(input: BudgetInput): { turns: Turn[]; use: ContextUse } {
  const window = input.window;
  const reserve = input.reserveOutput ?? Math.min(8_192, Math.floor(window * 0.2));
  const limit = Math.floor((window - reserve) * (input.aggressive ? 0.6 : 1));
  const turns = structuredClone(input.turns) as Turn[];
  let cut = 0;
  let stubbed = 0;
  let omittedTurns = 0;
  const fixed = measure(input.system, input.toolsText, []);
  const used = () => total(measure(input.system, input.toolsText, turns));
  const calls = () => turns.flatMap((t, ti) => (t.role === 'assistant' ? t.steps.flatMap((s, si) => s.toolCalls.map((c) => ({ c, ti, si, t }))) : []));

  // 1. No single result may take more than a quarter of the room.
  const maxResultChars = Math.max(4_000, Math.floor((limit - fixed.system - fixed.tools) * 0.25) * CHARS_PER_TOKEN);
  for (const { c } of calls()) {
    if (c.result && c.result.length > maxResultChars) {
      const rest = c.result.length - maxResultChars;
      c.result = `${c.result.slice(0, maxResultChars)}\n[… ${rest.toLocaleString('en-US')} more characters cut to fit the context window. Read the rest in parts (read_file with start_line and end_line, or a narrower search).]`;
      cut++;
    }
  }
  // 2. Older results become stubs, oldest first; the newest step's results stay whole. The count
  // is kept up to date by the difference each stub makes, not measured again per stub.
  let tokens = used();
  if (tokens > limit) {
    const all = calls();
    const last = all.at(-1);
    for (const { c, ti, si } of all) {
      if (tokens <= limit) break;
      if (last && ti === last.ti && si === last.si) continue;
      if (!c.result || c.result.startsWith('[Earlier result')) continue;
      const before = tokensOf(c.result);
      c.result = `[Earlier result of ${c.name}(${shortArgs(c)}) left out to fit the context window (${c.result.length.toLocaleString('en-US')} characters). Call the tool again if you need it.]`;
      tokens -= before - tokensOf(c.result);
      stubbed++;
    }
  }
  // 3. The oldest exchanges go (a user question and its answer at a time); the newest stays.
  while (used() > limit && turns.length > 2) {
    const firstAnswer = turns.findIndex((t, i) => i > 0 && t.role === 'user');
    if (firstAnswer <= 0 || firstAnswer >= turns.length - 1) break;
    turns.splice(0, firstAnswer);
    omittedTurns += firstAnswer;
  }
  if (omittedTurns > 0) {
    const first = turns[0];
    if (first.role === 'user') first.text = `[${omittedTurns} earlier messages of this conversation were left out to fit the context window.]\n\n${first.text}`;
  }
  const parts = measure(input.system, input.toolsText, turns);
  return { turns, use: { used: total(parts), window, parts, cut, stubbed, omittedTurns } };
}
