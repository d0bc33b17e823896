/**
 * Runs a snapshot job (`snapshotJob.ts`) in a worker thread, so that the seconds of encoding a
 * large index takes never hold the extension host's event loop. One worker per job: it is
 * terminated when the job ends, when the caller cancels (the signal), or when it stops answering;
 * a job whose worker dies rejects, and what it wrote is never taken (the store's metadata still
 * names the previous generation until the caller adopts the new one).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { KeywordCounts } from '../keywords/keywordSpill';
import {
  keywordsJob,
  readCodes,
  runKeywordsJob,
  runSnapshotJob,
  SnapshotBuilder,
  type CodesFrom,
  type SnapshotJob,
  type SnapshotParts,
  type SnapshotProgress,
  type StreamedFileTexts,
  type StreamedFilesKept,
  type StreamMessage,
} from './snapshotJob';
import type { KeywordState } from '../keywords/keywords';

export type WorkerReply =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; parts: SnapshotParts; rowsText: string }
  | { type: 'written'; docs: number; terms: number }
  /** `spare`: the rows' buffer handed back, to be filled again (fresh memory costs a page fault per 4 KB, 20 ms a wave on a virtual machine). */
  | { type: 'rows'; written: number; spare?: Float32Array }
  /** A streamed build's keyword thread took in the texts of this many more chunks. */
  | { type: 'indexed'; chunks: number }
  | { type: 'closed' }
  | { type: 'error'; message: string };

export class SnapshotJobFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotJobFailed';
  }
}

/**
 * A streamed build committed its snapshot, and its codes could not be read back here: no batch
 * build may write the same generation over it (the store names it already). The update fails; the
 * next load reads the committed snapshot.
 */
export class CommittedCodesUnread extends Error {
  constructor(cause: unknown) {
    super(`the search index was stored, and its codes could not be read back (${cause instanceof Error ? cause.message : String(cause)}); reload to use it`);
    this.name = 'CommittedCodesUnread';
  }
}

export interface SnapshotRunOptions {
  signal?: AbortSignal;
  onProgress?: SnapshotProgress;
  /** 'worker' (the default) or 'inline' (on the calling thread: tests that watch the file calls, or no worker available). */
  mode?: 'worker' | 'inline';
  /** The worker's bundle when it is not beside this module (benchmarks run from source and measure the bundle users run). */
  workerFile?: string;
  /** Called with the worker as soon as it runs (tests kill it mid-job). */
  onWorker?: (worker: Worker) => void;
  /** A streamed build: called with the worker of its keyword index as soon as it runs. */
  onKeywordWorker?: (worker: Worker) => void;
  /** A streamed build: how many of the rows sent are written to its vectors file so far. */
  onWritten?: (rows: number) => void;
  /** A streamed build: a rows' buffer the worker is done with. */
  onSpare?: (buffer: Float32Array) => void;
  /** A streamed build: its keyword thread took in more texts, or ended (`SnapshotStream.textsBehind`). */
  onIndexed?: () => void;
}

/**
 * The worker's script: the bundle's `searchWorker.js` beside this module's bundle, or (from
 * source, in tests and benchmarks) the TypeScript module through tsx.
 */
function workerSource(opts: SnapshotRunOptions): { file: string; eval?: true } | undefined {
  if (opts.mode === 'inline') return undefined;
  if (opts.workerFile) return { file: opts.workerFile };
  const bundled = join(__dirname, 'searchWorker.js');
  if (existsSync(bundled)) return { file: bundled };
  const source = join(__dirname, 'snapshotWorker.ts');
  if (existsSync(source)) return { file: `require('tsx/cjs/api').register(); require(${JSON.stringify(source)});`, eval: true };
  return undefined;
}

export async function runSnapshot(job: SnapshotJob, opts: SnapshotRunOptions = {}): Promise<SnapshotParts> {
  if (opts.signal?.aborted) throw new SnapshotJobFailed('cancelled');
  const source = workerSource(opts);
  if (!source) return runSnapshotJob(job, opts.onProgress);
  const transfer = job.kind === 'build' ? [job.vectors.buffer as ArrayBuffer] : [];
  return inWorker(source, job, transfer, opts, (m) => (m.type === 'done' ? { ...m.parts, rows: m.rowsText ? m.rowsText.split(' ') : [] } : undefined));
}

/** A first build's snapshot written while its embeddings arrive (`SnapshotBuilder`, in a worker unless inline). */
export interface SnapshotStream {
  /** The hashes sent so far, in order: row i of the snapshot. */
  readonly rows: readonly string[];
  /** A buffer of at least `length` values for the next rows: one the worker gave back when there is one. */
  buffer(length: number): Float32Array;
  /** Rows in arrival order (the first `hashes.length` rows of `vectors`); `vectors` is handed over (the caller must not use it afterwards). */
  add(hashes: string[], vectors: Float32Array): void;
  /** Files' chunk texts, for the keyword index stored with the snapshot (in a worker of its own). */
  addTexts(files: StreamedFileTexts[]): void;
  /** Chunks whose texts were sent and are not yet in the keyword index (0 once its thread has ended). */
  readonly textsBehind: number;
  /** The snapshot with the files sent with their texts (less those `kept` drops), once every row is written; `keywords` when its keyword index is stored too. */
  finish(kept: StreamedFilesKept, headroom: number): Promise<StreamedSnapshot>;
  /** Stops it: once this resolves nothing writes its files any more (they stay, for the caller to read or remove). */
  stop(): Promise<void>;
  /** Settles once it writes no more rows (it finished, failed, died or was stopped). */
  readonly ended: Promise<void>;
}

