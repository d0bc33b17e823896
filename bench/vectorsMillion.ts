/**
 * A monorepo's index on one machine: 1,000,000 rows x 1,024 of the hard shape, built block by
 * block straight to files (float32 rows, then codes and scales), then loaded and queried in a
 * fresh process whose resident memory is what the index costs: codes in memory, the float32 rows
 * read from the file for the last pass. Recall against exact search over all rows.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VectorIndex } from '../src/search/vectorIndex';
import { hardStream } from './vectorData';

export interface MillionBenchResult {
  n: number;
  dim: number;
  shape: string;
  buildSeconds: number;
  fileMB: { vectors: number; codes: number };
  loadMs: number;
  residentMB: number;
  residentBeforeMB: number;
  runs: { candidates: number; widen: number; medianMs: number; recall: number }[];
}

const BLOCK = 20_000;

export function runMillionBench(n = 1_000_000, dim = 1024, shape: 'hard' | 'hard-rotated' = 'hard', queries = 20): MillionBenchResult {
  const dir = mkdtempSync(join(tmpdir(), 'mg-million-'));
  try {
    const t0 = performance.now();
    const block = new Float32Array(BLOCK * dim);
    // Pass 1: the mean of the normalised rows (the codes are signs around it).
    const mean = new Float64Array(dim);
    let stream = hardStream(shape, dim, 11);
    for (let done = 0; done < n; done += BLOCK) {
      const rows = Math.min(BLOCK, n - done);
      stream.fill(block, rows);
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let d = 0; d < dim; d++) s += block[r * dim + d] ** 2;
        const inv = 1 / Math.sqrt(s);
        for (let d = 0; d < dim; d++) mean[d] += block[r * dim + d] * inv;
      }
    }
    const mean32 = Float32Array.from(mean, (v) => v / n);
    // Pass 2: the same rows again, encoded and written; exact top-10 for the queries on the way.
    stream = hardStream(shape, dim, 11);
    const qs = Array.from({ length: queries }, () => new Float32Array(dim));
    const encode = VectorIndex.encoder(dim, mean32);
    const vectorsFd = openSync(join(dir, 'vectors.f32'), 'w');
    const codesFd = openSync(join(dir, 'codes.bin'), 'w');
    const alphasFd = openSync(join(dir, 'alphas.f32'), 'w');
    const exact = qs.map(() => [] as [number, number][]);
    let queriesMade = false;
    for (let done = 0; done < n; done += BLOCK) {
      const rows = Math.min(BLOCK, n - done);
      stream.fill(block, rows);
      if (!queriesMade) {
        for (let i = 0; i < queries; i++) {
          const q = stream.query();
          let s = 0;
          for (let d = 0; d < dim; d++) s += q[d] * q[d];
          for (let d = 0; d < dim; d++) qs[i][d] = q[d] / Math.sqrt(s);
        }
        queriesMade = true;
      }
      const { codes, alphas } = encode(block, rows);
      writeSync(vectorsFd, new Uint8Array(block.buffer, 0, rows * dim * 4));
      writeSync(codesFd, codes);
      writeSync(alphasFd, new Uint8Array(alphas.buffer));
      for (let i = 0; i < queries; i++) {
        const q = qs[i];
        const top = exact[i];
        for (let r = 0; r < rows; r++) {
          let s = 0;
          const o = r * dim;
          for (let d = 0; d < dim; d++) s += block[o + d] * q[d];
          if (top.length < 10 || s > top[top.length - 1][1]) {
            top.push([done + r, s]);
            top.sort((a, b) => b[1] - a[1]);
            if (top.length > 10) top.pop();
          }
        }
      }
    }
    // Flushed before the query process starts: an index at rest, not one the disk is still writing.
    for (const fd of [vectorsFd, codesFd, alphasFd]) {
      fsyncSync(fd);
      closeSync(fd);
    }
    writeFileSync(join(dir, 'mean.f32'), new Uint8Array(mean32.buffer));
    writeFileSync(join(dir, 'queries.json'), JSON.stringify({ n, dim, queries: qs.map((q) => Array.from(q)), exact: exact.map((t) => t.map(([r]) => r)) }));
    const buildSeconds = (performance.now() - t0) / 1000;
    // Load and query in a fresh process: its resident memory is the index's.
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'vectorsMillionQuery.ts'), dir], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (child.status !== 0) throw new Error(`query process failed: ${child.stderr}`);
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Pick<MillionBenchResult, 'loadMs' | 'residentMB' | 'residentBeforeMB' | 'runs'>;
    const size = (f: string) => statSync(join(dir, f)).size / 1e6;
    return { n, dim, shape, buildSeconds, fileMB: { vectors: n * dim * 4e-6, codes: size('codes.bin') + size('alphas.f32') }, ...out };
  } finally {
    if (!process.env.MG_KEEP_MILLION) rmSync(dir, { recursive: true, force: true });
    else console.error(`kept ${dir}`);
  }
}
