/**
 * OpenAI's automatic prompt caching, which new-api passes through for chat completions and
 * responses: a request whose leading items (tools, then messages or input items) repeat an earlier
 * request's on the same key, with 1,024 tokens or more, reports them as cached, in steps of 128.
 * One per emulator, so suites that start their own emulator start cold.
 */
import { createHash } from 'node:crypto';
import { estimateTokens } from './assistant';

/** Prefixes kept at most (a long-running emulator forgets them all past this, like a cache eviction). */
const MAX_PREFIXES = 100_000;

export class AutomaticCache {
  private readonly seen = new Set<string>();

  /** The cached prompt tokens of a request whose leading items are `items` (undefined ones skipped). */
  lookup(key: string, items: readonly unknown[], promptTokens: number): number {
    let cached = 0;
    let prefixTokens = 0;
    // A running hash of the prefix: each step hashes the previous digest and one item.
    let digest = createHash('sha1').update(key).digest('hex');
    for (const item of items) {
      if (item === undefined) continue;
      const text = JSON.stringify(item);
      prefixTokens += estimateTokens(text);
      digest = createHash('sha1').update(digest).update(text).digest('hex');
      if (this.seen.has(digest)) cached = Math.min(prefixTokens, promptTokens);
      else {
        if (this.seen.size >= MAX_PREFIXES) this.seen.clear();
        this.seen.add(digest);
      }
    }
    return cached >= 1024 ? cached - (cached % 128) : 0;
  }
}
