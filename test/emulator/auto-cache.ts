/**
 * OpenAI's automatic prompt caching, which new-api passes through for chat completions and
 * responses: a request whose leading items (instructions, tools, then messages or input items)
 * repeat an earlier request's, with 1,024 tokens or more, reports them as cached, in steps of 128.
 */
import { createHash } from 'node:crypto';
import { estimateTokens } from './assistant';

/** Prefixes of input seen before, per key: OpenAI caches a repeated prefix of 1,024+ tokens automatically. */
const seenPrefixes = new Map<string, number>();
export function automaticCache(key: string, items: unknown, tokens: number): number {
  const list = Array.isArray(items) ? items : [items];
  let cached = 0;
  let acc = '';
  let accTokens = 0;
  for (const it of list) {
    if (it === undefined) continue;
    const text = JSON.stringify(it);
    acc += text;
    accTokens += estimateTokens(text);
    const h = createHash('sha1').update(key + acc).digest('hex');
    if (seenPrefixes.has(h)) cached = Math.min(accTokens, tokens);
    else seenPrefixes.set(h, accTokens);
  }
  return cached >= 1024 ? cached - (cached % 128) : 0;
}
