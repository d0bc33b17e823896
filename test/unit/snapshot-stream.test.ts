import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { vectorSet } from '../../bench/vectorData';
import { readCommitted } from '../../src/search/core/store/indexStore';
import { IndexingStopped, SemanticIndex, type EmbedFn } from '../../src/search/core/semanticIndex';
import { MAX_MEAN_DRIFT, SnapshotBuilder } from '../../src/search/core/snapshot/snapshotJob';
import { runSnapshot, startSnapshotStream } from '../../src/search/core/snapshot/snapshotRunner';
import { batchSource, StreamedBuild, type FreshVectors } from '../../src/search/core/snapshot/streamedBuild';
import { normaliseRows, VectorIndex } from '../../src/search/core/vectors/vectorIndex';
import { chunkText } from '../../src/search/core/chunker';
import { hashVector } from './helpers';

/**
 * The first build's snapshot, written while the embeddings arrive: the same snapshot as the batch
 * build when the first rows' mean is the true one (or is replaced by it), a search as good when it
 * is kept, and a build whose stream breaks still lands whole.
 */
const codeBytes = (dim: number) => VectorIndex.codeBytesFor(dim);

/** Rows of a skewed workspace: the first `skewed` lean one way (say, documentation), the rest another. */
function rows(n: number, dim: number, skewed: number, seed: number): Float32Array {
  let s = seed;
  const r = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) for (let d = 0; d < dim; d++) out[i * dim + d] = r() + (d < 8 ? (i < skewed ? 1.5 : -1.5) : 0.3);
  return out;
}

const hashes = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `h${from + i}`);

