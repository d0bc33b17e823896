import { closeSync, openSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { nodeFs } from '../../storage/atomicFile';
import { filesAfter, IndexStore, readCommitted, readInto, type LogEntry, type StoredFile } from './store/indexStore';
import { Slicer } from './slices';
import { fileLine, type SnapshotParts } from './snapshot/snapshotJob';
import { runSnapshot, storeKeywords } from './snapshot/snapshotRunner';
import { batchSource, StreamedBuild, vectorOf, type FreshVectors } from './snapshot/streamedBuild';
import type { Worker } from 'node:worker_threads';
import { PathGuard, type WorkspaceFolderPath } from '../../tools/pathGuard';
import { walkWorkspace } from '../../tools/workspaceTools';
import { embeddingText } from './chunker';
import { chunksFrom, chunkTextOf, displayPathOf, indexable, readLimit, SCAN_CONCURRENCY, type IndexedChunk } from './fileChunks';
import { FileReader, READ_BATCH, readHere } from './fileReader';
import { KeywordIndex, type KeywordHit, type KeywordState } from './keywords/keywords';
import { keywordFile, StoredKeywords } from './keywords/keywordStore';
import { VectorIndex } from './vectors/vectorIndex';
import * as l10n from '@vscode/l10n';
import { formatCount } from '../../common/locale';

export type { IndexedChunk } from './fileChunks';

export interface IndexStats {
  files: number;
  chunks: number;
  /** Chunks sent to the embedding model in this run. */
  embedded: number;
  /** Of the chunks that needed a vector: taken from the team store instead of embedded. */
  fromStore: number;
  /** Vectors this run added to the team store. */
  toStore: number;
  /** Why the team store was left out of this run (it went on locally), if it was. */
  storeFailure?: string;
  /** Chunks whose stored embedding was reused. */
  reused: number;
  requests: number;
  skipped: number;
  ms: number;
  /** Of which: walking, reading and chunking the files. */
  scanMs: number;
  /** Of which: waiting for the embeddings (from the first request to the last answer). */
  embedMs: number;
  /** Of which: applying and storing the update (after the embeddings came back). */
  persistMs: number;
  /** Of which: updating the keyword index. */
  keywordsMs: number;
}

/**
 * Vectors shared with a team (`teamStore.ts`): asked for by content hash before anything is
 * embedded, given what had to be embedded. A failure leaves the store out of the rest of the run.
 */
export interface SharedVectors {
  take(hashes: readonly string[]): Promise<{ vectors: Map<string, Float32Array>; unusable: number }>;
  give(hashes: readonly string[], vectors: readonly Float32Array[]): Promise<number>;
}

export type EmbedFn = (texts: string[], signal?: AbortSignal, onDone?: (done: number) => void) => Promise<{ vectors: Float32Array[]; requests: number }>;

export interface SemanticIndexOptions {
  folders: WorkspaceFolderPath[];
  excludes: string[];
  /** Globs of files that hold secrets, besides the built-in list: never read, never embedded. */
  secretFiles?: string[];
  storeDir: string;
  model: string;
  embed: EmbedFn;
  /** A team store to take vectors from and give them to (optional: the index works the same without). */
  shared?: SharedVectors;
  /** The team store failed during a run (that run went on without it). */
  onSharedFailure?: (err: unknown) => void;
  maxFileBytes?: number;
  chunkTokens?: number;
  /** A streamed first build's keyword batch, in chunks, the first one's too (`FIRST_SPILL_CHUNKS`, then `SPILL_CHUNKS`, unless set: tests set it small). */
  keywordSpillChunks?: number;
  onProgress?: (p: { phase: 'scan' | 'embed'; done: number; total: number }) => void;
  /** Vectors up to this many bytes stay in memory; a larger index reads them from its file (default 512 MB). */
  inMemoryBytes?: number;
  /** Where new snapshots are encoded and written: a worker thread (the default) or this thread. */
  snapshots?: 'worker' | 'inline';
  /** The snapshot worker's bundle, when it is not beside this module's (benchmarks run from source). */
  snapshotWorkerFile?: string;
  /** The log is folded into a new snapshot after this many entries (default 1,000), or once a quarter of the rows are dead. */
  maxLogEntries?: number;
  /** A background fold that failed (the index goes on with the current snapshot). */
  onBackgroundError?: (err: unknown) => void;
  /** Called with each snapshot worker as it starts (tests stop one mid-fold). */
  onSnapshotWorker?: (worker: Worker) => void;
  /** Called with a streamed first build's keyword worker as it starts (tests stop it mid-build). */
  onKeywordWorker?: (worker: Worker) => void;
}

export class IndexModelChanged extends Error {}

/** Chunks sent for embedding at once while the scan goes on. */
const WAVE = 1024;
/** Waves the scan may be ahead of the embeddings and the store (see `update`). */
const WAVES_AHEAD = 4;
/** Waves whose vectors are asked of a team store before the wave being stored is done. */
const TAKE_AHEAD = 2;

/** Rows kept free for updates after a load or a compaction (an edit then copies nothing). */
function headroomFor(rows: number): number {
  return Math.ceil(rows * 0.1) + 1024;
}

/** Indexing stopped on a gateway error; what was embedded before it is saved (the next run resumes). */
export class IndexingStopped extends Error {
  constructor(
    override readonly cause: unknown,
    readonly embedded: number,
    readonly total: number,
  ) {
    super(l10n.t('Indexing stopped after {0} of {1} chunks: {2}', formatCount(embedded), formatCount(total), (cause as Error)?.message ?? String(cause)));
    this.name = 'IndexingStopped';
  }
}

/** The dimension of the first vector held in memory (0 when none is). */
function firstDim(fresh: FreshVectors): number {
  for (const v of fresh.values()) if (v instanceof Float32Array) return v.length;
  return 0;
}

/**
 * The workspace's embeddings index. Files are walked with the same ignore rules as the tools
 * (.gitignore, exclude settings, extra globs), chunked, and embedded in batches; a chunk whose
 * hash is already stored is never embedded again, also across restarts. On disk it is a snapshot
 * plus an append log (`indexStore.ts`): an update appends the rows and the files it changed, so a
 * changed file costs in proportion to itself; the log is folded into a new snapshot once a quarter
 * of the rows are dead. Every write is flushed before the record that names it: a crash leaves the
 * last committed state readable.
 */
export class SemanticIndex {
  private guard: PathGuard;
  private readonly store: IndexStore;
  private vectors: VectorIndex | undefined;
  private dim = 0;
  private generation = 0;
  private files = new Map<string, StoredFile>();
  /** The chunk hash of each row, and the row of each hash (dead rows included, for reuse). */
  private rowHashes: string[] = [];
  private rowOf = new Map<string, number>();
  /**
   * The files holding each hash (a row is live while its hash has holders): one file name, or
   * several. Names, not chunk objects: 100,000 chunks cost 100,000 map entries and no more
   * allocations (the chunk is looked up in its file when a search returns it).
   */
  private holders = new Map<string, Holders>();
  private dead = 0;
  private logEntries = 0;
  private vectorFd: number | undefined;
  /** A fold into a new snapshot, running in a worker. */
  private folding: { abort: AbortController; done: Promise<void> } | undefined;
  /** After a failed fold, the next one waits until the log has this many entries. */
  private foldRetryAt = 0;
  /** A first build's generation whose keywords are yet to be stored. */
  private keywordsDue: number | undefined;
  /** The first build's keywords being stored (in a worker; changes go on meanwhile). */
  private keywordSave: { abort: AbortController; done: Promise<void> } | undefined;
  /** Bumped by every load and clear: a keyword restore of an earlier load then leaves the index alone. */
  private loads = 0;
  /** The keyword side of hybrid search, over the same chunks (filled from disk after a load). */
  private keywords = new KeywordIndex<IndexedChunk>();
  /** Settles when the keyword index covers every stored file. */
  keywordsReady: Promise<void> = Promise.resolve();

  constructor(private readonly o: SemanticIndexOptions) {
    this.guard = new PathGuard(o.folders, o.excludes, o.secretFiles);
    this.store = new IndexStore(o.storeDir, (dim) => VectorIndex.codeBytesFor(dim), o.inMemoryBytes);
  }

  get model(): string {
    return this.o.model;
  }

  get size(): { chunks: number; files: number; dim: number } {
    let chunks = 0;
    for (const f of this.files.values()) chunks += f.chunks.length;
    return { chunks, files: this.files.size, dim: this.dim };
  }

  /** Whether a fold into a new snapshot is running (its worker has the next generation's files open). */
  get isFolding(): boolean {
    return this.folding !== undefined;
  }

  /** Each indexed file (as displayed) with the size it had when indexed. */
  indexedFiles(): Map<string, number> {
    return new Map([...this.files].map(([file, f]) => [file, f.size]));
  }

  /** Bytes of memory per indexed vector. */
  get bytesPerChunk(): number {
    return this.vectors?.bytesPerVector ?? 0;
  }

  /**
   * Loads the stored index. `model-changed` means the stored one was built with another model.
   * The reads are asynchronous and the maps are built in slices: a 100,000-chunk index loads
   * without holding the event loop for more than a few milliseconds at a time.
   */
  async load(): Promise<'loaded' | 'empty' | 'model-changed' | 'damaged'> {
    this.loads++;
    await this.cancelBackground();
    this.closeVectorFile();
    let loaded = await this.store.load(headroomFor);
    if (loaded === 'v1') loaded = (await this.migrateV1()) ? await this.store.load(headroomFor) : 'damaged';
    if (loaded === 'v1') loaded = 'damaged';
    if (loaded === 'empty' || loaded === 'damaged') return loaded;
    if (loaded.snapshot.model !== this.o.model) {
      this.store.close();
      return 'model-changed';
    }
    const { snapshot, entries, rows, codes, scales, vectors } = loaded;
    const slices = new Slicer();
    const rowHashes = [...snapshot.rows, ...entries.flatMap((e) => e.add)];
    const rowOf = await mapRows(rowHashes, slices);
    const files = filesAfter({ snapshot, entries });
    const holders = new Map<string, Holders>();
    for (const [file, entry] of files) {
      for (const c of entry.chunks) hold(holders, file, c);
      await slices.maybeYield();
    }
    const index = VectorIndex.fromParts({ dim: snapshot.dim, count: rows, mean: snapshot.mean, codes, alphas: scales, headroom: headroomFor(rows), ...(vectors instanceof Float32Array ? { vectors } : { vectorFile: vectors.fd }) });
    let dead = 0;
    for (let r = 0; r < rows; r++) {
      if (!holders.has(rowHashes[r])) {
        index.remove(r);
        dead++;
      }
    }
    this.dim = snapshot.dim;
    this.generation = snapshot.generation;
    this.vectorFd = vectors instanceof Float32Array ? undefined : vectors.fd;
    this.vectors = index;
    this.rowHashes = rowHashes;
    this.rowOf = rowOf;
    this.files = files;
    this.holders = holders;
    this.dead = dead;
    this.logEntries = entries.length;
    this.foldRetryAt = 0;
    this.keywords.close();
    this.keywords = new KeywordIndex();
    this.keywordsReady = this.restoreKeywords(snapshot, entries);
    return 'loaded';
  }

  /** The previous format (one vectors file and metadata rewritten per update), read once and stored anew. */
  private async migrateV1(): Promise<boolean> {
    const V1 = z.object({ model: z.string(), dim: z.number(), generation: z.number(), rows: z.array(z.string()), files: z.record(z.string(), z.object({ size: z.number(), mtimeMs: z.number(), hashes: z.array(z.string()) })), chunks: z.array(z.object({ file: z.string(), start: z.number(), end: z.number(), hash: z.string() })) });
    const r = V1.safeParse(JSON.parse((await nodeFs.read(join(this.o.storeDir, 'meta.json'))) ?? '{}'));
    if (!r.success) return false;
    const m = r.data;
    const bytes = await readFile(join(this.o.storeDir, `vectors-${m.generation}.f32`)).catch(() => undefined);
    if (!bytes || bytes.length !== m.rows.length * m.dim * 4) return false;
    const files: Record<string, StoredFile> = {};
    for (const [file, f] of Object.entries(m.files)) files[file] = { size: f.size, mtimeMs: f.mtimeMs, chunks: [] };
    for (const c of m.chunks) files[c.file]?.chunks.push([c.start, c.end, c.hash]);
    const floats = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    const index = VectorIndex.fromVectors(floats, m.dim);
    const parts = index.parts();
    const all = new Float32Array(m.rows.length * m.dim);
    for (let i = 0; i < m.rows.length; i++) all.set(index.vector(i), i * m.dim);
    await this.store.writeSnapshot({ model: m.model, dim: m.dim, generation: m.generation + 1, rows: m.rows, files }, (write) => write(all, parts.codes, parts.alphas), () => parts.mean);
    return true;
  }

  private hold(file: string, c: [number, number, string]): void {
    hold(this.holders, file, c);
  }

  /** The chunk of `file` with this hash, as a search result names it. */
  private chunkOf(file: string, hash: string): IndexedChunk | undefined {
    const c = this.files.get(file)?.chunks.find((x) => x[2] === hash);
    return c && { file, start: c[0], end: c[1], hash };
  }

  private closeVectorFile(): void {
    if (this.vectorFd !== undefined) closeSync(this.vectorFd);
    this.vectorFd = undefined;
  }

  /** Lets go of the index: a fold in progress is cancelled, the open files are closed (the stored index stays). */
  async close(): Promise<void> {
    await this.cancelBackground();
    this.keywords.close();
    this.store.close();
    this.closeVectorFile();
  }

  /** Forgets the stored index (a model or dimension change). */
  async clear(): Promise<void> {
    this.loads++;
    await this.cancelBackground();
    this.store.close();
    this.closeVectorFile();
    this.vectors = undefined;
    this.dim = 0;
    this.files.clear();
    this.rowHashes = [];
    this.rowOf.clear();
    this.holders.clear();
    this.dead = 0;
    this.logEntries = 0;
    this.keywords.close();
    this.keywords = new KeywordIndex();
    await rm(this.o.storeDir, { recursive: true, force: true });
  }

  /** Reads, filters and chunks one file; undefined when it is skipped. */
  private async chunksOf(f: { rel: string; abs: string; display: string }, size: number): Promise<(IndexedChunk & { text: string })[] | undefined> {
    if (!this.indexable(f, size)) return undefined;
    return this.chunksFrom(f, await readFile(f.abs));
  }

  private indexable(f: { rel: string }, size: number): boolean {
    return indexable(f.rel, size, this.o.maxFileBytes);
  }

  private chunksFrom(f: { display: string }, bytes: Buffer): (IndexedChunk & { text: string })[] | undefined {
    return chunksFrom(f.display, bytes, this.o.chunkTokens);
  }

  /**
   * Brings the index up to date with the workspace (all files, or only `paths` when given:
   * absolute paths from a file watcher). Unchanged files are not read; unchanged chunks are not
   * embedded. Cancelling keeps what was finished; so does a gateway failure (then it throws
   * `IndexingStopped`, saying how far it got).
   */
  async update(paths?: string[], signal?: AbortSignal, onProgress = this.o.onProgress): Promise<IndexStats> {
    const t0 = Date.now();
    const stats: IndexStats = { files: 0, chunks: 0, embedded: 0, fromStore: 0, toStore: 0, reused: 0, requests: 0, skipped: 0, ms: 0, scanMs: 0, embedMs: 0, persistMs: 0, keywordsMs: 0 };
    /** Files this update replaces (null: removed), with their chunks' texts (none once a streamed build's worker has them). */
    const changed = new Map<string, { entry: StoredFile; texts?: string[] } | null>();
    // Embedding starts while the scan goes on: chunks that need a vector are sent in waves of
    // WAVE, one wave after another (each at the embed function's own concurrency).
    const todo = new Map<string, string>();
    const fresh: FreshVectors = new Map();
    let queued: string[] = [];
    let waves = Promise.resolve();
    let failure: unknown;
    let stopped = false;
    let requests = 0;
    let tEmbed: number | undefined;
    /** Chunks that needed a vector (set once the embeddings are in). */
    let wanted: number | undefined;
    // A first build's snapshot is written in a worker while the embeddings arrive (`streamedBuild.ts`).
    const build = this.vectors
      ? undefined
      : new StreamedBuild({ dir: this.o.storeDir, model: this.o.model, to: this.generation + 1, inMemoryBytes: this.store.inMemoryBytes, mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile, onWorker: this.o.onSnapshotWorker, onKeywordWorker: this.o.onKeywordWorker, spillChunks: this.o.keywordSpillChunks }, fresh);
    // The team store: a failure leaves it out of the rest of this run, and is reported once.
    let sharedFailure: unknown;
    const gifts: Promise<void>[] = [];
    const storeFailed = (err: unknown) => {
      if (sharedFailure !== undefined) return;
      sharedFailure = err;
      stats.storeFailure = (err as Error)?.message ?? String(err);
      this.o.onSharedFailure?.(err);
    };
    // A wave's vectors are asked of the store up to TAKE_AHEAD waves before it is stored (the store
    // answers while earlier waves are embedded and stored; no further, or the host holds them all).
    type Taken = { got: Awaited<ReturnType<SharedVectors['take']>> } | { err: unknown };
    const toTake: (() => void)[] = [];
    let takesAhead = 0;
    const startTakes = () => {
      while (takesAhead < TAKE_AHEAD && toTake.length > 0) {
        takesAhead++;
        toTake.shift()!();
      }
    };
    // Waves sent and not yet stored: the scan waits while more than WAVES_AHEAD are (each holds its
    // chunks' texts; a scan that ran ahead held a whole workspace's, a gigabyte at a million chunks).
    const ahead: Promise<void>[] = [];
    const sendWave = () => {
      if (queued.length === 0) return;
      let wave = queued;
      queued = [];
      const shared = this.o.shared;
      let taking: Promise<Taken> | undefined;
      if (shared && sharedFailure === undefined) {
        const asked = wave;
        taking = new Promise<Taken>((resolve) => toTake.push(() => resolve(shared.take(asked).then((got) => ({ got }), (err: unknown) => ({ err })))));
        startTakes();
      }
      waves = waves.then(async () => {
        if (stopped || signal?.aborted) return;
        tEmbed ??= Date.now();
        onProgress?.({ phase: 'embed', done: fresh.size, total: todo.size });
        if (shared && taking && sharedFailure === undefined) {
          const answer = await taking;
          takesAhead--;
          startTakes();
          if ('err' in answer) storeFailed(answer.err);
          else {
            const got = answer.got;
            if (got.vectors.size > 0) {
              const hits = wave.filter((h) => got.vectors.has(h));
              const vectors = hits.map((h) => got.vectors.get(h)!);
              hits.forEach((h, i) => fresh.set(h, vectors[i]));
              await build?.feedInParts(hits, vectors);
              stats.fromStore += hits.length;
              for (const h of hits) todo.set(h, '');
              wave = wave.filter((h) => !got.vectors.has(h));
              onProgress?.({ phase: 'embed', done: fresh.size, total: todo.size });
            }
          }
        }
        if (wave.length === 0 || stopped || signal?.aborted) return;
        const embeddedBefore = fresh.size;
        try {
          const texts = wave.map((h) => todo.get(h)!);
          // The request holds the texts now: the map keeps only that the hash is on its way (a
          // full build would otherwise hold every embedding text, 100 MB at 100,000 chunks).
          for (const h of wave) todo.set(h, '');
          const r = await this.o.embed(texts, signal, (done) => onProgress?.({ phase: 'embed', done: embeddedBefore + done, total: todo.size }));
          requests += r.requests;
          r.vectors.forEach((v, i) => v && fresh.set(wave[i], v));
          await build?.feedInParts(wave, r.vectors);
          if (shared && sharedFailure === undefined) {
            const kept = r.vectors.flatMap((v, i) => (v ? [[wave[i], v] as const] : []));
            gifts.push(shared.give(kept.map(([h]) => h), kept.map(([, v]) => v)).then((n) => void (stats.toStore += n), storeFailed));
          }
        } catch (err) {
          // Cancelled, or the gateway failed: keep the batches that finished either way.
          stopped = true;
          if (!signal?.aborted) failure = err;
          const partial = (err as { partial?: { vectors: (Float32Array | undefined)[]; requests: number } }).partial;
          partial?.vectors.forEach((v, i) => v && fresh.set(wave[i], v));
          if (partial) await build?.feedInParts(wave, partial.vectors);
          requests += partial?.requests ?? 0;
        }
      });
      const thisWave = waves;
      ahead.push(thisWave);
      void thisWave.finally(() => ahead.splice(ahead.indexOf(thisWave), 1));
    };
    const needVectors = (file: string, entry: StoredFile, texts: string[]) => {
      entry.chunks.forEach(([, , hash], i) => {
        if (this.rowOf.has(hash)) stats.reused++;
        else if (!todo.has(hash)) {
          todo.set(hash, embeddingText(file, texts[i]));
          queued.push(hash);
        }
      });
      if (queued.length >= WAVE) sendWave();
    };
    type Outcome = { kind: 'gone' | 'same' | 'skipped' } | { kind: 'chunks'; entry: StoredFile; texts: string[] };
    // Reading and chunking a file: no shared state touched, so several run at once.
    const withChunks = (s: { size: number; mtimeMs: number }, chunks: (IndexedChunk & { text: string })[]): Outcome => ({ kind: 'chunks', entry: { size: s.size, mtimeMs: s.mtimeMs, chunks: chunks.map((c) => [c.start, c.end, c.hash]) }, texts: chunks.map((c) => c.text) });
    // A full scan reads on a thread of its own (`fileReader.ts`), many files in flight.
    const reader = paths ? undefined : new FileReader();
    const inFlightMax = reader ? READ_BATCH : SCAN_CONCURRENCY;
    // A file not indexed yet: opened, its size read from the open file and its bytes read, with no
    // separate stat (a full build's scan was a fifth stat calls).
    const inspectNew = async (f: { rel: string; abs: string; display: string }): Promise<Outcome> => {
      const limit = readLimit(f.rel, this.o.maxFileBytes);
      const got = reader ? await reader.read(f.abs, limit) : await readHere(f.abs, limit);
      if (got === 'gone' || got === 'skipped') return { kind: got };
      const chunks = this.chunksFrom(f, got.bytes);
      return chunks ? withChunks(got, chunks) : { kind: 'skipped' };
    };
    const inspect = async (f: { rel: string; abs: string; display: string }): Promise<Outcome> => {
      if (!this.files.has(f.display)) return inspectNew(f);
      const s = await stat(f.abs).catch(() => undefined);
      const prev = this.files.get(f.display);
      if (!s || !s.isFile()) return { kind: 'gone' };
      if (prev && prev.size === s.size && prev.mtimeMs === s.mtimeMs) return { kind: 'same' };
      const chunks = await this.chunksOf(f, s.size);
      return chunks ? withChunks(s, chunks) : { kind: 'skipped' };
    };
    // Outcomes are recorded in the walk's order, whatever order they finish in: the rows' order is stable.
    const record = (display: string, o: Outcome) => {
      const prev = this.files.get(display);
      if (o.kind === 'chunks') {
        needVectors(display, o.entry, o.texts);
        // A streamed build's worker indexes the keywords: the host keeps no texts (a gigabyte at a million chunks).
        changed.set(display, build?.texts(display, o.texts, fileLine(display, o.entry)) ? { entry: o.entry } : { entry: o.entry, texts: o.texts });
        stats.files++;
        stats.chunks += o.entry.chunks.length;
      } else if (o.kind === 'same') {
        stats.files++;
        stats.chunks += prev!.chunks.length;
        stats.reused += prev!.chunks.length;
      } else {
        if (o.kind === 'skipped') stats.skipped++;
        if (prev) changed.set(display, null);
      }
    };
    const inFlight: { display: string; outcome: Promise<Outcome> }[] = [];
    const drain = async (keep: number) => {
      while (inFlight.length > keep) {
        const next = inFlight.shift()!;
        record(next.display, await next.outcome);
        // The keyword thread's queue bounded: a newcomer's store answers faster than it tokenises.
        await build?.room();
      }
    };
    try {
      if (paths) {
        for (const abs of paths) {
          const display = this.displayOf(abs);
          if (!display) continue;
          const resolved = await this.guard.resolve(abs).catch(() => undefined);
          if (resolved) record(display, await inspect({ rel: resolved.rel, abs: resolved.abs, display }));
          else if (this.files.has(display)) changed.set(display, null);
        }
      } else {
        const seen = new Set<string>();
        let scanned = 0;
        for await (const f of walkWorkspace(this.guard)) {
          if (signal?.aborted) break;
          const display = this.guard.display(f.folder, f.rel);
          seen.add(display);
          inFlight.push({ display, outcome: inspect({ rel: f.rel, abs: f.abs, display }) });
          await drain(inFlightMax - 1);
          while (ahead.length > WAVES_AHEAD) await ahead[0];
          if (++scanned % 200 === 0) onProgress?.({ phase: 'scan', done: scanned, total: 0 });
        }
        await drain(0);
        await reader?.close();
        if (!signal?.aborted) for (const file of this.files.keys()) if (!seen.has(file)) changed.set(file, null);
      }
      stats.scanMs = Date.now() - t0;
      sendWave();
      await waves;
      await Promise.all(gifts);
      // Only its size is needed from here on (a million hashes held through the storing phase).
      wanted = todo.size;
      todo.clear();
    } catch (err) {
      await reader?.close();
      await build?.abandon();
      build?.removeRowsFile();
      throw err;
    }
    if (tEmbed !== undefined) stats.embedMs = Date.now() - tEmbed;
    stats.requests = requests;
    stats.embedded = fresh.size - stats.fromStore;
    const slices = new Slicer();
    // The stream is taken only for a first build (else the batch build in `apply` reads the rows it wrote from its file).
    // A failure or a cancel does not forfeit it: the files whose rows all arrived are taken from it.
    const streamed = build?.usable && this.vectors === undefined ? build : undefined;
    if (build && !streamed) await build.abandon();
    const dim = streamed?.dim || firstDim(fresh) || this.dim;
    if (this.dim && fresh.size > 0 && dim !== this.dim) {
      await build?.abandon();
      build?.removeRowsFile();
      throw new IndexModelChanged(l10n.t('The embedding dimension changed from {0} to {1}.', this.dim, dim));
    }

    // A fold in progress holds the change back (the keywords being stored do not). Taking it over
    // drops the rows no file held, and a changed file may have counted on one of them (a chunk it
    // takes back, not embedded again): those are embedded now, before the check below.
    while (this.folding) await this.folding.done;
    if (failure === undefined && !signal?.aborted) {
      const lost = new Map<string, string>();
      for (const [file, c] of changed) {
        if (!c?.texts) continue;
        c.entry.chunks.forEach(([, , h], i) => {
          if (!this.rowOf.has(h) && !fresh.has(h)) lost.set(h, embeddingText(file, c.texts![i]));
        });
      }
      if (lost.size > 0) {
        try {
          const r = await this.o.embed([...lost.values()], signal);
          stats.requests += r.requests;
          [...lost.keys()].forEach((h, i) => r.vectors[i] && fresh.set(h, r.vectors[i]));
          stats.embedded = fresh.size - stats.fromStore;
        } catch (err) {
          if (!signal?.aborted) failure = err;
        }
      }
    }
    // A file is replaced only when every chunk has a vector; otherwise it stays at the version
    // indexed before (a new file stays out), and a cancelled or failed run resumes it next time
    // (its size and time differ from the stored ones). Never removed for it: a replacement is
    // all or nothing.
    const dropped: string[] = [];
    for (const [file, c] of changed) {
      if (c && !c.entry.chunks.every(([, , h]) => this.rowOf.has(h) || fresh.has(h))) {
        changed.delete(file);
        dropped.push(file);
      }
      await slices.maybeYield();
    }
    // The keywords are indexed while the rows are stored (a first build's snapshot is encoded in a worker meanwhile);
    // a streamed first build's worker has indexed and stored them itself, unless that failed.
    const tPersist = Date.now();
    // A stream not taken left the rows it wrote in a file, for the batch build; removed once the update has stored them.
    const applied = this.apply(changed, fresh, dim, streamed && { build: streamed, dropped }, build).finally(() => build?.removeRowsFile());
    const stored = applied.then(() => (stats.persistMs = Date.now() - tPersist));
    const tKeywords = Date.now();
    this.keywordsReady = this.keywordsReady.then(async () => {
      if (streamed && (await applied.catch(() => false))) {
        stats.keywordsMs = Date.now() - tKeywords;
        return;
      }
      const slices = new Slicer();
      // Files whose texts went to a stream that was not taken are read again.
      const reread: string[] = [];
      for (const [file, c] of changed) {
        if (!c) this.keywords.removeFile(file);
        else if (!c.texts) reread.push(file);
        else this.keywords.setFile(file, c.entry.chunks.map(([start, end, hash], i) => ({ item: { file, start, end, hash }, text: c.texts![i] })));
        await slices.maybeYield();
      }
      if (reread.length > 0) {
        // Read with the chunks the update stores (`fillKeywords` takes them from the index's files).
        await applied.catch(() => false);
        await this.fillKeywords(reread);
      }
      stats.keywordsMs = Date.now() - tKeywords;
    });
    await Promise.all([stored, this.keywordsReady]);
    if (this.keywordsDue !== undefined) {
      const generation = this.keywordsDue;
      this.keywordsDue = undefined;
      // Exported now (the build's own work), written in the background; changes made meanwhile are carried over to the stored index.
      const abort = new AbortController();
      const exported = await this.exportKeywords(new Slicer()).catch((err: unknown) => void this.o.onBackgroundError?.(err));
      const done = exported ? this.saveKeywords(generation, abort.signal, exported).then(() => undefined) : Promise.resolve();
      this.keywordSave = { abort, done: done.finally(() => (this.keywordSave = this.keywordSave?.abort === abort ? undefined : this.keywordSave)) };
    }
    stats.ms = Date.now() - t0;
    if (failure !== undefined) throw new IndexingStopped(failure, stats.embedded, wanted ?? todo.size);
    return stats;
  }

  /**
   * Applies an update: on disk first (a log entry: its new rows, then the line naming them), then
   * in memory; a new snapshot instead when it is the first build. Once a quarter of the rows are
   * dead or the log is long, the log is folded into a new snapshot in the background (a worker
   * thread); the next update waits for it, searches meanwhile use the current one.
   */
  /** New rows, in a stable order: the changed files' chunks as listed (in a function of its own: its set of a million hashes goes when it returns). */
  private async newRows(changed: Map<string, { entry: StoredFile } | null>, slices: Slicer): Promise<string[]> {
    const added: string[] = [];
    const seen = new Set<string>();
    for (const c of changed.values()) {
      for (const [, , h] of c?.entry.chunks ?? []) {
        if (this.rowOf.has(h) || seen.has(h)) continue;
        seen.add(h);
        added.push(h);
      }
      await slices.maybeYield();
    }
    return added;
  }

  private async apply(changed: Map<string, { entry: StoredFile } | null>, fresh: FreshVectors, dim: number, taken?: { build: StreamedBuild; dropped: string[] }, build?: StreamedBuild): Promise<boolean> {
    const streamed = taken?.build;
    if (changed.size === 0) {
      await streamed?.abandon();
      return false;
    }
    const slices = new Slicer();
    const added = await this.newRows(changed, slices);
    if (!this.vectors) {
      // The first build: every row is new; a worker computes the mean and the codes once.
      this.dim = Math.max(1, dim);
      const headroom = headroomFor(added.length);
      const to = this.generation + 1;
      let parts: (SnapshotParts & { keywords?: unknown }) | undefined;
      // The rows streamed while the embeddings arrived: taken if they are exactly this build's (no file dropped).
      if (streamed) {
        // Its worker has each file's entry from its texts: told only which it leaves out.
        if (streamed.to === to && (await streamed.holds(added, slices))) parts = await streamed.finish({ dropped: taken.dropped, files: [...changed.values()].filter((c) => c !== null).length }, headroom);
        // Otherwise (or its worker died) its rows are read back, and it is stopped before the batch build writes the same generation.
        if (!parts) await streamed.abandon();
        if (streamed.failure) this.o.onBackgroundError?.(new Error(`The search index could not be stored as its embeddings arrived (${streamed.failure}); it is stored after them instead.`));
      }
      if (!parts) {
        // The rows the stream wrote (`build`, taken or not) are read from its file, the others from memory.
        const rowsFile = build?.rowsFile;
        const { vectors, source } = await batchSource(fresh, added, this.dim, rowsFile, () => slices.maybeYield());
        const filesText = await filesTextOf(changed, slices);
        parts = await runSnapshot(
          { kind: 'build', dir: this.o.storeDir, model: this.o.model, dim: this.dim, to, rowsText: added.join(' '), filesText, vectors, ...(source && rowsFile ? { source, rowsFile } : {}), headroom, inMemoryBytes: this.store.inMemoryBytes },
          { mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile, onWorker: this.o.onSnapshotWorker },
        );
      }
      // Every vector is in the snapshot now: the map of them goes before the index builds its own maps.
      fresh.clear();
      this.rowHashes = [];
      this.rowOf.clear();
      await this.applyFiles(changed, undefined, 0, slices);
      await this.adopt(parts, slices);
      if (parts.keywords && (await this.takeStoredKeywords(parts.generation, changed, slices))) return true;
      // Its keywords are stored once the update has indexed them (see `update`).
      this.keywordsDue = parts.generation;
      return false;
    }
    await streamed?.abandon();
    const index = this.vectors;
    const vecs = new Float32Array(added.length * this.dim);
    const codes = new Uint8Array(added.length * index.codeBytes);
    const scales = new Float32Array(added.length);
    for (let i = 0; i < added.length; i++) {
      const v = Float32Array.from(vectorOf(fresh, added[i]));
      const { code, alpha } = index.encode(v);
      vecs.set(v, i * this.dim);
      codes.set(code, i * index.codeBytes);
      scales[i] = alpha;
      if (i % 64 === 0) await slices.maybeYield();
    }
    const rowsBefore = this.rowHashes.length;
    const entry: LogEntry = { rows: rowsBefore + added.length, add: added, files: {} };
    for (const [file, c] of changed) entry.files[file] = c ? c.entry : null;
    await this.store.append(entry, this.dim, vecs, codes, scales);
    this.logEntries++;
    added.forEach((h, i) => {
      const row = index.appendEncoded(vecs.subarray(i * this.dim, (i + 1) * this.dim), codes.subarray(i * index.codeBytes, (i + 1) * index.codeBytes), scales[i]);
      this.rowHashes.push(h);
      this.rowOf.set(h, row);
    });
    await this.applyFiles(changed, index, rowsBefore, slices);
    const due = this.dead > this.rowHashes.length * 0.25 || this.logEntries >= (this.o.maxLogEntries ?? 1000);
    if (due && this.logEntries >= this.foldRetryAt) this.startFold();
    return false;
  }

  /**
   * Takes over the keyword index a streamed first build's worker stored beside snapshot
   * `generation`, if it holds exactly the build's files and chunks; false when it does not read
   * or does not match (the update then indexes the keywords itself).
   */
  private async takeStoredKeywords(generation: number, changed: Map<string, { entry: StoredFile } | null>, slices: Slicer): Promise<boolean> {
    const expected = new Map<string, number>();
    for (const [file, c] of changed) if (c) expected.set(file, c.entry.chunks.length);
    const stored = await StoredKeywords.open(keywordFile(this.o.storeDir, generation), generation, () => slices.maybeYield(), (files) => holdsExactly(files, expected)).catch(() => undefined);
    if (!stored) return false;
    this.useKeywords(new KeywordIndex(stored, this.itemAt));
    return true;
  }

  /** The files' chunks in memory: holders moved, rows that lost their last holder removed, ones that got one back restored. */
  private async applyFiles(changed: Map<string, { entry: StoredFile } | null>, index: VectorIndex | undefined, rowsBefore: number, slices: Slicer): Promise<void> {
    for (const [file, c] of changed) {
      for (const [, , h] of this.files.get(file)?.chunks ?? []) {
        const held = this.holders.get(h);
        if (held === undefined) continue;
        const rest = typeof held === 'string' ? (held === file ? undefined : held) : held.filter((f) => f !== file);
        if (rest === undefined || rest.length === 0) {
          this.holders.delete(h);
          index?.remove(this.rowOf.get(h)!);
          this.dead++;
        } else this.holders.set(h, Array.isArray(rest) && rest.length === 1 ? rest[0] : rest);
      }
      if (!c) {
        this.files.delete(file);
        continue;
      }
      this.files.set(file, c.entry);
      for (const chunk of c.entry.chunks) {
        const revived = !this.holders.has(chunk[2]);
        this.hold(file, chunk);
        const row = this.rowOf.get(chunk[2]);
        if (revived && index && row !== undefined && row < rowsBefore) {
          index.restore(row);
          this.dead--;
        }
      }
      await slices.maybeYield();
    }
  }

  /**
   * Folds the log into a new snapshot of the live rows, in a worker thread (file to file: the
   * worker reads the committed state itself). Until it is taken over, nothing else changes the
   * index; if it fails, the current generation stays in use and the fold is tried again later.
   */
  private startFold(): void {
    const abort = new AbortController();
    const from = this.generation;
    const to = from + 1;
    const live = this.rowHashes.length - this.dead;
    const promise = runSnapshot(
      { kind: 'fold', dir: this.o.storeDir, model: this.o.model, from, to, expectRows: this.rowHashes.length, headroom: headroomFor(live), inMemoryBytes: this.store.inMemoryBytes },
      { signal: abort.signal, mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile, onWorker: this.o.onSnapshotWorker },
    ).then(
      async (parts) => {
        if (abort.signal.aborted) return;
        // The keywords are stored before the snapshot is taken over: the job reads the current
        // generation's keyword file, which taking over removes.
        await this.keywordSave?.done;
        const saved = await this.saveKeywords(parts.generation, abort.signal);
        if (abort.signal.aborted) return;
        await this.adopt(parts, new Slicer());
        // Not stored: the stored index in use goes with the previous generation, so the keywords are read from the files again.
        if (!saved && this.keywords.stored) {
          this.useKeywords(new KeywordIndex());
          this.keywordsReady = this.keywordsReady.then(() => this.fillKeywords([...this.files.keys()]));
        }
      },
      async (err: unknown) => {
        if (abort.signal.aborted) return;
        // A worker that died after its metadata was written leaves the new generation committed.
        const onDisk = await readCommitted(this.o.storeDir, (d) => VectorIndex.codeBytesFor(d)).catch(() => undefined);
        if (onDisk && typeof onDisk !== 'string' && onDisk.snapshot.generation === to) {
          this.folding = undefined;
          await this.load();
          return;
        }
        for (const kind of ['vectors', 'codes', 'scales', 'log']) await rm(join(this.o.storeDir, `${kind}-${to}.${{ vectors: 'f32', codes: 'bin', scales: 'f32', log: 'jsonl' }[kind]}`), { force: true }).catch(() => undefined);
        this.foldRetryAt = this.logEntries + 100;
        this.o.onBackgroundError?.(err);
      },
    );
    this.folding = { abort, done: promise.finally(() => (this.folding = this.folding?.abort === abort ? undefined : this.folding)) };
  }

  /** Waits for the background work in progress: a fold (the next change applies after it), the keywords being stored. */
  async idle(): Promise<void> {
    while (this.folding || this.keywordSave) await (this.folding ?? this.keywordSave)!.done;
  }

  /** Cancels the background work: a fold, the keywords being stored. */
  private async cancelBackground(): Promise<void> {
    for (const job of [this.keywordSave, this.folding]) {
      if (!job) continue;
      job.abort.abort();
      await job.done;
    }
    this.folding = undefined;
    this.keywordSave = undefined;
  }

  /** Takes over a snapshot a job wrote: its rows become the index (swapped at once, the maps built first). */
  private async adopt(parts: SnapshotParts, slices: Slicer): Promise<void> {
    const count = parts.rows.length;
    // The rows, when kept in memory, read from the new file in pieces off the event loop (a read that fails leaves them in the file).
    const vectorPath = join(this.o.storeDir, `vectors-${parts.generation}.f32`);
    let vectors: Float32Array | undefined;
    if (parts.inMemory) {
      vectors = new Float32Array((count + headroomFor(count)) * parts.dim);
      if (!(await readInto(vectorPath, new Uint8Array(vectors.buffer), count * parts.dim * 4))) vectors = undefined;
    }
    // The row map is renumbered in place (no update runs meanwhile, and searches do not read it):
    // a new map of 100,000 hashes grew and rehashed on the host for tens of milliseconds.
    // The rows the snapshot dropped are those no file holds (what the fold itself kept).
    const rowOf = this.rowOf;
    for (let i = 0; i < count; i++) {
      rowOf.set(parts.rows[i], i);
      if (i % 4096 === 0) await slices.maybeYield();
    }
    for (let i = 0; i < this.rowHashes.length; i++) {
      if (!this.holders.has(this.rowHashes[i])) rowOf.delete(this.rowHashes[i]);
      if (i % 4096 === 0) await slices.maybeYield();
    }
    this.closeVectorFile();
    const fd = vectors ? undefined : openSync(vectorPath, 'r');
    this.vectorFd = fd;
    const index = VectorIndex.fromParts({ dim: parts.dim, count, mean: parts.mean, codes: parts.codes, alphas: parts.scales, headroom: headroomFor(count), ...(vectors ? { vectors } : { vectorFile: fd }) });
    // A streamed first build's snapshot may hold rows of files it left out (their embeddings did not
    // all arrive): out of the searches, kept in the map as a load keeps them (the next run reuses them).
    let dead = 0;
    for (let i = 0; i < count; i++) {
      if (!this.holders.has(parts.rows[i])) {
        index.remove(i);
        dead++;
      }
      if (i % 4096 === 0) await slices.maybeYield();
    }
    this.vectors = index;
    this.dim = parts.dim;
    this.generation = parts.generation;
    this.rowHashes = parts.rows;
    this.rowOf = rowOf;
    this.dead = dead;
    this.logEntries = 0;
    this.foldRetryAt = 0;
    await this.store.adopt(parts.generation, count);
  }

  /**
   * Stores the keyword index beside snapshot `generation` (in a worker: the stored index's chunks
   * less the files changed since, and the in-memory ones) and takes it over, its postings on disk.
   * Changes go on meanwhile: the files changed after the export began are carried over from
   * memory when the stored index is taken over (in the keyword index's own queue). A cache: on
   * failure it is reported, the current index stays in use and the next load tokenises the files.
   */
  private async saveKeywords(generation: number, signal: AbortSignal, exported?: ExportedKeywords): Promise<boolean> {
    try {
      // Short slices: this is background work, and a change the user makes meanwhile waits a slice at each of its steps.
      const slices = new Slicer(BACKGROUND_SLICE_MS);
      const e = exported ?? (await this.exportKeywords(slices));
      await storeKeywords(this.o.storeDir, generation, e.state, e.base, { signal, mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile });
      const stored = await StoredKeywords.open(keywordFile(this.o.storeDir, generation), generation, () => slices.maybeYield(), (files) => holdsExactly(files, e.expected));
      if (!stored) throw new Error(`the keyword index stored for generation ${generation} does not match the index`);
      let taken = false;
      const swapping = this.keywordsReady.then(() => {
        if (signal.aborted || this.keywords !== e.source) return stored.close();
        const next = new KeywordIndex(stored, this.itemAt);
        next.copyFiles(e.source, e.changed);
        this.useKeywords(next);
        taken = true;
      });
      this.keywordsReady = swapping;
      await swapping;
      return taken;
    } catch (err) {
      if (!signal.aborted) this.o.onBackgroundError?.(err);
      return false;
    }
  }

  /**
   * The keyword index as numbers, to store (`saveKeywords`). Changes may go on meanwhile: those
   * made from its start are recorded, to be carried over when the stored index is taken over.
   */
  private async exportKeywords(slices: Slicer): Promise<ExportedKeywords> {
    await this.keywordsReady;
    const source = this.keywords;
    const changed = source.record();
    const state = await source.exportState(() => slices.maybeYield());
    // What the stored index will hold: the stored files still current, then the exported ones
    // (taken together with the export's end, no turn of the event loop in between).
    const expected = new Map<string, number>();
    const base = source.stored;
    base?.stored.files.forEach((file, i) => base.masked.has(file) || expected.set(file, base.stored.fileStarts[i + 1] - base.stored.fileStarts[i]));
    for (const f of state.files) expected.set(f.file, f.count);
    return { state, source, expected, changed, ...(base ? { base: { from: base.stored.generation, masked: [...base.masked] } } : {}) };
  }

  /** Takes a keyword index over (searches use it at once; the previous one's file is closed). */
  private useKeywords(keywords: KeywordIndex<IndexedChunk>): void {
    this.keywords.close();
    this.keywords = keywords;
  }

  /** A stored keyword chunk's item: the chunk at that place in its file. */
  private readonly itemAt = (file: string, index: number): IndexedChunk | undefined => {
    const c = this.files.get(file)?.chunks[index];
    return c && { file, start: c[0], end: c[1], hash: c[2] };
  };

  /**
   * The keyword index after a load: the one stored with the snapshot (postings on disk) when it
   * fits the snapshot's files and chunks, with the files the log changed since tokenised again;
   * otherwise every file is read and tokenised.
   */
  private async restoreKeywords(snapshot: { generation: number; files: Record<string, StoredFile> }, entries: LogEntry[]): Promise<void> {
    const load = this.loads;
    const slices = new Slicer();
    const chunkCounts = new Map(Object.entries(snapshot.files).map(([file, f]) => [file, f.chunks.length]));
    const stored = await StoredKeywords.open(keywordFile(this.o.storeDir, snapshot.generation), snapshot.generation, () => slices.maybeYield(), (files) => holdsExactly(files, chunkCounts));
    if (load !== this.loads) return stored?.close();
    if (!stored) {
      await this.fillKeywords([...this.files.keys()]);
      return;
    }
    this.useKeywords(new KeywordIndex(stored, this.itemAt));
    const touched = new Set(entries.flatMap((e) => Object.keys(e.files)));
    for (const file of touched) if (!this.files.has(file)) this.keywords.removeFile(file);
    await this.fillKeywords([...touched].filter((f) => this.files.has(f)));
  }

  /** Reads the stored files' chunks into the keyword index (after a load). */
  private async fillKeywords(files: string[]): Promise<void> {
    const slices = new Slicer();
    for (const file of files) {
      await slices.maybeYield();
      const entry = this.files.get(file);
      if (!entry) continue;
      const p = await this.guard.resolve(file).catch(() => undefined);
      const lines = p ? (await readFile(p.abs, 'utf8').catch(() => '')).split(/\r?\n/) : [];
      this.keywords.setFile(file, entry.chunks.map(([start, end, hash]) => ({ item: { file, start, end, hash }, text: lines.slice(start - 1, end).join('\n') })));
    }
  }

  /** The best chunks by keywords and identifiers (BM25; an identifier's definitions first). */
  keywordSearch(query: string, k: number): KeywordHit<IndexedChunk>[] {
    return this.keywords.search(query, k);
  }

  /** The best chunks for a query vector. */
  search(query: Float32Array, k: number): { chunk: IndexedChunk; score: number }[] {
    if (!this.vectors || this.rowHashes.length === 0) return [];
    return this.vectors
      .search(query, k)
      .map((h) => {
        const hash = this.rowHashes[h.row];
        const held = this.holders.get(hash);
        return { chunk: held === undefined ? undefined : this.chunkOf(typeof held === 'string' ? held : held[0], hash), score: h.score };
      })
      .filter((r): r is { chunk: IndexedChunk; score: number } => !!r.chunk);
  }

  /** The current text of a chunk's lines (read from disk). */
  chunkText(c: IndexedChunk): Promise<string> {
    return chunkTextOf(this.guard, c);
  }

  private displayOf(abs: string): string | undefined {
    return displayPathOf(this.guard, this.o.folders, abs);
  }

  /** Absolute path of a display path. */
  async absolutePath(file: string): Promise<string | undefined> {
    return (await this.guard.resolve(file).catch(() => undefined))?.abs;
  }
}

type Holders = string | string[];

/** The files of a first build, `fileLine` per line (one string crosses to the worker in one copy; the lines go once joined). */
async function filesTextOf(changed: Map<string, { entry: StoredFile } | null>, slices: Slicer): Promise<string> {
  const lines: string[] = [];
  for (const [file, c] of changed) {
    if (c) lines.push(fileLine(file, c.entry));
    await slices.maybeYield();
  }
  return lines.join('\n');
}

/** Whether these files with these chunk counts are exactly the expected ones. */
function holdsExactly(files: [string, number][], expected: ReadonlyMap<string, number>): boolean {
  return files.length === expected.size && files.every(([file, count]) => expected.get(file) === count);
}

/** The keyword index exported to be stored, and what it was exported from (see `exportKeywords`). */
interface ExportedKeywords {
  state: KeywordState;
  source: KeywordIndex<IndexedChunk>;
  base?: { from: number; masked: string[] };
  /** The files and chunk counts the stored index will hold. */
  expected: Map<string, number>;
  /** Files changed since the export began. */
  changed: ReadonlySet<string>;
}

/** The slice of work done in the background (storing the keywords) before other work gets a turn. */
const BACKGROUND_SLICE_MS = 2;

function hold(holders: Map<string, Holders>, file: string, c: [number, number, string]): void {
  const held = holders.get(c[2]);
  if (held === undefined) holders.set(c[2], file);
  else if (typeof held === 'string') {
    if (held !== file) holders.set(c[2], [held, file]);
  } else if (!held.includes(file)) held.push(file);
}

/** The row of each hash, built in slices. */
async function mapRows(rows: string[], slices: Slicer): Promise<Map<string, number>> {
  const map = new Map<string, number>();
  for (let i = 0; i < rows.length; i++) {
    map.set(rows[i], i);
    if (i % 4096 === 0) await slices.maybeYield();
  }
  return map;
}
