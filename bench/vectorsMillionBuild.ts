/**
 * The build side of the million-row benchmark, in its own process (see vectorsMillion.ts): writes
 * the rows, codes, scales, mean and the queries with their exact top 10 (and top 30 with scores,
 * for the hybrid queries) into the folder given.
 */
import { closeSync, fsyncSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { normaliseRows, VectorIndex } from '../src/search/core/vectors/vectorIndex';
import { hardStream } from './vectorData';

const [dir, nText, dimText, shapeText, queriesText] = process.argv.slice(2);
const n = Number(nText);
const dim = Number(dimText);
const shape = shapeText as 'hard' | 'hard-rotated';
const queries = Number(queriesText);
const BLOCK = 20_000;
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
// Pass 2: the same rows again, encoded and written; exact top 30 for the queries on the way.
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
  normaliseRows(block, rows, dim);
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
      if (top.length < 30 || s > top[top.length - 1][1]) {
        top.push([done + r, s]);
        top.sort((a, b) => b[1] - a[1]);
        if (top.length > 30) top.pop();
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
writeFileSync(
  join(dir, 'queries.json'),
  JSON.stringify({ n, dim, queries: qs.map((q) => Array.from(q)), exact: exact.map((t) => t.slice(0, 10).map(([r]) => r)), exact30: exact }),
);
console.log(JSON.stringify({ buildSeconds: (performance.now() - t0) / 1000 }));
