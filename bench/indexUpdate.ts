/**
 * What one changed file costs a large index: a workspace of 12,500 files (8 chunks each, 100,000
 * chunks), 1,024 dimensions, embedded by a local stand-in (random unit vectors: this measures
 * storage, not the gateway). Then ten single-file changes, each stored as an append to the log,
 * timed from the embeddings' return to a durable index (`persistMs`) and end to end; and a load.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SemanticIndex, type EmbedFn } from '../src/search/core/semanticIndex';
import { rng } from './vectorData';

export interface IndexUpdateResult {
  files: number;
  chunks: number;
  dim: number;
  buildSeconds: number;
  persistMs: { median: number; max: number };
  updateMs: { median: number; max: number };
  loadMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runIndexUpdateBench(files = 12_500, dim = 1024): Promise<IndexUpdateResult> {
  const root = mkdtempSync(join(tmpdir(), 'mg-update-bench-'));
  const store = mkdtempSync(join(tmpdir(), 'mg-update-store-'));
  const r = rng(5);
  const embed: EmbedFn = (texts) =>
    Promise.resolve({
      vectors: texts.map(() => {
        const v = Float32Array.from({ length: dim }, () => r() - 0.5);
        let s = 0;
        for (const x of v) s += x * x;
        return v.map((x) => x / Math.sqrt(s));
      }),
      requests: Math.ceil(texts.length / 128),
    });
  const body = (f: number, version: number) =>
    Array.from({ length: 4 }, (_, c) => {
      const lines = Array.from({ length: 22 }, (_, l) => `  const value${c}_${l} = compute(${f}, ${c}, ${l}, ${version}); // step ${l} of part ${c} in module ${f}`);
      return `export function part${c}OfModule${f}(): number {\n${lines.join('\n')}\n  return ${c};\n}\n`;
    }).join('\n');
  try {
    for (let f = 0; f < files; f++) {
      const dir = join(root, `pkg${Math.floor(f / 500)}`);
      if (f % 500 === 0) mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `module${f}.ts`), body(f, 0));
    }
    const make = () => new SemanticIndex({ folders: [{ name: 'bench', path: root }], excludes: [], storeDir: store, model: 'bench', embed, chunkTokens: 300 });
    const index = make();
    await index.load();
    const t0 = performance.now();
    const built = await index.update();
    const buildSeconds = (performance.now() - t0) / 1000;
    const persist: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < 10; i++) {
      const f = (37 + i * 911) % files;
      const path = join(root, `pkg${Math.floor(f / 500)}`, `module${f}.ts`);
      writeFileSync(path, body(f, i + 1));
      const s = performance.now();
      const stats = await index.update([path]);
      total.push(performance.now() - s);
      persist.push(stats.persistMs);
      if (process.env.MG_DEBUG) console.error(i, stats.persistMs, performance.now() - s);
    }
    const l0 = performance.now();
    await make().load();
    const loadMs = performance.now() - l0;
    return {
      files: built.files,
      chunks: built.chunks,
      dim,
      buildSeconds,
      persistMs: { median: median(persist), max: Math.max(...persist) },
      updateMs: { median: median(total), max: Math.max(...total) },
      loadMs,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
  }
}
