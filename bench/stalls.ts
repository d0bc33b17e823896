/**
 * How long our work holds the event loop: Node's event-loop delay histogram (a timer every
 * millisecond, and how late it fired) over a stretch of work. The extension host runs every
 * extension on one loop, so a stall here is a freeze of all of them.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface Stalls {
  /** The longest the loop was held, ms. */
  maxMs: number;
  /** The 99th percentile of the delays, ms. */
  p99Ms: number;
}

/** Starts watching; the returned function stops and reports. */
export function watchStalls(): () => Stalls {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return () => {
    h.disable();
    return { maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 };
  };
}

/** Runs `fn` and reports its result with the stalls it caused. */
export async function withStalls<T>(fn: () => Promise<T>): Promise<{ result: T; stalls: Stalls }> {
  const stop = watchStalls();
  // The histogram's timer needs a turn to start before the work begins.
  await new Promise((r) => setTimeout(r, 5));
  const result = await fn();
  return { result, stalls: stop() };
}

export const STALL_TARGET_MS = 50;

export const stallText = (s: Stalls) =>
  `longest stall ${s.maxMs.toFixed(0)} ms, p99 ${s.p99Ms.toFixed(0)} ms (target ≤ ${STALL_TARGET_MS} ms: ${s.maxMs <= STALL_TARGET_MS ? 'met' : 'NOT met'})`;

/**
 * Runs `fn` and reports the most this thread held meanwhile (its heap plus the buffers it owns,
 * sampled every 20 ms): what a build keeps on the extension host, workers' memory aside.
 */
export async function withPeakMemory<T>(fn: () => Promise<T>): Promise<{ result: T; peakMB: number }> {
  const held = () => {
    const m = process.memoryUsage();
    return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
  };
  let peak = held();
  const timer = setInterval(() => (peak = Math.max(peak, held())), 20);
  try {
    const result = await fn();
    return { result, peakMB: Math.max(peak, held()) };
  } finally {
    clearInterval(timer);
  }
}
