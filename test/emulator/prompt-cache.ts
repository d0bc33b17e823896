import { createHash } from 'node:crypto';
import type { Clock } from './clock';

/**
 * Prompt-cache simulation for the messages format, after the spec's state table:
 * - absent → cached: a request with a cache marker and no matching prefix, when the prefix up to
 *   the marked block reaches the model's minimum (1,024 tokens; 2,048 for the smallest series);
 * - cached → cached: an identical prefix within the TTL is read, and the TTL is refreshed;
 * - cached → absent: the TTL (5 minutes, or 1 hour with the beta header) passes without a hit.
 * Entries are per organisation; the prefix is tools, then system, then messages, and must match
 * exactly (tool_choice and the model are part of it). As on the real service, a lookup at a
 * breakpoint also checks up to 20 earlier block boundaries, so an agent loop whose newest
 * breakpoint moved on still reads what the previous step wrote.
 */
export interface CacheBlock {
  /** Canonical text of the block (without its cache_control). */
  identity: string;
  tokens: number;
  /** TTL in ms when this block carries a breakpoint. */
  breakpointTtlMs?: number;
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export const FIVE_MINUTES = 5 * 60_000;
export const ONE_HOUR = 60 * 60_000;
const LOOKBACK_BLOCKS = 20;

export class PromptCache {
  private readonly entries = new Map<string, { expiresAt: number; ttlMs: number }>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  private alive(key: string, now: number): boolean {
    const e = this.entries.get(key);
    if (!e) return false;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  /** Accounts one request: which prefix is read, which is written, and the usage it reports. */
  process(org: string, seed: string, blocks: CacheBlock[], minTokens: number): CacheUsage {
    const now = this.clock.now();
    const keys: string[] = [];
    const cumulative: number[] = [];
    let h = createHash('sha256').update(`${org}\u0000${seed}`).digest('hex');
    let total = 0;
    for (const b of blocks) {
      h = createHash('sha256').update(h).update('\u0001').update(b.identity).digest('hex');
      keys.push(`${org}:${h}`);
      total += b.tokens;
      cumulative.push(total);
    }
    const breakpoints = blocks.map((b, i) => (b.breakpointTtlMs ? i : -1)).filter((i) => i >= 0);

    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK_BLOCKS); j--) {
        if (j > readEnd && this.alive(keys[j], now)) {
          readEnd = j;
          break;
        }
      }
    }
    const readTokens = readEnd >= 0 ? cumulative[readEnd] : 0;
    if (readEnd >= 0) {
      const e = this.entries.get(keys[readEnd])!;
      e.expiresAt = now + e.ttlMs;
    }

    const created = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    let writtenEnd = readEnd;
    for (const bp of breakpoints) {
      if (bp <= readEnd || cumulative[bp] < minTokens) continue;
      const ttlMs = blocks[bp].breakpointTtlMs!;
      const segment = cumulative[bp] - (writtenEnd >= 0 ? cumulative[writtenEnd] : 0);
      if (ttlMs >= ONE_HOUR) created.ephemeral_1h_input_tokens += segment;
      else created.ephemeral_5m_input_tokens += segment;
      this.entries.set(keys[bp], { expiresAt: now + ttlMs, ttlMs });
      writtenEnd = bp;
    }
    const creationTokens = created.ephemeral_5m_input_tokens + created.ephemeral_1h_input_tokens;
    return {
      input_tokens: total - readTokens - creationTokens,
      cache_creation_input_tokens: creationTokens,
      cache_read_input_tokens: readTokens,
      cache_creation: created,
    };
  }
}
