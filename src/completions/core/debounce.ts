/**
 * How long to wait after a keystroke before asking. Long enough that the pause is a pause, not
 * the next key of a burst (twice the person's median gap between keys, from the last 30 keys under
 * a second apart: typing gaps are about log-normal, and for a steady typist under 2% of them are
 * longer; a request sent mid-burst is cancelled by the next key and wasted), and
 * about the model's recent latency (the mean of the last ten answers: a slow model is not asked
 * on every short pause); bounded, and 150 ms before anything is known.
 */
export class AdaptiveDebounce {
  private readonly latencies: number[] = [];
  private readonly gaps: number[] = [];
  private lastKeyAt: number | undefined;

  constructor(
    private readonly o: { initialMs: number; minMs: number; maxMs: number; window: number } = { initialMs: 150, minMs: 100, maxMs: 600, window: 10 },
  ) {}

  get delayMs(): number {
    if (this.latencies.length === 0 && this.gaps.length < 5) return this.o.initialMs;
    const latency = this.latencies.length ? this.latencies.reduce((a, b) => a + b, 0) / this.latencies.length : 0;
    const rhythm = this.gaps.length >= 5 ? 2 * median(this.gaps) : 0;
    return Math.round(Math.min(this.o.maxMs, Math.max(this.o.minMs, latency, rhythm)));
  }

  /** An answer's latency (request sent to the last byte), in ms. */
  record(latencyMs: number): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0) return;
    this.latencies.push(latencyMs);
    if (this.latencies.length > this.o.window) this.latencies.shift();
  }

  /** A keystroke at `atMs` (a monotonic clock): gaps under a second teach the typing rhythm. */
  keystroke(atMs: number): void {
    const gap = this.lastKeyAt === undefined ? undefined : atMs - this.lastKeyAt;
    this.lastKeyAt = atMs;
    if (gap === undefined || gap <= 0 || gap >= 1000) return;
    this.gaps.push(gap);
    if (this.gaps.length > 30) this.gaps.shift();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
