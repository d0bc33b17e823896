/**
 * A first build's snapshot written while its embeddings arrive (`SnapshotBuilder`, through
 * `startSnapshotStream`): each wave's vectors are sent as soon as they come back, so that once the
 * last wave is in only its rows are left to encode. The files' texts go too, as they are read: the
 * worker tokenises them and stores the keyword index with the snapshot, so the extension host
 * neither tokenises a whole workspace nor holds its keyword index or its texts in memory. Once the
 * worker has written a row, the build lets go of its vector (the map keeps the row number
 * instead): the host does not hold every vector of a large workspace at once (100,000 chunks of
 * 1,536 floats are 614 MB). A failure or a cancel still takes the stream (the files whose rows all
 * arrived). If it cannot be taken (a worker that died, two dimensions), the file of the rows it
 * wrote is kept aside for the batch build (`runSnapshot`) to read them from (`batchSource`), and
 * the texts are read again from the files.
 */
import { rmSync } from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { removeGeneration } from '../store/indexStore';
import type { StreamedFilesKept, StreamedFileTexts } from './snapshotJob';
import { CommittedCodesUnread, startSnapshotStream, type SnapshotRunOptions, type SnapshotStream, type StreamedSnapshot } from './snapshotRunner';
import type { Slicer } from '../slices';

/** A build's new vectors by chunk hash: in memory, or the row of the stream's vectors file that holds it. */
export type FreshVectors = Map<string, Float32Array | number>;

/** Chunks' texts per message to the worker. */
const TEXT_BATCH = 1024;
/**
 * Rows sent but not yet written that make the build wait (`room`): the store answers faster than
 * the worker writes, and without a bound the host held every pulled vector at once (and each
 * wave's buffer was fresh memory, a page fault per 4 KB: 20 ms a wave on a virtual machine).
 */
const MAX_UNWRITTEN = 4096;
/**
 * Chunks whose texts the keyword thread has yet to take in that make the build wait (`room`): it
 * tokenises more slowly than a newcomer's store answers, and its queue held the texts meanwhile
 * (a third of them at 100,000 chunks, gigabytes at ten times that).
 */
const MAX_TEXTS_BEHIND = 16_384;
/** Rows per message to the worker. */
const FEED_PART = 256;

export interface StreamedBuildOptions {
  dir: string;
  model: string;
  /** The generation the snapshot is written as. */
  to: number;
  inMemoryBytes: number;
  mode?: SnapshotRunOptions['mode'];
  workerFile?: string;
  onWorker?: SnapshotRunOptions['onWorker'];
  onKeywordWorker?: SnapshotRunOptions['onKeywordWorker'];
  spillChunks?: number;
}

export class StreamedBuild {
  private readonly sent = new Set<string>();
  private stream: SnapshotStream | undefined;
  /** Rows whose vectors the map no longer holds (the worker has written them). */
  private released = 0;
  private broken = false;
  private abandoned = false;
  /** Files' texts not sent yet (before the stream starts, and between batches). */
  private pendingTexts: StreamedFileTexts[] = [];
  private pendingChunks = 0;
  dim = 0;

  constructor(
    private readonly o: StreamedBuildOptions,
    private readonly fresh: FreshVectors,
  ) {}

  get to(): number {
    return this.o.to;
  }

  /** Whether the stream can still become the snapshot (every wave so far sent whole, one dimension). */
  get usable(): boolean {
    return !this.broken && !this.abandoned;
  }

  /**
   * A wave's vectors, sent in parts of FEED_PART rows with a turn for the event loop between them
   * (a whole wave is 6 MB to copy at 1,536 dimensions), each once the worker has room (`room`).
   */
  async feedInParts(hashes: string[], vectors: (Float32Array | undefined)[]): Promise<void> {
    for (let at = 0; at < hashes.length; at += FEED_PART) {
      await this.room();
      if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.feed(hashes.slice(at, at + FEED_PART), vectors.slice(at, at + FEED_PART));
    }
  }

