/**
 * The query side of the million-row benchmark, in its own process (see vectorsMillion.ts): loads
 * the stored parts (codes and scales into memory, the float32 rows left in their file), then
 * queries, and prints load time, resident memory, recall and median time as one JSON line.
 */
import { existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fuseResults } from '../src/search/core/hybrid';
import { KeywordIndex } from '../src/search/core/keywords/keywords';
import { StoredKeywords } from '../src/search/core/keywords/keywordStore';
import type { IndexedChunk } from '../src/search/core/semanticIndex';
import { VectorIndex } from '../src/search/core/vectors/vectorIndex';
import { CHUNKS_PER_FILE, fileOfRow, LIST } from './keywordsMillionBuild';

const dir = process.argv[2];
const { n, dim, queries, exact, exact30 } = JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8')) as {
  n: number;
  dim: number;
  queries: number[][];
  exact: number[][];
  exact30: [number, number][][];
};
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
  runs.push({
    candidates,
    widen,
    medianMs: times[Math.floor(times.length / 2)],
    p95Ms: times[Math.floor(times.length * 0.95)],
    recall: found / (qs.length * 10),
  });
}
const vectorsResidentMB = process.memoryUsage().rss / 1e6;

/**
 * Hybrid, as the search view runs it: the 30 best by vectors (500 candidates) and by keywords
 * (postings read from the stored file), fused, top 10; recall against the same fusion of the exact
 * lists (exact float32 vectors, BM25 over the whole index in memory, computed by the build).
 */
async function hybrid() {
  if (!existsSync(join(dir, 'keywords-1.bin'))) return undefined;
  const { texts, exact: keywordExact } = JSON.parse(readFileSync(join(dir, 'keywords.json'), 'utf8')) as {
    texts: string[];
    exact: [number, number, number][][];
  };
  const chunkOfRow = (row: number): IndexedChunk => ({
    file: fileOfRow(row),
    start: (row % CHUNKS_PER_FILE) * 20 + 1,
    end: (row % CHUNKS_PER_FILE) * 20 + 20,
    hash: String(row),
  });
  const t0 = performance.now();
  const stored = await StoredKeywords.open(join(dir, 'keywords-1.bin'), 1, () => Promise.resolve());
  if (!stored) throw new Error('the stored keyword index does not open');
  const firstRowOf = new Map(stored.files.map((f, i) => [f, stored.fileStarts[i]]));
  const keywords = new KeywordIndex<IndexedChunk>(stored, (file, index) => chunkOfRow(firstRowOf.get(file)! + index));
  const loadMs = performance.now() - t0;
  const key = (c: IndexedChunk) => `${c.file}:${c.start}`;
  const times: number[] = [];
  const keywordTimes: number[] = [];
  let found = 0;
  let keywordFound = 0;
  const count = Math.min(qs.length, texts.length);
  // Warm-up as for the vectors (the JIT; the blocks of the first terms).
  for (let i = 0; i < 3; i++) keywords.search(texts[i], LIST);
  for (let i = 0; i < count; i++) {
    const s = performance.now();
    const vector = index.search(qs[i], LIST, 500).map((h) => ({ chunk: chunkOfRow(h.row), score: h.score }));
    const k0 = performance.now();
    const words = keywords.search(texts[i], LIST);
    keywordTimes.push(performance.now() - k0);
    const fused = fuseResults(vector, words, 10);
    times.push(performance.now() - s);
    const truth = fuseResults(
      exact30[i].map(([row, score]) => ({ chunk: chunkOfRow(row), score })),
      keywordExact[i].map(([row, score, defines]) => ({ item: chunkOfRow(row), score, matched: [], ...(defines ? { defines: 'name' } : {}) })),
      10,
    ).map((h) => key(h.chunk));
    found += fused.filter((h) => truth.includes(key(h.chunk))).length;
    const exactWords = new Set(keywordExact[i].map(([row]) => key(chunkOfRow(row))));
    keywordFound += words.filter((h) => exactWords.has(key(h.item))).length;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const sortedWords = [...keywordTimes].sort((a, b) => a - b);
  return {
    queries: count,
    keywordLoadMs: loadMs,
    terms: stored.termCount,
    medianMs: sorted[Math.floor(count / 2)],
    p95Ms: sorted[Math.floor(count * 0.95)],
    keywordMedianMs: sortedWords[Math.floor(count / 2)],
    keywordP95Ms: sortedWords[Math.floor(count * 0.95)],
    recall: found / (count * 10),
    keywordRecall: keywordFound / keywordExact.slice(0, count).reduce((a, l) => a + l.length, 0),
  };
}

void hybrid().then((h) => {
  const residentMB = process.memoryUsage().rss / 1e6;
  console.log(JSON.stringify({ loadMs, residentMB, vectorsResidentMB, residentBeforeMB, runs, ...(h ? { hybrid: h } : {}) }));
});
