/**
 * How long to wait after a keystroke before asking: about the model's recent latency (the mean of
 * the last ten answers), so a fast model answers as the user pauses and a slow one is not asked on
 * every key; bounded, and 150 ms before anything is known.
 */
export class AdaptiveDebounce {
  private readonly latencies: number[] = [];

  constructor(
    private readonly o: { initialMs: number; minMs: number; maxMs: number; window: number } = { initialMs: 150, minMs: 100, maxMs: 600, window: 10 },
  ) {}

  get delayMs(): number {
    if (this.latencies.length === 0) return this.o.initialMs;
    const mean = this.latencies.reduce((a, b) => a + b, 0) / this.latencies.length;
    return Math.round(Math.min(this.o.maxMs, Math.max(this.o.minMs, mean)));
  }

  /** An answer's latency (request sent to the last byte), in ms. */
  record(latencyMs: number): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0) return;
    this.latencies.push(latencyMs);
    if (this.latencies.length > this.o.window) this.latencies.shift();
  }
}
