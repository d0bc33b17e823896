/**
 * The query side of the million-row benchmark, in its own process (see vectorsMillion.ts): loads
 * the stored parts (codes and scales into memory, the float32 rows left in their file), then
 * queries, and prints load time, resident memory, recall and median time as one JSON line.
 */
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VectorIndex } from '../src/search/core/vectorIndex';

const dir = process.argv[2];
const { n, dim, queries, exact } = JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8')) as { n: number; dim: number; queries: number[][]; exact: number[][] };
const qs = queries.map((q) => Float32Array.from(q));
globalThis.gc?.();
const residentBeforeMB = process.memoryUsage().rss / 1e6;
const t0 = performance.now();
const bytes = (f: string) => {
  const b = readFileSync(join(dir, f));
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
};
const codes = bytes('codes.bin');
const alphasBytes = bytes('alphas.f32');
const meanBytes = bytes('mean.f32');
const index = VectorIndex.fromParts({
  dim,
  count: n,
  mean: new Float32Array(meanBytes.buffer, meanBytes.byteOffset, dim),
  codes,
  alphas: new Float32Array(alphasBytes.buffer, alphasBytes.byteOffset, n),
  vectorFile: openSync(join(dir, 'vectors.f32'), 'r'),
});
index.search(qs[0], 10);
const loadMs = performance.now() - t0;
// Warm-up (the JIT, the page cache for the first rows read), as a running editor would be.
for (const q of qs.slice(0, 5)) index.search(q, 10);
const runs: { candidates: number; widen: number; medianMs: number; p95Ms: number; recall: number }[] = [];
for (const [candidates, widen] of [
  [500, 8],
  [1000, 8],
] as const) {
  VectorIndex.WIDEN = widen;
  const times: number[] = [];
  let found = 0;
  qs.forEach((q, i) => {
    const s = performance.now();
    const hits = index.search(q, 10, candidates);
    times.push(performance.now() - s);
    found += hits.filter((h) => exact[i].includes(h.row)).length;
  });
  times.sort((a, b) => a - b);
  runs.push({ candidates, widen, medianMs: times[Math.floor(times.length / 2)], p95Ms: times[Math.floor(times.length * 0.95)], recall: found / (qs.length * 10) });
}
const residentMB = process.memoryUsage().rss / 1e6;
console.log(JSON.stringify({ loadMs, residentMB, residentBeforeMB, runs }));
