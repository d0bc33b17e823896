/**
 * Completions already received, so that typing through a suggestion reuses it instead of asking
 * again: the cursor's prefix is an earlier prefix plus exactly what the suggestion said next.
 * Least recently used entries go first.
 */
export class CompletionCache {
  private readonly entries = new Map<string, { prefix: string; suffix: string; text: string }>();

  constructor(private readonly max = 200) {}

  private static key(prefix: string, suffix: string): string {
    return `${prefix}\u0000${suffix}`;
  }

  /** What to show at this cursor: an exact hit, or the rest of a suggestion the user has been typing. */
  get(prefix: string, suffix: string): string | undefined {
    const exact = this.entries.get(CompletionCache.key(prefix, suffix));
    if (exact) {
      this.touch(exact);
      return exact.text;
    }
    let best: { prefix: string; suffix: string; text: string } | undefined;
    for (const e of this.entries.values()) {
      if (e.suffix !== suffix || !prefix.startsWith(e.prefix)) continue;
      const typed = prefix.slice(e.prefix.length);
      if (typed.length >= e.text.length || !e.text.startsWith(typed)) continue;
      if (!best || e.prefix.length > best.prefix.length) best = e;
    }
    if (!best) return undefined;
    this.touch(best);
    return best.text.slice(prefix.length - best.prefix.length);
  }

  set(prefix: string, suffix: string, text: string): void {
    const key = CompletionCache.key(prefix, suffix);
    this.entries.delete(key);
    this.entries.set(key, { prefix, suffix, text });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  private touch(e: { prefix: string; suffix: string; text: string }): void {
    const key = CompletionCache.key(e.prefix, e.suffix);
    this.entries.delete(key);
    this.entries.set(key, e);
  }
}