export type StreamedSnapshot = SnapshotParts & { reencoded: boolean; keywords?: KeywordCounts };

/** Rows' buffers kept for reuse by a streamed build. */
const MAX_SPARES = 4;

export function startSnapshotStream(start: Extract<StreamMessage, { kind: 'stream' }>, opts: SnapshotRunOptions = {}): SnapshotStream {
  const source = workerSource(opts);
  if (!source) {
    let builder: Promise<SnapshotBuilder> = SnapshotBuilder.start(start);
    let stopped = false;
    const rows: string[] = [];
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    builder.catch(end);
    return {
      rows,
      ended,
      textsBehind: 0,
      buffer: (length) => new Float32Array(length),
      add: (hashes, vectors) => {
        for (const h of hashes) rows.push(h);
        builder = builder.then((b) => {
          if (stopped) return b;
          b.add(hashes, vectors);
          opts.onWritten?.(b.rowCount);
          return b;
        });
        builder.catch(end);
      },
      addTexts: (files) => {
        builder = builder.then(async (b) => {
          if (!stopped) await b.addTexts(files);
          return b;
        });
      },
      finish: async (kept, headroom) => {
        try {
          const b = await builder;
          if (stopped) throw new SnapshotJobFailed('cancelled');
          return await b.finish(kept, headroom);
        } finally {
          end();
        }
      },
      stop: async () => {
        stopped = true;
        end();
        (await builder.catch(() => undefined))?.close();
      },
    };
  }
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  let worker: Worker | undefined;
  // The rows in the order sent, which is the snapshot's: not sent back (splitting 100,000 hashes out of one string held the event loop).
  const rows: string[] = [];
  // Buffers the worker gave back, the largest last (a few: a wave's worth each).
  const spares: Float32Array[] = [];
  const onSpare = (b: Float32Array) => {
    spares.push(b);
    spares.sort((x, y) => x.length - y.length);
    if (spares.length > MAX_SPARES) spares.shift();
  };
  const done = inWorker(
    source,
    { ...start, keywordsApart: true },
    [],
    { ...opts, signal, onSpare, onWorker: (w) => ((worker = w), opts.onWorker?.(w)) },
    (m) => (m.type === 'done' ? { ...(m.parts as StreamedSnapshot), rows } : undefined),
  );
  // Settled by `finish`; a failure before it is not left unhandled.
  done.catch(() => undefined);
  // The keyword index on a thread of its own (`KeywordStream`): the snapshot worker's time was half tokenising.
  let keywordWorker: Worker | undefined;
  const keywordStart: StreamMessage = {
    kind: 'keyword-stream',
    dir: start.dir,
    to: start.to,
    ...(start.spillChunks ? { spillChunks: start.spillChunks } : {}),
  };
  let chunksSent = 0;
  let chunksIndexed = 0;
  let keywordsEnded = false;
  const onIndexed = (chunks: number) => {
    chunksIndexed += chunks;
    opts.onIndexed?.();
  };
  const keywords = inWorker(
    source,
    keywordStart,
    [],
    { signal, onWorker: (w) => ((keywordWorker = w), opts.onKeywordWorker?.(w)) },
    (m) => (m.type === 'written' ? { docs: m.docs, terms: m.terms } : undefined),
    onIndexed,
  );
  keywords
    // A thread that died leaves its batches (one that stops removes its own).
    .catch(() => removeSpills(start.dir, start.to))
    .finally(() => {
      keywordsEnded = true;
      opts.onIndexed?.();
    });
  let textsSent = false;
  return {
    rows,
    get textsBehind() {
      return keywordsEnded ? 0 : chunksSent - chunksIndexed;
    },
    ended: done.then(
      () => undefined,
      () => undefined,
    ),
    buffer: (length) => {
      const at = spares.findIndex((b) => b.length >= length);
      return at === -1 ? new Float32Array(length) : spares.splice(at, 1)[0];
    },
    add: (hashes, vectors) => {
      for (const h of hashes) rows.push(h);
      worker?.postMessage({ kind: 'rows', rowsText: hashes.join(' '), vectors } satisfies StreamMessage, [vectors.buffer as ArrayBuffer]);
    },
    addTexts: (files) => {
      if (files.length === 0) return;
      textsSent = true;
      for (const f of files) chunksSent += f.texts.length;
      // Each thread its part: the texts are copied to one, the files' lines to the other.
      keywordWorker?.postMessage({ kind: 'keyword-texts', files: files.map(({ file, texts }) => ({ file, texts })) } satisfies StreamMessage);
      worker?.postMessage({ kind: 'texts', files: files.map(({ file, line }) => ({ file, texts: [], line })) } satisfies StreamMessage);
    },
    finish: async (kept, headroom) => {
      // The keyword file first: the snapshot's commit names it. Without it the snapshot stands, and the caller indexes the keywords.
      let counts: KeywordCounts | undefined;
      if (textsSent) {
        keywordWorker?.postMessage({ kind: 'keyword-finish', dropped: kept.dropped } satisfies StreamMessage);
        counts = await keywords.catch(() => undefined);
      } else void keywordWorker?.terminate();
      worker?.postMessage({ kind: 'finish', kept, headroom, ...(counts ? { keywords: counts } : {}) } satisfies StreamMessage);
      // The worker leaves the codes in their files; read here, once its thread (and the keyword merge's garbage) is gone.
      const { codesFrom, ...parts } = (await done) as StreamedSnapshot & { codesFrom?: CodesFrom };
      if (!codesFrom) return parts;
      const read = await readCodes(codesFrom).catch((err: unknown) => {
        throw new CommittedCodesUnread(err);
      });
      return { ...parts, ...read };
    },
    stop: async () => {
      // Asked to close its files first (a terminated thread's open files stay open, and Windows then cannot remove them), then stopped.
      for (const w of [worker, keywordWorker]) w?.postMessage({ kind: 'close' } satisfies StreamMessage);
      await Promise.race([Promise.allSettled([done, keywords]), new Promise((r) => setTimeout(r, 2000).unref())]);
      stop.abort();
      await Promise.all([worker?.terminate(), keywordWorker?.terminate()]);
    },
  };
}

