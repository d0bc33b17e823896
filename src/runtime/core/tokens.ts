/**
 * Token estimates for budgeting and the meter. The count comes from tokenx (2.4 KB, pure JS): it
 * prices words, numbers, punctuation and CJK text separately, where "four characters a token"
 * undercounts Chinese or Japanese about threefold. Exact tables (gpt-tokenizer's o200k) would add
 * 1 MB compressed to a 343 KB extension and still be wrong for Claude, Gemini or Qwen, whose
 * tokenizers are not public in JS. So: the estimate, a factor per model family, and a correction
 * learned from the gateway's usage after each reply (`scaleFromUsage`).
 */
import { estimateTokenCount } from 'tokenx';

/** An image, whatever its size: a 1024×1024 picture at high detail. */
export const IMAGE_TOKENS = 765;

/** Families whose tokenizers give more tokens than the GPT-4o-like one tokenx approximates. */
const FAMILY_FACTORS: [RegExp, number][] = [
  [/claude/i, 1.2],
  [/gemini|gemma/i, 1.05],
  [/llama|mistral|mixtral/i, 1.1],
];

export function familyFactor(model: string): number {
  return FAMILY_FACTORS.find(([re]) => re.test(model))?.[1] ?? 1;
}

// Long texts (tool results, files) are measured once: the budget measures the whole
// conversation before every request of an agent loop.
const measured = new Map<string, number>();
const MEASURE_CACHE_ENTRIES = 4_096;

/** Estimated tokens of a text (before any family factor). */
export function tokensOf(text: string): number {
  if (!text) return 0;
  if (text.length < 256) return estimateTokenCount(text);
  const known = measured.get(text);
  if (known !== undefined) return known;
  const n = estimateTokenCount(text);
  if (measured.size >= MEASURE_CACHE_ENTRIES) measured.clear();
  measured.set(text, n);
  return n;
}

/**
 * The factor that makes estimates match the gateway: the reported prompt tokens over the estimate
 * for the same request, kept within 0.5–2 (a proxy that reports nonsense cannot make the budget
 * absurd), blended with what was known before so one odd reply does not swing it.
 */
export function scaleFromUsage(previous: number, estimated: number, reported: number): number {
  if (!(estimated > 0) || !(reported > 0)) return previous;
  const seen = Math.min(2, Math.max(0.5, reported / estimated));
  return Math.round((previous * 0.3 + seen * 0.7) * 1000) / 1000;
}