  /** A wave's vectors, as they came back (`vectors[i]` for `hashes[i]`, undefined when missing). */
  feed(hashes: string[], vectors: (Float32Array | undefined)[]): void {
    const present = hashes.filter((_, i) => vectors[i]);
    if (!this.usable || present.length === 0) return;
    const dim = (this.dim ||= vectors.find((v) => v)!.length);
    if (vectors.some((v) => v && v.length !== dim)) {
      this.broken = true;
      return;
    }
    this.stream ??= startSnapshotStream(
      {
        kind: 'stream',
        dir: this.o.dir,
        model: this.o.model,
        dim,
        to: this.o.to,
        inMemoryBytes: this.o.inMemoryBytes,
        ...(this.o.spillChunks ? { spillChunks: this.o.spillChunks } : {}),
      },
      {
        mode: this.o.mode,
        workerFile: this.o.workerFile,
        onWorker: this.o.onWorker,
        onKeywordWorker: this.o.onKeywordWorker,
        onWritten: (n) => this.release(n),
        onIndexed: () => this.wake(),
      },
    );
    const rows = this.stream.buffer(present.length * dim);
    let at = 0;
    for (const v of vectors) if (v) rows.set(v, at++ * dim);
    this.stream.add(present, rows);
    for (const h of present) this.sent.add(h);
    this.sendTexts();
  }

  /**
   * A file's chunk texts, for the keyword index the worker stores with the snapshot, and its
   * `fileLine` for the snapshot's metadata (sent some 1,000 chunks at a time); false when the
   * stream no longer takes them (the caller keeps them).
   */
  texts(file: string, texts: string[], line: string): boolean {
    if (!this.usable) return false;
    this.pendingTexts.push({ file, texts, line });
    this.pendingChunks += texts.length;
    if (this.pendingChunks >= TEXT_BATCH) this.sendTexts();
    return true;
  }

  private sendTexts(): void {
    if (!this.stream || this.pendingTexts.length === 0) return;
    this.stream.addTexts(this.pendingTexts);
    this.pendingTexts = [];
    this.pendingChunks = 0;
  }

  /**
   * Whether every row of `added` (the build's new rows) was sent. Rows sent for files the build
   * leaves out (a wave refused, a cancel) are in the snapshot too, held by no file: the index
   * drops them from its searches, and the next fold from its files.
   */
  async holds(added: string[], slices: Slicer): Promise<boolean> {
    if (!this.usable || !this.stream || this.sent.size < added.length) return false;
    for (let i = 0; i < added.length; i++) {
      if (!this.sent.has(added[i])) return false;
      if (i % 4096 === 0) await slices.maybeYield();
    }
    return true;
  }

  /** Why the stream's snapshot could not be written (its worker failed or died), once `finish` said undefined. */
  failure: string | undefined;

  /** The snapshot (rows in the order sent), or undefined if the stream failed (then `abandon`). */
  async finish(kept: StreamedFilesKept, headroom: number): Promise<StreamedSnapshot | undefined> {
    if (!this.usable || !this.stream) return undefined;
    this.sendTexts();
    const snapshot = await this.stream.finish(kept, headroom).catch((err: unknown) => {
      if (err instanceof CommittedCodesUnread) throw err;
      this.failure = err instanceof Error ? err.message : String(err);
      return undefined;
    });
    // Taken: the set of what was sent is not needed any more (a million hashes while the index takes the snapshot over).
    if (snapshot) this.sent.clear();
    return snapshot;
  }

  /**
   * The file that holds the rows the stream wrote (numbered in the map), once `abandon` kept it for
   * the batch build to read them from; whoever takes it removes it (`removeRowsFile`).
   */
  rowsFile: string | undefined;

