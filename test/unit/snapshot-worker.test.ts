import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { SemanticIndex, type EmbedFn } from '../../src/search/core/semanticIndex';
import { runSnapshot, SnapshotJobFailed } from '../../src/search/core/snapshot/snapshotRunner';
import { hashVector } from './helpers';

/**
 * The snapshot worker's protocol: a fold runs in a worker thread, file to file, while the index
 * answers from the current snapshot; cancelling it or killing its worker mid-fold leaves the last
 * good snapshot in use and on disk, and the index still loads.
 */
const DIM = 64;
const FILES = 300;

/** A deterministic stand-in for the embedding model: the text's hash seeds the vector. */
const embed: EmbedFn = (texts) =>
  Promise.resolve({
    vectors: texts.map((t) => hashVector(t, DIM)),
    requests: 1,
  });

const body = (f: number, version: number) =>
  Array.from(
    { length: 4 },
    (_, c) =>
      `export function part${c}OfModule${f}(): number {\n${Array.from({ length: 20 }, (_, l) => `  const v${l} = ${f} * ${c} + ${l} + ${version}; // module ${f} part ${c}`).join('\n')}\n  return ${c};\n}\n`,
  ).join('\n');

describe('search index snapshots in a worker thread', function () {
  this.timeout(60_000);
  let base: string;
  let root: string;
  let store: string;
  const opened: SemanticIndex[] = [];
  const make = (extra: Partial<ConstructorParameters<typeof SemanticIndex>[0]> = {}) => {
    const index = new SemanticIndex({
      folders: [{ name: 'ws', path: root }],
      excludes: [],
      storeDir: store,
      model: 'stand-in',
      embed,
      maxLogEntries: 3,
      ...extra,
    });
    opened.push(index);
    return index;
  };
  const generations = () =>
    [
      ...new Set(
        readdirSync(store)
          .map((f) => /^(?:vectors|codes|scales|log)-(\d+)\./.exec(f)?.[1])
          .filter(Boolean)
          .map(Number),
      ),
    ].sort((a, b) => a - b);
  const metaGeneration = () => (JSON.parse(readFileSync(join(store, 'meta.json'), 'utf8')) as { generation: number }).generation;
  const change = (f: number, version: number) => {
    const path = join(root, `m${f}.ts`);
    writeFileSync(path, body(f, version));
    return path;
  };
  /** Three one-file changes: the third reaches the log's limit and starts a fold. */
  const changesUntilFold = async (index: SemanticIndex, version: number) => {
    for (let i = 0; i < 3; i++) await index.update([change(10 + i, version)]);
  };
  const topFile = (index: SemanticIndex, vector: Float32Array) => index.search(vector, 1)[0]?.chunk.file;
  const queryOf = async (text: string) => (await embed([text])).vectors[0];

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'mg-snapshot-'));
    root = join(base, 'ws');
    store = join(base, 'store');
    mkdirSync(root);
    for (let f = 0; f < FILES; f++) writeFileSync(join(root, `m${f}.ts`), body(f, 0));
    const index = make();
    await index.update();
    await index.close();
  });
  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('a fold is written by a worker thread; the bytes are the ones the calling thread would write', async () => {
    const workers: Worker[] = [];
    const index = make({ onSnapshotWorker: (w) => workers.push(w) });
    assert.equal(await index.load(), 'loaded');
    const before = metaGeneration();
    await changesUntilFold(index, 1);
    assert.equal(workers.length, 1, 'one worker started for the fold');
    await index.idle();
    assert.equal(metaGeneration(), before + 1, 'the new snapshot is committed');
    assert.deepEqual(generations(), [before + 1], 'and the previous generation removed');
    const inWorker = readFileSync(join(store, `codes-${before + 1}.bin`));
    // The same fold on this thread, from the same committed state, writes the same bytes.
    const parts = await runSnapshot(
      { kind: 'fold', dir: store, model: 'stand-in', from: before + 1, to: before + 2, expectRows: index.size.chunks, headroom: 0, inMemoryBytes: 1 << 30 },
      { mode: 'inline' },
    );
    assert.deepEqual(readFileSync(join(store, `codes-${before + 2}.bin`)), inWorker);
    assert.equal(parts.rows.length, index.size.chunks);
    const expected = await queryOf(`m${11}.ts\n${body(11, 1).split('\n\n')[0]}`);
    assert.equal(topFile(index, expected), 'm11.ts');
  });

  it('searches are answered from the current snapshot while a fold runs', async () => {
    let progress = 0;
    let answeredDuringFold = 0;
    const index = make({
      onSnapshotWorker: (w) =>
        w.on('message', (m: { type: string }) => {
          if (m.type !== 'progress') return;
          progress++;
          if (topFile(index, query) === 'm42.ts') answeredDuringFold++;
        }),
    });
    await index.load();
    const query = await queryOf(`m42.ts\n${body(42, 0).split('\n\n')[0]}`);
    await changesUntilFold(index, 1);
    await index.idle();
    assert.ok(progress > 0, 'the worker reported progress');
    assert.equal(answeredDuringFold, progress, 'every search during the fold found the right file');
  });

  it('cancelling a fold (closing the index) stops its worker and keeps the last snapshot; the index loads', async () => {
    let worker: Worker | undefined;
    const index = make({ onSnapshotWorker: (w) => (worker = w) });
    await index.load();
    const before = metaGeneration();
    await changesUntilFold(index, 1);
    assert.ok(worker, 'a fold started');
    const exited = new Promise<number>((resolve) => worker!.once('exit', resolve));
    await index.close();
    await exited;
    assert.equal(metaGeneration(), before, 'the metadata still names the previous snapshot');
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.deepEqual(generations(), [before], 'what the cancelled fold wrote is removed at load');
    assert.equal(again.size.files, FILES);
    assert.equal((await again.update()).embedded, 0, 'the three changes are in the log: nothing to embed again');
  });

  it('a cancelled job rejects at once, before or during its run', async () => {
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(
      runSnapshot({ kind: 'fold', dir: store, model: 'stand-in', from: 1, to: 2, expectRows: 0, headroom: 0, inMemoryBytes: 1 }, { signal: aborted.signal }),
      SnapshotJobFailed,
    );
    const during = new AbortController();
    const job = runSnapshot(
      {
        kind: 'build',
        dir: join(base, 'other'),
        model: 'm',
        dim: 512,
        to: 1,
        rowsText: Array.from({ length: 20_000 }, (_, i) => `h${i}`).join(' '),
        filesText: '',
        vectors: new Float32Array(20_000 * 512).fill(0.5),
        headroom: 0,
        inMemoryBytes: 1 << 30,
      },
      {
        signal: during.signal,
        onWorker: (w) => w.once('message', () => during.abort()),
      },
    );
    await assert.rejects(job, /cancelled/);
  });

  it('a worker that dies mid-fold leaves the last good snapshot: the index goes on, reports it, and still loads', async () => {
    const errors: unknown[] = [];
    const index = make({
      onBackgroundError: (e) => errors.push(e),
      // Killed once it is writing the new generation's rows (the second half of its progress).
      onSnapshotWorker: (w) =>
        w.on('message', (m: { type: string; done: number; total: number }) => m.type === 'progress' && m.done > m.total / 2 && void w.terminate()),
    });
    await index.load();
    const before = metaGeneration();
    await changesUntilFold(index, 1);
    await index.idle();
    assert.equal(errors.length, 1, 'the failure is reported');
    assert.match(String((errors[0] as Error).message), /worker stopped/);
    assert.equal(metaGeneration(), before, 'the previous snapshot is still the committed one');
    assert.deepEqual(generations(), [before], "the dead worker's files are removed");
    const q = await queryOf(`m12.ts\n${body(12, 1).split('\n\n')[0]}`);
    assert.equal(topFile(index, q), 'm12.ts', 'the index still answers, with the changes');
    // It keeps appending to the good generation, and a fresh load sees everything.
    await index.update([change(20, 2)]);
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal(topFile(again, q), 'm12.ts');
    assert.equal((await again.update()).embedded, 0);
  });

  it('a fold refuses a store that is not in the state the index committed', async () => {
    const index = make();
    await index.load();
    const g = metaGeneration();
    await assert.rejects(
      runSnapshot({ kind: 'fold', dir: store, model: 'stand-in', from: g, to: g + 1, expectRows: index.size.chunks + 5, headroom: 0, inMemoryBytes: 1 << 30 }),
      /not \d+ with \d+/,
    );
    assert.deepEqual(generations(), [g]);
  });
});
