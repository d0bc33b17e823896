import { closeSync, openSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { nodeFs } from '../../storage/atomicFile';
import { filesAfter, IndexStore, readCommitted, readInto, type LogEntry, type StoredFile } from './store/indexStore';
import { Slicer } from './slices';
import { fileLine, type SnapshotParts } from './snapshot/snapshotJob';
import { runSnapshot } from './snapshot/snapshotRunner';
import { batchSource, StreamedBuild, vectorOf, type FreshVectors } from './snapshot/streamedBuild';
import { PathGuard } from '../../tools/pathGuard';
import { embeddingText } from './chunker';
import { chunkTextOf, displayPathOf, type IndexedChunk } from './fileChunks';
import { FileReader } from './fileReader';
import { KeywordIndex, type KeywordHit } from './keywords/keywords';
import { VectorIndex } from './vectors/vectorIndex';
import * as l10n from '@vscode/l10n';
import { EmbedWaves } from './embedWaves';
import { IndexKeywords } from './indexKeywords';
import { emptyStats, IndexingStopped, IndexModelChanged, type IndexStats, type SemanticIndexOptions } from './indexTypes';
import { scanChanges, type ChangedFiles } from './updateScan';

export type { IndexedChunk } from './fileChunks';
export { IndexingStopped, IndexModelChanged, type EmbedFn, type IndexStats, type SemanticIndexOptions, type SharedVectors } from './indexTypes';

/** Rows kept free for updates after a load or a compaction (an edit then copies nothing). */
function headroomFor(rows: number): number {
  return Math.ceil(rows * 0.1) + 1024;
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
  /** Bumped by every load and clear: a keyword restore of an earlier load then leaves the index alone. */
  private loads = 0;
  /** The keyword side of hybrid search, over the same chunks (`indexKeywords.ts`). */
  private readonly keywords: IndexKeywords;

  constructor(private readonly o: SemanticIndexOptions) {
    this.guard = new PathGuard(o.folders, o.excludes, o.secretFiles);
    this.store = new IndexStore(o.storeDir, (dim) => VectorIndex.codeBytesFor(dim), o.inMemoryBytes);
    this.keywords = new IndexKeywords(o, { guard: this.guard, files: () => this.files, itemAt: this.itemAt });
  }

  /** Settles when the keyword index covers every stored file. */
  get keywordsReady(): Promise<void> {
    return this.keywords.ready;
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
    const index = VectorIndex.fromParts({
      dim: snapshot.dim,
      count: rows,
      mean: snapshot.mean,
      codes,
      alphas: scales,
      headroom: headroomFor(rows),
      ...(vectors instanceof Float32Array ? { vectors } : { vectorFile: vectors.fd }),
    });
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
    this.keywords.reset();
    const load = this.loads;
    this.keywords.ready = this.keywords.restore(snapshot, entries, () => load === this.loads);
    return 'loaded';
  }

  /** The previous format (one vectors file and metadata rewritten per update), read once and stored anew. */
  private async migrateV1(): Promise<boolean> {
    const V1 = z.object({
      model: z.string(),
      dim: z.number(),
      generation: z.number(),
      rows: z.array(z.string()),
      files: z.record(z.string(), z.object({ size: z.number(), mtimeMs: z.number(), hashes: z.array(z.string()) })),
      chunks: z.array(z.object({ file: z.string(), start: z.number(), end: z.number(), hash: z.string() })),
    });
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
    await this.store.writeSnapshot(
      { model: m.model, dim: m.dim, generation: m.generation + 1, rows: m.rows, files },
      (write) => write(all, parts.codes, parts.alphas),
      () => parts.mean,
    );
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
    this.keywords.index.close();
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
    this.keywords.reset();
    await rm(this.o.storeDir, { recursive: true, force: true });
  }

  /**
   * Brings the index up to date with the workspace (all files, or only `paths` when given:
   * absolute paths from a file watcher). Unchanged files are not read; unchanged chunks are not
   * embedded. Cancelling keeps what was finished; so does a gateway failure (then it throws
   * `IndexingStopped`, saying how far it got).
   */
  async update(paths?: string[], signal?: AbortSignal, onProgress = this.o.onProgress): Promise<IndexStats> {
    const t0 = Date.now();
    const stats = emptyStats();
    /** Files this update replaces (null: removed), with their chunks' texts (none once a streamed build's worker has them). */
    const changed: ChangedFiles = new Map();
    const fresh: FreshVectors = new Map();
    /** Chunks that needed a vector (set once the embeddings are in). */
    let wanted: number | undefined;
    // A first build's snapshot is written in a worker while the embeddings arrive (`streamedBuild.ts`).
    const build = this.vectors
      ? undefined
      : new StreamedBuild(
          {
            dir: this.o.storeDir,
            model: this.o.model,
            to: this.generation + 1,
            inMemoryBytes: this.store.inMemoryBytes,
            mode: this.o.snapshots,
            workerFile: this.o.snapshotWorkerFile,
            onWorker: this.o.onSnapshotWorker,
            onKeywordWorker: this.o.onKeywordWorker,
            spillChunks: this.o.keywordSpillChunks,
          },
          fresh,
        );
    // Embedding starts while the scan goes on, in waves (`embedWaves.ts`; the team store asked first).
    const waves = new EmbedWaves(this.o, { fresh, build, stats, signal, onProgress, rowOf: () => this.rowOf });
    // A full scan reads on a thread of its own (`fileReader.ts`), many files in flight.
    const reader = paths ? undefined : new FileReader();
    try {
      await scanChanges(
        { guard: this.guard, files: () => this.files, displayOf: (abs) => this.displayOf(abs), o: this.o },
        { paths, signal, onProgress, reader, build, waves, changed, stats },
      );
      stats.scanMs = Date.now() - t0;
      await waves.finish();
      // Only its size is needed from here on (a million hashes held through the storing phase).
      wanted = waves.todo.size;
      waves.todo.clear();
    } catch (err) {
      await reader?.close();
      await build?.abandon();
      build?.removeRowsFile();
      throw err;
    }
    if (waves.tEmbed !== undefined) stats.embedMs = Date.now() - waves.tEmbed;
    stats.requests = waves.requests;
    stats.embedded = fresh.size - stats.fromStore;
    let failure = waves.failure;
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
    if (failure === undefined && !signal?.aborted) failure = await this.embedLost(changed, fresh, signal, stats);
    // A file is replaced only when every chunk has a vector; otherwise it stays at the version
    // indexed before (a new file stays out), and a cancelled or failed run resumes it next time
    // (its size and time differ from the stored ones). Never removed for it: a replacement is
    // all or nothing.
    const dropped = await this.dropUnembedded(changed, fresh, slices);
    // The keywords are indexed while the rows are stored (a first build's snapshot is encoded in a worker meanwhile);
    // a streamed first build's worker has indexed and stored them itself, unless that failed.
    const tPersist = Date.now();
    // A stream not taken left the rows it wrote in a file, for the batch build; removed once the update has stored them.
    const applied = this.apply(changed, fresh, dim, streamed && { build: streamed, dropped }, build).finally(() => build?.removeRowsFile());
    const stored = applied.then(() => (stats.persistMs = Date.now() - tPersist));
    this.keywords.indexChanges(changed, applied, streamed !== undefined, stats);
    await Promise.all([stored, this.keywords.ready]);
    if (this.keywords.due !== undefined) await this.keywords.storeDue();
    stats.ms = Date.now() - t0;
    if (failure !== undefined) throw new IndexingStopped(failure, stats.embedded, wanted ?? waves.todo.size);
    return stats;
  }

  /**
   * Embeds the changed files' chunks whose vectors neither the index nor this update holds (see
   * `update`); the gateway's failure, if it failed (a cancel is none).
   */
  private async embedLost(changed: ChangedFiles, fresh: FreshVectors, signal: AbortSignal | undefined, stats: IndexStats): Promise<unknown> {
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
        if (!signal?.aborted) return err;
      }
    }
    return undefined;
  }

  /** Takes out of `changed` each file some chunk of which has no vector, and names them. */
  private async dropUnembedded(changed: ChangedFiles, fresh: FreshVectors, slices: Slicer): Promise<string[]> {
    const dropped: string[] = [];
    for (const [file, c] of changed) {
      if (c && !c.entry.chunks.every(([, , h]) => this.rowOf.has(h) || fresh.has(h))) {
        changed.delete(file);
        dropped.push(file);
      }
      await slices.maybeYield();
    }
    return dropped;
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

  private async apply(
    changed: Map<string, { entry: StoredFile } | null>,
    fresh: FreshVectors,
    dim: number,
    taken?: { build: StreamedBuild; dropped: string[] },
    build?: StreamedBuild,
  ): Promise<boolean> {
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
        if (streamed.to === to && (await streamed.holds(added, slices)))
          parts = await streamed.finish({ dropped: taken.dropped, files: [...changed.values()].filter((c) => c !== null).length }, headroom);
        // Otherwise (or its worker died) its rows are read back, and it is stopped before the batch build writes the same generation.
        if (!parts) await streamed.abandon();
        if (streamed.failure)
          this.o.onBackgroundError?.(
            new Error(`The search index could not be stored as its embeddings arrived (${streamed.failure}); it is stored after them instead.`),
          );
      }
      if (!parts) {
        // The rows the stream wrote (`build`, taken or not) are read from its file, the others from memory.
        const rowsFile = build?.rowsFile;
        const { vectors, source } = await batchSource(fresh, added, this.dim, rowsFile, () => slices.maybeYield());
        const filesText = await filesTextOf(changed, slices);
        parts = await runSnapshot(
          {
            kind: 'build',
            dir: this.o.storeDir,
            model: this.o.model,
            dim: this.dim,
            to,
            rowsText: added.join(' '),
            filesText,
            vectors,
            ...(source && rowsFile ? { source, rowsFile } : {}),
            headroom,
            inMemoryBytes: this.store.inMemoryBytes,
          },
          { mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile, onWorker: this.o.onSnapshotWorker },
        );
      }
      // Every vector is in the snapshot now: the map of them goes before the index builds its own maps.
      fresh.clear();
      this.rowHashes = [];
      this.rowOf.clear();
      await this.applyFiles(changed, undefined, 0, slices);
      await this.adopt(parts, slices);
      if (parts.keywords && (await this.keywords.takeStored(parts.generation, changed, slices))) return true;
      // Its keywords are stored once the update has indexed them (see `update`).
      this.keywords.due = parts.generation;
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
      const row = index.appendEncoded(
        vecs.subarray(i * this.dim, (i + 1) * this.dim),
        codes.subarray(i * index.codeBytes, (i + 1) * index.codeBytes),
        scales[i],
      );
      this.rowHashes.push(h);
      this.rowOf.set(h, row);
    });
    await this.applyFiles(changed, index, rowsBefore, slices);
    const due = this.dead > this.rowHashes.length * 0.25 || this.logEntries >= (this.o.maxLogEntries ?? 1000);
    if (due && this.logEntries >= this.foldRetryAt) this.startFold();
    return false;
  }

  /** The files' chunks in memory: holders moved, rows that lost their last holder removed, ones that got one back restored. */
  private async applyFiles(
    changed: Map<string, { entry: StoredFile } | null>,
    index: VectorIndex | undefined,
    rowsBefore: number,
    slices: Slicer,
  ): Promise<void> {
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
      {
        kind: 'fold',
        dir: this.o.storeDir,
        model: this.o.model,
        from,
        to,
        expectRows: this.rowHashes.length,
        headroom: headroomFor(live),
        inMemoryBytes: this.store.inMemoryBytes,
      },
      { signal: abort.signal, mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile, onWorker: this.o.onSnapshotWorker },
    ).then(
      async (parts) => {
        if (abort.signal.aborted) return;
        // The keywords are stored before the snapshot is taken over: the job reads the current
        // generation's keyword file, which taking over removes.
        await this.keywords.saving?.done;
        const saved = await this.keywords.save(parts.generation, abort.signal);
        if (abort.signal.aborted) return;
        await this.adopt(parts, new Slicer());
        // Not stored: the stored index in use goes with the previous generation, so the keywords are read from the files again.
        if (!saved && this.keywords.index.stored) {
          this.keywords.use(new KeywordIndex());
          this.keywords.ready = this.keywords.ready.then(() => this.keywords.fill([...this.files.keys()]));
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
        for (const kind of ['vectors', 'codes', 'scales', 'log'])
          await rm(join(this.o.storeDir, `${kind}-${to}.${{ vectors: 'f32', codes: 'bin', scales: 'f32', log: 'jsonl' }[kind]}`), { force: true }).catch(
            () => undefined,
          );
        this.foldRetryAt = this.logEntries + 100;
        this.o.onBackgroundError?.(err);
      },
    );
    this.folding = { abort, done: promise.finally(() => (this.folding = this.folding?.abort === abort ? undefined : this.folding)) };
  }

  /** Waits for the background work in progress: a fold (the next change applies after it), the keywords being stored. */
  async idle(): Promise<void> {
    while (this.folding || this.keywords.saving) await (this.folding ?? this.keywords.saving)!.done;
  }

  /** Cancels the background work: a fold, the keywords being stored. */
  private async cancelBackground(): Promise<void> {
    for (const job of [this.keywords.saving, this.folding]) {
      if (!job) continue;
      job.abort.abort();
      await job.done;
    }
    this.folding = undefined;
    this.keywords.saving = undefined;
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
    const index = VectorIndex.fromParts({
      dim: parts.dim,
      count,
      mean: parts.mean,
      codes: parts.codes,
      alphas: parts.scales,
      headroom: headroomFor(count),
      ...(vectors ? { vectors } : { vectorFile: fd }),
    });
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

  /** A stored keyword chunk's item: the chunk at that place in its file. */
  private readonly itemAt = (file: string, index: number): IndexedChunk | undefined => {
    const c = this.files.get(file)?.chunks[index];
    return c && { file, start: c[0], end: c[1], hash: c[2] };
  };

  /** The best chunks by keywords and identifiers (BM25; an identifier's definitions first). */
  keywordSearch(query: string, k: number): KeywordHit<IndexedChunk>[] {
    return this.keywords.index.search(query, k);
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
