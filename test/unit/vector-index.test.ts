import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { VectorIndex } from '../../src/search/core/vectors/vectorIndex';
import { vectorSet } from '../../bench/vectorData';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function dataset(n: number, dim: number, seed = 3) {
  const r = rng(seed);
  const g = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  const centroids = Array.from({ length: 20 }, () => Float32Array.from({ length: dim }, g));
  const data = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = centroids[i % 20];
    for (let d = 0; d < dim; d++) data[i * dim + d] = c[d] + 0.7 * g();
  }
  return { data, query: (i: number) => Float32Array.from(data.subarray(i * dim, (i + 1) * dim), (v) => v + 0.2 * g()) };
}

function bruteForce(data: Float32Array, dim: number, q: Float32Array, k: number): number[] {
  const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const qn = norm(q);
  const scores: [number, number][] = [];
  for (let r = 0; r < data.length / dim; r++) {
    const v = data.subarray(r * dim, (r + 1) * dim);
    scores.push([r, v.reduce((s, x, i) => s + x * q[i], 0) / (norm(v) * qn)]);
  }
  return scores
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([r]) => r);
}

describe('vector index', () => {
  it('finds the same top 10 as brute-force cosine search, with cosine scores', () => {
    const dim = 256;
    const { data, query } = dataset(3000, dim);
    const index = VectorIndex.fromVectors(data, dim);
    let hits = 0;
    for (let i = 0; i < 20; i++) {
      const q = query(i * 37);
      const expected = bruteForce(data, dim, q, 10);
      const got = index.search(q, 10, 300);
      hits += got.filter((h) => expected.includes(h.row)).length;
      assert.ok(got[0].score <= 1.000001 && got[0].score >= got[9].score);
    }
    assert.ok(hits / 200 >= 0.99, `recall ${hits / 200}`);
  });

  for (const shape of ['hard', 'hard-rotated'] as const) {
    it(`finds the exact top 10 of hard queries on anisotropic data (${shape}: low, close similarities)`, () => {
      const dim = 512;
      const n = 20_000;
      const { data, queries } = vectorSet(shape, n, dim, 5, 15);
      const index = VectorIndex.fromVectors(data, dim);
      let hits = 0;
      for (const q of queries) {
        const exact = index.search(q, 10, n).map((h) => h.row);
        const got = index.search(q, 10);
        hits += got.filter((h) => exact.includes(h.row)).length;
        assert.ok(got[0].score < 0.7, 'a hard query: no near-duplicate');
      }
      assert.ok(hits / 150 >= 0.99, `recall ${hits / 150}`);
    });
  }

  it('adds and removes vectors; removed rows are never returned', () => {
    const dim = 64;
    const { data, query } = dataset(500, dim, 9);
    const index = new VectorIndex(dim, 4);
    for (let r = 0; r < 500; r++) index.add(data.subarray(r * dim, (r + 1) * dim));
    index.recentre();
    const q = query(42);
    const first = index.search(q, 5, 50);
    assert.equal(first[0].row, 42);
    index.remove(42);
    const after = index.search(q, 5, 50);
    assert.ok(!after.some((h) => h.row === 42));
    assert.throws(() => index.add(new Float32Array(3)), /3 dimensions, the index 64/);
  });

  it('the WebAssembly rotation encodes as the JavaScript one does (a process where it cannot load)', () => {
    // Codes and scales of the same rows, with the kernel and in a process where it cannot load (the
    // loop); 400 rows of 1,536 dimensions span three of the kernel's blocks; 301 takes the loop
    // (the kernel encodes four values a step).
    const script = `
      const dims = [64, 300, 301, 1536];
      const out = {};
      for (const dim of dims) {
        let s = 7;
        const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) - 0.5;
        const rows = Float32Array.from({ length: 400 * dim }, r);
        const mean = Float32Array.from({ length: dim }, () => r() / 10);
        // Row 3 is zero: it stays zero (no direction to give it).
        rows.fill(0, 3 * dim, 4 * dim);
        const sum = new Float64Array(dim).fill(0.5);
        normaliseRows(rows, 400, dim, sum);
        const { codes, alphas } = VectorIndex.encoder(dim, mean)(rows, 400);
        out[dim] = { codes: Buffer.from(codes).toString('base64'), alphas: Array.from(alphas), rows: Array.from(rows.subarray(0, 8 * dim)), sum: Array.from(sum) };
      }
      console.log(JSON.stringify(out));`;
    const run = (withoutWasm: boolean) => {
      // The module is loaded first (the TypeScript loader itself needs WebAssembly); its kernels load on first use.
      const disable = withoutWasm ? "WebAssembly.Instance = function () { throw new Error('no WebAssembly here'); };" : '';
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `const { VectorIndex, normaliseRows } = require(${JSON.stringify(require.resolve('../../src/search/core/vectors/vectorIndex'))}); ${disable} ${script}`,
        ],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as Record<string, { codes: string; alphas: number[]; rows: number[]; sum: number[] }>;
    };
    const kernel = run(false);
    const loop = run(true);
    for (const dim of ['64', '300', '301', '1536']) {
      const a = Buffer.from(kernel[dim].codes, 'base64');
      const b = Buffer.from(loop[dim].codes, 'base64');
      let differing = 0;
      for (let i = 0; i < a.length; i++) for (let x = a[i] ^ b[i]; x; x &= x - 1) differing++;
      // The two sum in different orders: a value within rounding of zero may take the other sign.
      assert.ok(differing <= a.length * 8 * 0.001, `${dim}-d: ${differing} of ${a.length * 8} bits differ`);
      kernel[dim].alphas.forEach((v, i) => assert.ok(Math.abs(v - loop[dim].alphas[i]) <= 1e-5 * Math.abs(v), `${dim}-d scale ${i}`));
      // Normalised rows and their sums: within a rounding of each other (the squares are summed in another order).
      kernel[dim].rows.forEach((v, i) =>
        assert.ok(Math.abs(v - loop[dim].rows[i]) <= 1e-6 * Math.abs(v) + 1e-12, `${dim}-d value ${i}: ${v} and ${loop[dim].rows[i]}`),
      );
      assert.ok(
        kernel[dim].rows.slice(3 * Number(dim), 4 * Number(dim)).every((v) => v === 0),
        `${dim}-d: the zero row stays zero`,
      );
      const length = Math.hypot(...kernel[dim].rows.slice(0, Number(dim)));
      assert.ok(Math.abs(length - 1) < 1e-5, `${dim}-d: a row's length is ${length}`);
      // Both start from the caller's sums (0.5 each): a kernel that started from zero is 0.5 off.
      kernel[dim].sum.forEach((v, i) => assert.ok(Math.abs(v - loop[dim].sum[i]) <= 1e-5, `${dim}-d sum ${i}: ${v} and ${loop[dim].sum[i]}`));
    }
  });

  it('keeps the committed WebAssembly in step with its source', () => {
    const r = spawnSync(process.execPath, ['scripts/build-wasm.mjs', '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
});
