/**
 * Vector search: top-10 over 100,000 x 1,024 vectors, 30 queries per set, recall@10 against exact
 * float32 search and the median time. Sets (bench/vectorData.ts): the easy one (noisy copies of
 * stored vectors) and hard ones shaped like real code search (power-law spectrum with strong
 * coordinates, a shared offset, topic mixtures, low and close similarities), several seeds and
 * shapes. Also a plain Float32Array loop (exact), and vectra on 10,000 vectors (it fails at 100k).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalIndex } from 'vectra';
import { VectorIndex } from '../src/search/core/vectors/vectorIndex';
import { vectorSet, type VectorShape } from './vectorData';

export interface VectorSetResult {
  shape: VectorShape;
  seed: number;
  /** Mean cosine of the exact top-1 and top-10 (how hard the queries are). */
  top1: number;
  top10: number;
  buildMs: number;
  ours: { candidates: number; medianMs: number; recall: number }[];
  plainLoopMedianMs: number;
}

export interface VectorBenchResult {
  n: number;
  dim: number;
  sets: VectorSetResult[];
  bytesPerVector: number;
  vectra10k?: { insertMs: number; medianMs: number; oursMedianMs: number; ratio: number };
}

export const VECTOR_SETS: [VectorShape, number][] = [
  ['easy', 7],
  ['hard', 1],
  ['hard', 2],
  ['hard', 3],
  ['hard-steep', 1],
  ['hard-rotated', 1],
  ['hard-flat', 1],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Exact top-k with a plain loop over normalised vectors (the reference and the naive baseline). */
function plainTopK(norm: Float32Array, dim: number, q: Float32Array, k: number): { rows: number[]; scores: number[] } {
  let qs = 0;
  for (let d = 0; d < dim; d++) qs += q[d] * q[d];
  const qn = Math.sqrt(qs);
  const top: [number, number][] = [];
  for (let r = 0, o = 0; o < norm.length; r++, o += dim) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += norm[o + d] * q[d];
    s /= qn;
    if (top.length < k || s > top[top.length - 1][1]) {
      top.push([r, s]);
      top.sort((a, b) => b[1] - a[1]);
      if (top.length > k) top.pop();
    }
  }
  return { rows: top.map(([r]) => r), scores: top.map(([, sc]) => sc) };
}

function measureSet(
  shape: VectorShape,
  seed: number,
  n: number,
  dim: number,
): { result: VectorSetResult; index: VectorIndex; data: Float32Array; queries: Float32Array[] } {
  const { data, queries } = vectorSet(shape, n, dim, seed, 30);
  const t0 = performance.now();
  const index = VectorIndex.fromVectors(data, dim);
  const buildMs = performance.now() - t0;
  const norm = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) norm.set(index.vector(r), r * dim);
  const exact: { rows: number[]; scores: number[] }[] = [];
  const plainTimes: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    exact.push(plainTopK(norm, dim, q, 10));
    plainTimes.push(performance.now() - s);
  }
  const ours: VectorSetResult['ours'] = [];
  for (const candidates of [300, 500]) {
    for (let w = 0; w < 3; w++) index.search(queries[w], 10, candidates);
    const times: number[] = [];
    let found = 0;
    queries.forEach((q, i) => {
      const s = performance.now();
      const hits = index.search(q, 10, candidates);
      times.push(performance.now() - s);
      found += hits.filter((h) => exact[i].rows.includes(h.row)).length;
    });
    ours.push({ candidates, medianMs: median(times), recall: found / (queries.length * 10) });
  }
  const mean = (f: (e: { scores: number[] }) => number) => exact.reduce((a, e) => a + f(e), 0) / exact.length;
  return {
    result: { shape, seed, top1: mean((e) => e.scores[0]), top10: mean((e) => e.scores[9]), buildMs, ours, plainLoopMedianMs: median(plainTimes) },
    index,
    data,
    queries,
  };
}

export async function runVectorBench(withVectra = true): Promise<VectorBenchResult> {
  const n = 100_000;
  const dim = 1024;
  const sets: VectorSetResult[] = [];
  let first: ReturnType<typeof measureSet> | undefined;
  for (const [shape, seed] of VECTOR_SETS) {
    const m = measureSet(shape, seed, n, dim);
    sets.push(m.result);
    first ??= m;
  }
  const { index, data, queries } = first!;
  const result: VectorBenchResult = { n, dim, sets, bytesPerVector: index.bytesPerVector };

  if (withVectra) {
    // vectra keeps its index as JSON and fails at 100k x 1024 (perf notes): compare at 10k.
    const small = 10_000;
    const dir = mkdtempSync(join(tmpdir(), 'mg-vectra-'));
    try {
      const v = new LocalIndex(dir);
      await v.createIndex();
      const s = performance.now();
      const items = Array.from({ length: small }, (_, r) => ({ vector: Array.from(data.subarray(r * dim, (r + 1) * dim)), metadata: { r } }));
      await v.batchInsertItems(items);
      const insertMs = performance.now() - s;
      const ourSmall = VectorIndex.fromVectors(data.subarray(0, small * dim), dim);
      const vt: number[] = [];
      const ot: number[] = [];
      for (const q of queries) {
        const arr = Array.from(q);
        const a = performance.now();
        await v.queryItems(arr, '', 10);
        vt.push(performance.now() - a);
        const b = performance.now();
        ourSmall.search(q, 10);
        ot.push(performance.now() - b);
      }
      result.vectra10k = { insertMs, medianMs: median(vt), oursMedianMs: median(ot), ratio: median(vt) / median(ot) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return result;
}
