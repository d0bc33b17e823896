/**
 * What one changed file costs a large index, and whether the extension host stays responsive: a
 * workspace of 12,500 files (8 chunks each, 100,000 chunks), 1,024 dimensions, embedded by a
 * local stand-in (random unit vectors: this measures storage, not the gateway). The build, ten
 * single-file changes (the tenth reaches the log's limit, so the log is folded into a new
 * snapshot: the worst case), a load in the same process and hybrid queries, each with the longest
 * event-loop stall it caused.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuseResults } from '../src/search/core/hybrid';
import { SemanticIndex } from '../src/search/core/semanticIndex';
import { withPeakMemory, withStalls, type Stalls } from './stalls';
import { standInEmbeddings } from './vectorData';

export interface IndexUpdateResult {
  files: number;
  chunks: number;
  dim: number;
  buildSeconds: number;
  buildStalls: Stalls;
  /** The most the host thread held during the build (heap and buffers), MB. */
  buildPeakMB: number;
  persistMs: { median: number; max: number };
  /** `worst`: which of the ten (0 is the first change after the build, while its keywords are stored in the background). */
  updateMs: { median: number; max: number; worst: number; worstPersistMs: number };
  /** Over the ten changes and the fold they start, until it is taken over. */
  updateStalls: Stalls;
  foldMs: number;
  loadMs: number;
  loadStalls: Stalls;
  /** Until the keyword index is filled from the files again (after the load). */
  keywordsMs: number;
  keywordsStalls: Stalls;
  queryMs: { median: number; p95: number };
  queryStalls: Stalls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

export async function runIndexUpdateBench(files = 12_500, dim = 1024): Promise<IndexUpdateResult> {
  const root = mkdtempSync(join(tmpdir(), 'mg-update-bench-'));
  const store = mkdtempSync(join(tmpdir(), 'mg-update-store-'));
  const { embed, unit } = standInEmbeddings(dim, 5);
  const body = (f: number, version: number) =>
    Array.from({ length: 4 }, (_, c) => {
      const lines = Array.from(
        { length: 22 },
        (_, l) => `  const value${c}_${l} = compute(${f}, ${c}, ${l}, ${version}); // step ${l} of part ${c} in module ${f}`,
      );
      return `export function part${c}OfModule${f}(): number {\n${lines.join('\n')}\n  return ${c};\n}\n`;
    }).join('\n');
  const indexes: SemanticIndex[] = [];
  try {
    for (let f = 0; f < files; f++) {
      const dir = join(root, `pkg${Math.floor(f / 500)}`);
      if (f % 500 === 0) mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `module${f}.ts`), body(f, 0));
    }
    // The tenth change reaches the log's limit: the fold is part of what is measured.
    const make = () => {
      const index = new SemanticIndex({
        folders: [{ name: 'bench', path: root }],
        excludes: [],
        storeDir: store,
        model: 'bench',
        embed,
        chunkTokens: 300,
        maxLogEntries: 10,
      });
      indexes.push(index);
      return index;
    };
    const index = make();
    await index.load();
    const t0 = performance.now();
    const { result: build, peakMB: buildPeakMB } = await withPeakMemory(() => withStalls(() => index.update()));
    const buildSeconds = (performance.now() - t0) / 1000;
    const persist: number[] = [];
    const total: number[] = [];
    let foldMs = 0;
    const updates = await withStalls(async () => {
      for (let i = 0; i < 10; i++) {
        const f = (37 + i * 911) % files;
        const path = join(root, `pkg${Math.floor(f / 500)}`, `module${f}.ts`);
        writeFileSync(path, body(f, i + 1));
        const s = performance.now();
        const stats = await index.update([path]);
        total.push(performance.now() - s);
        persist.push(stats.persistMs);
      }
      const s = performance.now();
      await index.idle();
      foldMs = performance.now() - s;
    });
    await index.close();
    const again = make();
    const l0 = performance.now();
    const load = await withStalls(() => again.load());
    const loadMs = performance.now() - l0;
    const k0 = performance.now();
    const keywords = await withStalls(() => again.keywordsReady);
    const keywordsMs = performance.now() - k0;
    const words = ['compute', 'value', 'module', 'step', 'part', 'return', 'number'];
    const times: number[] = [];
    const query = await withStalls(async () => {
      for (let q = 0; q < 40; q++) {
        const text = `${words[q % words.length]} part${q % 4}OfModule${(q * 313) % files} step ${q % 22}`;
        const vector = unit();
        const s = performance.now();
        fuseResults(again.search(vector, 50), again.keywordSearch(text, 50), 50);
        times.push(performance.now() - s);
        await new Promise((res) => setImmediate(res));
      }
    });
    return {
      files: build.result.files,
      chunks: build.result.chunks,
      dim,
      buildSeconds,
      buildStalls: build.stalls,
      buildPeakMB,
      persistMs: { median: median(persist), max: Math.max(...persist) },
      updateMs: {
        median: median(total),
        max: Math.max(...total),
        worst: total.indexOf(Math.max(...total)),
        worstPersistMs: persist[total.indexOf(Math.max(...total))],
      },
      updateStalls: updates.stalls,
      foldMs,
      loadMs,
      loadStalls: load.stalls,
      keywordsMs,
      keywordsStalls: keywords.stalls,
      queryMs: { median: median(times), p95: p95(times) },
      queryStalls: query.stalls,
    };
  } finally {
    for (const i of indexes) await i.close();
    rmSync(root, { recursive: true, force: true });
    if (process.env.MG_KEEP_STORE) console.error(`kept ${store}`);
    else rmSync(store, { recursive: true, force: true });
  }
}