describe('the first build streamed into its snapshot', function () {
  this.timeout(60_000);
  let base: string;
  beforeEach(() => (base = mkdtempSync(join(tmpdir(), 'mg-stream-'))));
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const files = (dir: string) => ['vectors-1.f32', 'codes-1.bin', 'scales-1.f32'].map((f) => readFileSync(join(dir, f)));
  const batch = async (dir: string, dim: number, data: Float32Array, n: number) =>
    runSnapshot(
      { kind: 'build', dir, model: 'm', dim, to: 1, rowsText: hashes(n).join(' '), filesText: '', vectors: data.slice(), headroom: 10, inMemoryBytes: 1 << 30 },
      { mode: 'inline' },
    );

  it('rows that arrive in one batch make the batch build, byte for byte (in a worker)', async () => {
    const dim = 256;
    const data = rows(900, dim, 300, 1);
    const stream = startSnapshotStream({ kind: 'stream', dir: join(base, 's'), model: 'm', dim, to: 1, inMemoryBytes: 1 << 30 });
    stream.add(hashes(900), data.slice());
    const parts = await stream.finish({ dropped: [], files: 0 }, 10);
    const expected = await batch(join(base, 'b'), dim, data, 900);
    assert.equal(parts.reencoded, false);
    assert.deepEqual(parts.rows, expected.rows);
    assert.deepEqual([...parts.mean], [...expected.mean]);
    assert.deepEqual(files(join(base, 's')), files(join(base, 'b')));
    const stored = await readCommitted(join(base, 's'), codeBytes);
    assert.ok(typeof stored !== 'string' && stored.rows === 900, 'the streamed snapshot is committed');
  });

  it('a first batch whose mean is far from the whole: every row is encoded again around the true mean, as the batch build does', async () => {
    const dim = 256;
    const data = rows(3000, dim, 1000, 2);
    const stream = startSnapshotStream({ kind: 'stream', dir: join(base, 's'), model: 'm', dim, to: 1, inMemoryBytes: 1 << 30 });
    for (let i = 0; i < 3000; i += 1000) stream.add(hashes(1000, i), data.slice(i * dim, (i + 1000) * dim));
    const parts = await stream.finish({ dropped: [], files: 0 }, 10);
    const expected = await batch(join(base, 'b'), dim, data, 3000);
    assert.equal(parts.reencoded, true, 'the skewed first batch is far from the true mean');
    assert.deepEqual([...parts.mean], [...expected.mean]);
    const [vectors, codes, scales] = files(join(base, 's'));
    const [bVectors, bCodes, bScales] = files(join(base, 'b'));
    assert.deepEqual(vectors, bVectors);
    // Read back and normalised once more, a row may differ from the batch build's in its last bit: a code bit in a thousand may flip, the scales agree to 1e-5.
    let differ = 0;
    for (let i = 0; i < codes.length; i++) for (let b = codes[i] ^ bCodes[i]; b; b &= b - 1) differ++;
    assert.ok(differ <= codes.length * 8 * 0.001, `${differ} code bits differ`);
    const f = new Float32Array(scales.buffer, scales.byteOffset, 3000);
    const g = new Float32Array(bScales.buffer, bScales.byteOffset, 3000);
    assert.ok(f.every((x, i) => Math.abs(x - g[i]) <= 1e-5 * Math.abs(g[i])));
    assert.deepEqual(Buffer.from(parts.codes.buffer, parts.codes.byteOffset, codes.length), codes, 'the codes kept in memory are the ones written');
  });

  it('a first batch near the whole keeps its mean: the codes are those around it', async () => {
    const dim = 256;
    const data = rows(3000, dim, 0, 3);
    const builder = await SnapshotBuilder.start({ kind: 'stream', dir: join(base, 's'), model: 'm', dim, to: 1, inMemoryBytes: 1 << 30 });
    for (let i = 0; i < 3000; i += 1000) builder.add(hashes(1000, i), data.slice(i * dim, (i + 1000) * dim));
    const parts = await builder.finish({ dropped: [], files: 0 }, 0);
    assert.equal(parts.reencoded, false);
    const first = await batch(join(base, 'b'), dim, data.subarray(0, 1000 * dim), 1000);
    assert.deepEqual([...parts.mean], [...first.mean], "the first batch's mean is the snapshot's");
    const normalised = data.slice();
    normaliseRows(normalised, 3000, dim);
    const enc = VectorIndex.encoder(dim, first.mean)(normalised, 3000);
    assert.deepEqual(parts.codes, enc.codes);
  });

  it("keeps the files sent with their texts, less the dropped ones, and commits nothing when the count is not the caller's", async () => {
    const dim = 32;
    const data = rows(20, dim, 0, 5);
    const line = (name: string, hash: string) => JSON.stringify([name, 10, 1, `0,10,${hash}`]);
    const start = async (to: number) => {
      const builder = await SnapshotBuilder.start({ kind: 'stream', dir: join(base, 'kept'), model: 'm', dim, to, inMemoryBytes: 1 << 30 });
      builder.add(hashes(20, 0), data.slice());
      await builder.addTexts([
        { file: 'a.ts', texts: ['alpha beta'], line: line('a.ts', hashes(1, 0)[0]) },
        { file: 'b.ts', texts: ['gamma delta'], line: line('b.ts', hashes(1, 1)[0]) },
      ]);
      return builder;
    };
    const wrong = await start(1);
    await assert.rejects(wrong.finish({ dropped: ['b.ts'], files: 2 }, 0), /sent 1 files' texts and keeps 2/);
    wrong.discard();
    assert.equal(existsSync(join(base, 'kept', 'meta.json')), false, 'nothing committed');
    const parts = await (await start(2)).finish({ dropped: ['b.ts'], files: 1 }, 0);
    assert.equal(parts.generation, 2);
    const meta = JSON.parse(readFileSync(join(base, 'kept', 'meta.json'), 'utf8')) as { files: Record<string, unknown> };
    assert.deepEqual(Object.keys(meta.files), ['a.ts'], 'the dropped file is not in the metadata');
  });

  it('lets go of each vector once its row is written; abandoned, it keeps their file for the batch build, which reads them from it without loading them all', async () => {
    const dim = 64;
    const data = rows(3000, dim, 0, 4);
    const fresh: FreshVectors = new Map();
    const build = new StreamedBuild({ dir: base, model: 'm', to: 1, inMemoryBytes: 1 << 30 }, fresh);
    for (let i = 0; i < 3000; i += 1000) {
      const hs = hashes(1000, i);
      const vs = hs.map((_, j) => data.slice((i + j) * dim, (i + j + 1) * dim));
      hs.forEach((h, j) => fresh.set(h, vs[j]));
      build.feed(hs, vs);
    }
    // The worker answers each batch once written; meanwhile the map gives its vectors up.
    for (let t = 0; t < 200 && [...fresh.values()].some((v) => typeof v !== 'number'); t++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      [...fresh.values()].every((v, i) => v === i),
      'every vector is replaced by its row in the stream',
    );
    await build.abandon();
    assert.equal(fresh.size, 3000);
    assert.ok(
      [...fresh.values()].every((v, i) => v === i),
      'the rows stay in the file, not read back',
    );
    assert.deepEqual(readdirSync(base), ['streamed-1.f32'], "the stream's other files are removed; its rows are kept aside");
    // Rows in another order than written, and some only in memory: the batch build reads each from where it is.
    const added = hashes(3000).reverse();
    const extra = rows(5, dim, 0, 9);
    for (let j = 0; j < 5; j++) {
      added.splice(j * 600, 0, `x${j}`);
      fresh.set(`x${j}`, extra.slice(j * dim, (j + 1) * dim));
    }
    const { vectors, source } = await batchSource(fresh, added, dim, build.rowsFile, () => Promise.resolve());
    assert.equal(vectors.length, 5 * dim, 'only the rows memory holds are copied');
    const fromFile = await runSnapshot({
      kind: 'build',
      dir: join(base, 'f'),
      model: 'm',
      dim,
      to: 1,
      rowsText: added.join(' '),
      filesText: '',
      vectors,
      source,
      rowsFile: build.rowsFile,
      headroom: 10,
      inMemoryBytes: 1 << 30,
    });
    build.removeRowsFile();
    assert.deepEqual(readdirSync(base).sort(), ['f'], 'the kept rows are removed once used');
    const all = new Float32Array(added.length * dim);
    added.forEach((h, i) =>
      all.set(h.startsWith('x') ? (fresh.get(h) as Float32Array) : data.subarray(Number(h.slice(1)) * dim, (Number(h.slice(1)) + 1) * dim), i * dim),
    );
    const inMemory = await runSnapshot({
      kind: 'build',
      dir: join(base, 'm'),
      model: 'm',
      dim,
      to: 1,
      rowsText: added.join(' '),
      filesText: '',
      vectors: all,
      headroom: 10,
      inMemoryBytes: 1 << 30,
    });
    assert.deepEqual(fromFile.rows, inMemory.rows);
    // The file's rows were normalised once already: normalising again moves them by rounding at most.
    assert.ok(
      fromFile.mean.every((x, d) => Math.abs(x - inMemory.mean[d]) < 1e-6),
      'the same mean',
    );
    const a = readFileSync(join(base, 'f', 'vectors-1.f32'));
    const b = readFileSync(join(base, 'm', 'vectors-1.f32'));
    const fa = new Float32Array(a.buffer, a.byteOffset, a.length / 4);
    const fb = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
    assert.equal(fa.length, fb.length);
    assert.ok(
      fa.every((x, i) => Math.abs(x - fb[i]) < 1e-6),
      'every row where it belongs, as from memory',
    );
  });

  it('searches as well around a first mean far off the true one (rows in a skewed order, the mean kept)', async () => {
    const dim = 512;
    const n = 20_000;
    const { data, queries } = vectorSet('hard-steep', n, dim, 7, 15);
    // The rows sorted along one direction away from the mean: the first 1,024 are as unlike the whole as rows can be.
    const probe = data.slice(0, dim);
    const order = Array.from({ length: n }, (_, i) => i);
    const along = order.map((i) => data.subarray(i * dim, (i + 1) * dim).reduce((s, x, d) => s + x * probe[d], 0));
    order.sort((a, b) => along[b] - along[a]);
    const sorted = new Float32Array(n * dim);
    order.forEach((r, i) => sorted.set(data.subarray(r * dim, (r + 1) * dim), i * dim));
    const builder = await SnapshotBuilder.start({ kind: 'stream', dir: base, model: 'm', dim, to: 1, inMemoryBytes: 1 << 30, maxMeanDrift: Infinity });
    for (let i = 0; i < n; i += 1024) builder.add(hashes(Math.min(1024, n - i), i), sorted.slice(i * dim, Math.min(n, i + 1024) * dim));
    const parts = await builder.finish({ dropped: [], files: 0 }, 0);
    const truth = await batch(join(base, 'b'), dim, sorted, n);
    let d2 = 0;
    let m2 = 0;
    for (let d = 0; d < dim; d++) {
      d2 += (parts.mean[d] - truth.mean[d]) ** 2;
      m2 += truth.mean[d] ** 2;
    }
    const drift = Math.sqrt(d2 / (1 - m2));
    assert.ok(drift > MAX_MEAN_DRIFT, `the first rows' mean is far off (${drift.toFixed(2)}), past the limit that would encode again`);
    const vectors = new Float32Array(readFileSync(join(base, 'vectors-1.f32')).buffer.slice(0));
    const index = VectorIndex.fromParts({ dim, count: n, mean: parts.mean, codes: parts.codes, alphas: parts.scales, vectors });
    let hits = 0;
    for (const q of queries) {
      const exact = index.search(q, 10, n).map((h) => h.row);
      hits += index.search(q, 10).filter((h) => exact.includes(h.row)).length;
    }
    assert.ok(hits / 150 >= 0.99, `recall ${hits / 150}`);
  });
});

describe('the first build of the index, streamed', function () {
  this.timeout(60_000);
  const DIM = 64;
  const FILES = 1500;
  let base: string;
  let root: string;
  let store: string;
  const opened: SemanticIndex[] = [];
  /** A stand-in embedding model that answers each batch after a pause, so waves overlap the snapshot's work. */
  let lastAnswer = 0;
  const embed: EmbedFn = async (texts) => {
    await new Promise((r) => setTimeout(r, 20));
    lastAnswer = performance.now();
    return {
      vectors: texts.map((t) => hashVector(t, DIM)),
      requests: 1,
    };
  };
  const make = (extra: Partial<ConstructorParameters<typeof SemanticIndex>[0]> = {}) => {
    const index = new SemanticIndex({ folders: [{ name: 'ws', path: root }], excludes: [], storeDir: store, model: 'stand-in', embed, ...extra });
    opened.push(index);
    return index;
  };
  const generations = () => [
    ...new Set(
      readdirSync(store)
        .map((f) => /^(?:vectors|codes|scales|log)-(\d+)\./.exec(f)?.[1])
        .filter(Boolean)
        .map(Number),
    ),
  ];
  const query = async (f: number) => (await embed([`m${f}.ts\n${source(f).trimEnd()}`])).vectors[0];
  const source = (f: number) => `export function handler${f}(input: string): string {\n  return input + '${f}';\n}\n`;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'mg-stream-index-'));
    root = join(base, 'ws');
    store = join(base, 'store');
    mkdirSync(root);
    // One chunk a file: two waves of embeddings (1,024, then the rest).
    for (let f = 0; f < FILES; f++) writeFileSync(join(root, `m${f}.ts`), source(f));
  });
  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    rmSync(base, { recursive: true, force: true });
  });

  it("starts the snapshot's worker while embeddings are still arriving, and the index it writes loads", async () => {
    const started: number[] = [];
    const index = make({ onSnapshotWorker: () => started.push(performance.now()) });
    const stats = await index.update();
    assert.equal(stats.chunks, FILES);
    assert.ok(started.length >= 1 && started[0] < lastAnswer, 'the first worker started before the last embeddings came back');
    assert.equal(index.search(await query(7), 1)[0]?.chunk.file, 'm7.ts');
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal(again.search(await query(1400), 1)[0]?.chunk.file, 'm1400.ts');
    assert.equal((await again.update()).embedded, 0);
  });

  it('a stream whose worker dies mid-build: the batch build writes the snapshot, whole, and it loads', async () => {
    let killed = 0;
    // The first worker (the stream's) is stopped as soon as it runs; the batch build's is left alone.
    const index = make({ onSnapshotWorker: (w: Worker) => void (killed++ === 0 && w.terminate()) });
    const stats = await index.update();
    assert.equal(killed, 2, 'a second worker wrote the snapshot');
    assert.equal(stats.chunks, FILES);
    assert.equal(index.size.chunks, FILES);
    assert.deepEqual(generations(), [1], 'only the committed generation is on disk');
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal(again.search(await query(3), 1)[0]?.chunk.file, 'm3.ts');
    assert.equal((await again.update()).embedded, 0);
  });

  it('a stream whose worker dies after writing rows: they are read back, the batch build writes the same index', async () => {
    let killed = false;
    const errors: unknown[] = [];
    // The stream's worker is stopped once it has written its first wave (the build has let go of those vectors).
    const index = make({
      onBackgroundError: (e) => errors.push(e),
      onSnapshotWorker: (w: Worker) =>
        void (!killed && w.on('message', (m: { type: string }) => m.type === 'rows' && !killed && ((killed = true), void w.terminate()))),
    });
    const stats = await index.update();
    assert.ok(killed);
    assert.equal(errors.length, 1, 'the failure is reported once');
    assert.match((errors[0] as Error).message, /could not be stored as its embeddings arrived \(the snapshot worker stopped/);
    assert.equal(stats.embedded, FILES);
    assert.equal(index.size.chunks, FILES);
    assert.deepEqual(generations(), [1]);
    for (const f of [0, 700, 1023, 1024, 1499]) {
      const hit = index.search(await query(f), 1)[0];
      assert.equal(hit?.chunk.file, `m${f}.ts`);
      assert.ok(hit.score > 0.9999, 'the vector read back is the one embedded');
    }
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal((await again.update()).embedded, 0);
  });

  it("keeps the stream's keyword index on a thread of its own; when that thread dies, the snapshot still comes from the stream and the host indexes the keywords", async () => {
    const snapshotWorkers: Worker[] = [];
    const keywordWorkers: Worker[] = [];
    const index = make({ onSnapshotWorker: (w) => snapshotWorkers.push(w), onKeywordWorker: (w) => void (keywordWorkers.push(w), w.terminate()) });
    const stats = await index.update();
    assert.equal(keywordWorkers.length, 1);
    assert.equal(snapshotWorkers.length, 1, 'no batch build: the stream wrote the snapshot');
    assert.ok(!keywordWorkers.includes(snapshotWorkers[0]), 'two threads');
    assert.equal(stats.chunks, FILES);
    await index.keywordsReady;
    assert.deepEqual(
      index
        .keywordSearch('handler7', 3)
        .filter((h) => h.matched.includes('handler7'))
        .map((h) => h.item.file),
      ['m7.ts'],
      'the host indexed the keywords',
    );
    await index.idle();
    assert.ok(
      readdirSync(store).some((f) => /^keywords-1\.bin$/.test(f)),
      'and stored them beside the snapshot',
    );
    assert.deepEqual(
      readdirSync(store).filter((f) => f.includes('spill') || f.endsWith('.tmp')),
      [],
      'nothing half-written is left',
    );
    const again = make();
    assert.equal(await again.load(), 'loaded');
    await again.keywordsReady;
    assert.deepEqual(
      again
        .keywordSearch('handler1400', 3)
        .filter((h) => h.matched.includes('handler1400'))
        .map((h) => h.item.file),
      ['m1400.ts'],
    );
  });

  it('counts the texts its keyword thread has yet to take in, down to none once it has them, and none once that thread is gone', async () => {
    const dir = join(base, 'behind');
    let indexed = 0;
    const keywordWorkers: Worker[] = [];
    const stream = startSnapshotStream(
      { kind: 'stream', dir, model: 'm', dim: DIM, to: 1, inMemoryBytes: 1 << 30, spillChunks: 50 },
      { onIndexed: () => indexed++, onKeywordWorker: (w) => keywordWorkers.push(w) },
    );
    const texts = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        file: `f${from + i}.ts`,
        texts: [`export const alpha${from + i} = 1;`, 'beta gamma'],
        line: JSON.stringify([`f${from + i}.ts`, 1, 1, '']),
      }));
    stream.addTexts(texts(0, 100));
    assert.equal(stream.textsBehind, 200, 'two chunks a file, none taken in yet');
    while (stream.textsBehind > 0) await new Promise<void>((r) => setTimeout(r, 5));
    assert.ok(indexed >= 1, 'each batch taken in is told');
    assert.ok(
      readdirSync(dir).some((f) => f.includes('.spill-')),
      'its batches are stored as it goes (50 chunks a batch)',
    );
    stream.addTexts(texts(100, 100));
    assert.equal(stream.textsBehind, 200);
    await keywordWorkers[0].terminate();
    while (stream.textsBehind > 0) await new Promise<void>((r) => setTimeout(r, 5));
    await stream.stop();
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.spill-')),
      [],
      'a stopped stream leaves no batch behind',
    );
  });

  it("the keywords the stream's worker stores answer as those the host indexes in the batch way: the same chunks, scores and definitions", async () => {
    // Some files named after others' functions, so that scores and definitions differ between chunks.
    for (let f = 0; f < 40; f++)
      writeFileSync(
        join(root, `use${f}.ts`),
        `import { handler${f} } from './m${f}';\nexport const wrapped${f} = (s: string) => handler${f}(handler${f + 1}(s));\n`,
      );
    const streamed = make();
    await streamed.update();
    // The same build with its keywords stored in batches of 100 chunks (some 13 of them), merged at the end.
    const spilledStore = join(base, 'spilled');
    const spilled = make({ storeDir: spilledStore, keywordSpillChunks: 100 });
    await spilled.update();
    assert.deepEqual(
      readdirSync(spilledStore).filter((f) => f.includes('spill')),
      [],
      'the batches are removed once merged',
    );
    const batchStore = join(base, 'batch');
    let workers = 0;
    const batch = new SemanticIndex({
      folders: [{ name: 'ws', path: root }],
      excludes: [],
      storeDir: batchStore,
      model: 'stand-in',
      embed,
      onSnapshotWorker: (w) => void (workers++ === 0 && w.terminate()),
    });
    opened.push(batch);
    await batch.update();
    await batch.idle();
    assert.equal(workers, 2, 'the second index went the batch way');
    assert.ok(readdirSync(store).some((f) => f.startsWith('keywords-')));
    for (const q of ['handler7', 'wrapped3', 'input string handler12', 'return input', 'handler']) {
      const a = streamed.keywordSearch(q, 20);
      const b = batch.keywordSearch(q, 20);
      const c = spilled.keywordSearch(q, 20);
      assert.ok(a.length > 0, q);
      const shown = (hits: typeof a) => hits.map((h) => [h.item, h.score.toFixed(6), h.defines ?? false, h.matched.join(' ')]);
      assert.deepEqual(shown(a), shown(b), q);
      assert.deepEqual(shown(c), shown(b), `${q} (in batches)`);
    }
  });

  it('a first build whose second wave is refused takes the files whose rows all arrived from its stream; a file the refusal cut is left out, its arrived rows reused by the next run', async () => {
    // Files of a few chunks each.
    for (let f = 0; f < FILES; f++) rmSync(join(root, `m${f}.ts`));
    const three = (f: number) =>
      [0, 1, 2]
        .map(
          (c) =>
            `export function part${c}of${f}(input: string): string {\n${Array.from({ length: 12 }, (_, l) => `  const step${l} = input.length + ${l} * ${c} + ${f};`).join('\n')}\n  return input;\n}\n`,
        )
        .join('\n');
    for (let f = 0; f < 400; f++) writeFileSync(join(root, `t${f}.ts`), three(f));
    let workers = 0;
    let answers = 0;
    // The second wave is cut after 100 vectors (the client's first batches answered, the next refused).
    const PARTIAL = 100;
    const refusing: EmbedFn = async (texts, signal) => {
      if (answers++ === 0) return embed(texts, signal);
      const got = await embed(texts.slice(0, PARTIAL), signal);
      throw Object.assign(new Error('429 Too Many Requests'), { partial: { vectors: got.vectors, requests: 1 } });
    };
    const index = make({ embed: refusing, chunkTokens: 200, onSnapshotWorker: () => void workers++ });
    const err = await index.update().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof IndexingStopped, 'the refusal is reported');
    assert.equal(workers, 1, 'one worker: the stream was taken, no batch build');
    // Every file chunks alike; a wave ends after a whole file, so the first holds `first` files.
    const perFile = chunkText('t0.ts', three(0), { maxTokens: 200 }).length;
    const first = Math.ceil(1024 / perFile);
    assert.ok(PARTIAL % perFile !== 0, `a file is cut by the refusal (${perFile} chunks a file)`);
    const files = index.size.files;
    assert.equal(files, first + Math.floor(PARTIAL / perFile), 'the files whose chunks all arrived');
    assert.equal(index.size.chunks, files * perFile);
    // The cut file's arrived rows are out of the searches: the nearest live row comes first, not
    // nothing (a dead row found first would be filtered out, leaving no hit). Tried for every file
    // left out, since which one was cut depends on the walk's order.
    const indexed = index.indexedFiles();
    const leftOut = Array.from({ length: 400 }, (_, f) => f).filter((f) => !indexed.has(`t${f}.ts`));
    assert.equal(leftOut.length, 400 - files);
    await index.keywordsReady;
    for (const f of leftOut) {
      const probe = (await embed([`t${f}.ts\n${three(f).split('\n\n')[0]}`])).vectors[0];
      const hits = index.search(probe, 1);
      assert.equal(hits.length, 1, `t${f}.ts: a live row first`);
      assert.notEqual(hits[0].chunk.file, `t${f}.ts`);
      assert.ok(!index.keywordSearch(`part0of${f}`, 5).some((h) => h.item.file === `t${f}.ts`), `t${f}.ts is not in the keyword index`);
    }
    await index.close();
    // The next run, the gateway answering again: only what did not arrive is embedded.
    const again = make({ chunkTokens: 200 });
    assert.equal(await again.load(), 'loaded');
    const stats = await again.update();
    assert.equal(stats.embedded, 400 * perFile - first * perFile - PARTIAL, 'the rows that arrived for the cut file are reused');
    assert.equal(again.size.chunks, 400 * perFile);
  });

  it('a first build cancelled after its first wave keeps that wave, leaves no streamed files behind, and loads', async () => {
    const abort = new AbortController();
    const errors: unknown[] = [];
    const index = make({
      onBackgroundError: (e) => errors.push(e),
      embed: (texts, signal) => (lastAnswer > 0 ? (abort.abort(), Promise.reject(new Error('cancelled'))) : embed(texts, signal)),
    });
    lastAnswer = 0;
    const stats = await index.update(undefined, abort.signal);
    assert.equal(stats.embedded, 1024);
    assert.equal(index.size.chunks, 1024);
    assert.deepEqual(errors, [], 'a cancel is not a failure');
    await index.keywordsReady;
    assert.equal(index.keywordSearch('input', 2000).length, 1024, "every chunk kept is in the keyword index (its text read again: the stream's worker had it)");
    assert.deepEqual(generations(), [1]);
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal((await again.update()).embedded, FILES - 1024);
  });
});