  /**
   * Stops the stream: its worker is waited for, and the file of the rows it wrote is kept aside
   * (`rowsFile`) for the batch build to read them from, rather than read back into memory (4 GB at a
   * million rows of 1,024). Its other files are removed. When the file does not hold every row
   * written (it cannot be read), those rows leave the map: their files are not replaced in this
   * build, and the next one embeds them.
   */
  async abandon(): Promise<void> {
    if (this.abandoned) return;
    this.abandoned = true;
    if (!this.stream) return;
    await this.stream.stop();
    const n = this.released;
    if (n > 0) {
      const written = join(this.o.dir, `vectors-${this.o.to}.f32`);
      const kept = join(this.o.dir, `streamed-${this.o.to}.f32`);
      const whole = await stat(written).then(
        (s) => s.size >= n * this.dim * 4,
        () => false,
      );
      if (
        whole &&
        (await rename(written, kept).then(
          () => true,
          () => false,
        ))
      )
        this.rowsFile = kept;
      else for (let i = 0; i < n; i++) this.fresh.delete(this.stream.rows[i]);
    }
    removeGeneration(this.o.dir, this.o.to);
  }

  removeRowsFile(): void {
    if (this.rowsFile) rmSync(this.rowsFile, { force: true });
    this.rowsFile = undefined;
  }

  /**
   * Resolves once the workers have caught up enough to take more: the rows sent written, the texts
   * sent tokenised (at once when they have, or write no more).
   */
  async room(): Promise<void> {
    while (this.usable && this.stream && (this.sent.size - this.released > MAX_UNWRITTEN || this.stream.textsBehind > MAX_TEXTS_BEHIND)) {
      let woken = false;
      const progress = new Promise<void>((resolve) => this.waiting.push(() => ((woken = true), resolve())));
      await Promise.race([progress, this.stream.ended]);
      // The stream ended without writing them: nothing to wait for.
      if (!woken) return;
    }
  }

  /** Who waits in `room` (the scan and the waves' feed, at once). */
  private waiting: (() => void)[] = [];

  private wake(): void {
    for (const w of this.waiting.splice(0)) w();
  }

  private release(written: number): void {
    if (this.abandoned || !this.stream) return;
    const order = this.stream.rows;
    for (; this.released < written; this.released++) this.fresh.set(order[this.released], this.released);
    this.wake();
  }
}

/** The vector of a new row, which must be in memory (rows a stream wrote are only in a first build, see `batchSource`). */
export function vectorOf(fresh: FreshVectors, hash: string): Float32Array {
  const v = fresh.get(hash);
  if (!(v instanceof Float32Array)) throw new Error(`the vector of ${hash} is not in memory`);
  return v;
}

/**
 * Where a first build's batch snapshot takes each row from (`SnapshotJob` `build`): `source[i]`
 * is the row of `rowsFile` holding row i when it is ≥ 0, else row −(k + 1) of `vectors` (the rows
 * only memory holds, copied end to end). A million rows a stream wrote stay in its file.
 */
export async function batchSource(
  fresh: FreshVectors,
  added: string[],
  dim: number,
  rowsFile: string | undefined,
  yieldNow: () => Promise<void>,
): Promise<{ vectors: Float32Array; source?: Int32Array }> {
  let inMemory = 0;
  for (const h of added) if (fresh.get(h) instanceof Float32Array) inMemory++;
  const vectors = new Float32Array(inMemory * dim);
  const source = inMemory === added.length ? undefined : new Int32Array(added.length);
  let k = 0;
  for (let i = 0; i < added.length; i++) {
    const v = fresh.get(added[i]);
    if (v instanceof Float32Array) {
      vectors.set(v, k * dim);
      if (source) source[i] = -(k + 1);
      k++;
    } else if (typeof v === 'number' && rowsFile && source) source[i] = v;
    else throw new Error(`the vector of ${added[i]} is neither in memory nor in a file`);
    if (i % 256 === 0) await yieldNow();
  }
  return { vectors, ...(source ? { source } : {}) };
}