/** Removes the keyword batches a streamed build of generation `to` stored (`keywordSpill.ts`). */
function removeSpills(dir: string, to: number): void {
  const prefix = `keywords-${to}.spill-`;
  try {
    for (const name of readdirSync(dir)) if (name.startsWith(prefix)) rmSync(join(dir, name), { force: true });
  } catch {
    // What is left goes with the generation's other files (`IndexStore`).
  }
}

/**
 * Stores the keyword index of generation `to` beside its snapshot (`keywordStore.ts`), in a worker:
 * the stored index of `base.from` without its `masked` files, then the in-memory `delta`.
 * The delta's buffers are handed over (the caller must not use them afterwards).
 */
export async function storeKeywords(
  dir: string,
  to: number,
  delta: KeywordState,
  base: { from: number; masked: Iterable<string> } | undefined,
  opts: SnapshotRunOptions = {},
): Promise<{ docs: number; terms: number }> {
  if (opts.signal?.aborted) throw new SnapshotJobFailed('cancelled');
  const { job, transfer } = keywordsJob(dir, to, delta, base);
  const source = workerSource(opts);
  if (!source) return runKeywordsJob(job);
  return inWorker(source, job, transfer, opts, (m) => (m.type === 'written' ? { docs: m.docs, terms: m.terms } : undefined));
}

/** One job in its own worker: settled by its answer (`result` reads it), its error, its exit, or the signal. */
function inWorker<R>(
  source: { file: string; eval?: true },
  job: unknown,
  transfer: ArrayBuffer[],
  opts: SnapshotRunOptions,
  result: (m: WorkerReply) => R | undefined,
  onIndexed?: (chunks: number) => void,
): Promise<R> {
  // No options of the host's own command line (the worker's script needs none): a loader hook the
  // host was started with (tsx in the benchmarks) made each worker load its bundle through it.
  const worker = new Worker(source.file, { eval: source.eval ?? false, execArgv: [] });
  opts.onWorker?.(worker);
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    // Settled once the thread is gone, so that its memory is given back before the caller takes
    // the result over (a first build's worker held hundreds of megabytes while the host built its maps).
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      worker.terminate().then(fn, fn);
    };
    const onAbort = () => finish(() => reject(new SnapshotJobFailed('cancelled')));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: WorkerReply) => {
      if (m.type === 'progress') opts.onProgress?.(m.done, m.total);
      else if (m.type === 'indexed') onIndexed?.(m.chunks);
      else if (m.type === 'rows') {
        if (m.spare) opts.onSpare?.(m.spare);
        opts.onWritten?.(m.written);
      } else if (m.type === 'error') finish(() => reject(new SnapshotJobFailed(m.message)));
      else {
        const r = result(m);
        finish(() => (r === undefined ? reject(new SnapshotJobFailed(`unexpected answer ${m.type}`)) : resolve(r)));
      }
    });
    worker.on('error', (err) => finish(() => reject(new SnapshotJobFailed(`the snapshot worker failed: ${err.message}`))));
    worker.on('exit', (code) => finish(() => reject(new SnapshotJobFailed(`the snapshot worker stopped (exit code ${code}) before it finished`))));
    worker.postMessage(job, transfer);
  });
}
