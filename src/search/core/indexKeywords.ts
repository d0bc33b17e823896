import { readFile } from 'node:fs/promises';
import type { PathGuard } from '../../tools/pathGuard';
import type { IndexedChunk } from './fileChunks';
import type { IndexStats, SemanticIndexOptions } from './indexTypes';
import { KeywordIndex, type KeywordState } from './keywords/keywords';
import { keywordFile, StoredKeywords } from './keywords/keywordStore';
import { Slicer } from './slices';
import { storeKeywords } from './snapshot/snapshotRunner';
import type { LogEntry, StoredFile } from './store/indexStore';
import type { ChangedFiles } from './updateScan';

/** What the keyword side reads of the semantic index. */
export interface KeywordsOfIndex {
  guard: PathGuard;
  /** The files indexed now, each with its chunks. */
  files: () => ReadonlyMap<string, StoredFile>;
  /** A stored keyword chunk's item: the chunk at that place in its file. */
  itemAt: (file: string, index: number) => IndexedChunk | undefined;
}

/**
 * The semantic index's keyword side (hybrid search's BM25 over the same chunks): the in-memory
 * index over the one stored beside the snapshot, filled from disk after a load, kept up with each
 * update, and stored beside a new snapshot in the background.
 */
export class IndexKeywords {
  /** The keyword side of hybrid search, over the same chunks (filled from disk after a load). */
  index = new KeywordIndex<IndexedChunk>();
  /** Settles when the keyword index covers every stored file. */
  ready: Promise<void> = Promise.resolve();
  /** A first build's generation whose keywords are yet to be stored. */
  due: number | undefined;
  /** The first build's keywords being stored (in a worker; changes go on meanwhile). */
  saving: { abort: AbortController; done: Promise<void> } | undefined;

  constructor(
    private readonly o: SemanticIndexOptions,
    private readonly of: KeywordsOfIndex,
  ) {}

  /** Starts again from an empty index (the previous one's file is closed). */
  reset(): void {
    this.index.close();
    this.index = new KeywordIndex();
  }

  /**
   * An update's changed files into the keyword index, once the index is ready (`applied`: the
   * update stored, true when a streamed first build's worker indexed and stored them itself).
   */
  indexChanges(changed: ChangedFiles, applied: Promise<boolean>, streamed: boolean, stats: IndexStats): void {
    const tKeywords = Date.now();
    this.ready = this.ready.then(async () => {
      if (streamed && (await applied.catch(() => false))) {
        stats.keywordsMs = Date.now() - tKeywords;
        return;
      }
      const slices = new Slicer();
      // Files whose texts went to a stream that was not taken are read again.
      const reread: string[] = [];
      for (const [file, c] of changed) {
        if (!c) this.index.removeFile(file);
        else if (!c.texts) reread.push(file);
        else
          this.index.setFile(
            file,
            c.entry.chunks.map(([start, end, hash], i) => ({ item: { file, start, end, hash }, text: c.texts![i] })),
          );
        await slices.maybeYield();
      }
      if (reread.length > 0) {
        // Read with the chunks the update stores (`fill` takes them from the index's files).
        await applied.catch(() => false);
        await this.fill(reread);
      }
      stats.keywordsMs = Date.now() - tKeywords;
    });
  }

  /** A first build's keywords, once indexed: exported now (the build's own work), written in the background. */
  async storeDue(): Promise<void> {
    if (this.due === undefined) return;
    const generation = this.due;
    this.due = undefined;
    // Changes made meanwhile are carried over to the stored index.
    const abort = new AbortController();
    const exported = await this.export(new Slicer()).catch((err: unknown) => void this.o.onBackgroundError?.(err));
    const done = exported ? this.save(generation, abort.signal, exported).then(() => undefined) : Promise.resolve();
    this.saving = { abort, done: done.finally(() => (this.saving = this.saving?.abort === abort ? undefined : this.saving)) };
  }

  /**
   * Stores the keyword index beside snapshot `generation` (in a worker: the stored index's chunks
   * less the files changed since, and the in-memory ones) and takes it over, its postings on disk.
   * Changes go on meanwhile: the files changed after the export began are carried over from
   * memory when the stored index is taken over (in the keyword index's own queue). A cache: on
   * failure it is reported, the current index stays in use and the next load tokenises the files.
   */
  async save(generation: number, signal: AbortSignal, exported?: ExportedKeywords): Promise<boolean> {
    try {
      // Short slices: this is background work, and a change the user makes meanwhile waits a slice at each of its steps.
      const slices = new Slicer(BACKGROUND_SLICE_MS);
      const e = exported ?? (await this.export(slices));
      await storeKeywords(this.o.storeDir, generation, e.state, e.base, { signal, mode: this.o.snapshots, workerFile: this.o.snapshotWorkerFile });
      const stored = await StoredKeywords.open(
        keywordFile(this.o.storeDir, generation),
        generation,
        () => slices.maybeYield(),
        (files) => holdsExactly(files, e.expected),
      );
      if (!stored) throw new Error(`the keyword index stored for generation ${generation} does not match the index`);
      let taken = false;
      const swapping = this.ready.then(() => {
        if (signal.aborted || this.index !== e.source) return stored.close();
        const next = new KeywordIndex(stored, this.of.itemAt);
        next.copyFiles(e.source, e.changed);
        this.use(next);
        taken = true;
      });
      this.ready = swapping;
      await swapping;
      return taken;
    } catch (err) {
      if (!signal.aborted) this.o.onBackgroundError?.(err);
      return false;
    }
  }

  /**
   * The keyword index as numbers, to store (`save`). Changes may go on meanwhile: those
   * made from its start are recorded, to be carried over when the stored index is taken over.
   */
  private async export(slices: Slicer): Promise<ExportedKeywords> {
    await this.ready;
    const source = this.index;
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
  use(keywords: KeywordIndex<IndexedChunk>): void {
    this.index.close();
    this.index = keywords;
  }

  /**
   * The keyword index after a load: the one stored with the snapshot (postings on disk) when it
   * fits the snapshot's files and chunks, with the files the log changed since tokenised again;
   * otherwise every file is read and tokenised. `current` is false once another load or a clear
   * came after this one (the index is then left alone).
   */
  async restore(snapshot: { generation: number; files: Record<string, StoredFile> }, entries: LogEntry[], current: () => boolean): Promise<void> {
    const slices = new Slicer();
    const chunkCounts = new Map(Object.entries(snapshot.files).map(([file, f]) => [file, f.chunks.length]));
    const stored = await StoredKeywords.open(
      keywordFile(this.o.storeDir, snapshot.generation),
      snapshot.generation,
      () => slices.maybeYield(),
      (files) => holdsExactly(files, chunkCounts),
    );
    if (!current()) return stored?.close();
    if (!stored) {
      await this.fill([...this.of.files().keys()]);
      return;
    }
    this.use(new KeywordIndex(stored, this.of.itemAt));
    const touched = new Set(entries.flatMap((e) => Object.keys(e.files)));
    for (const file of touched) if (!this.of.files().has(file)) this.index.removeFile(file);
    await this.fill([...touched].filter((f) => this.of.files().has(f)));
  }

  /** Reads the stored files' chunks into the keyword index (after a load). */
  async fill(files: string[]): Promise<void> {
    const slices = new Slicer();
    for (const file of files) {
      await slices.maybeYield();
      const entry = this.of.files().get(file);
      if (!entry) continue;
      const p = await this.of.guard.resolve(file).catch(() => undefined);
      const lines = p ? (await readFile(p.abs, 'utf8').catch(() => '')).split(/\r?\n/) : [];
      this.index.setFile(
        file,
        entry.chunks.map(([start, end, hash]) => ({ item: { file, start, end, hash }, text: lines.slice(start - 1, end).join('\n') })),
      );
    }
  }

  /**
   * Takes over the keyword index a streamed first build's worker stored beside snapshot
   * `generation`, if it holds exactly the build's files and chunks; false when it does not read
   * or does not match (the update then indexes the keywords itself).
   */
  async takeStored(generation: number, changed: Map<string, { entry: StoredFile } | null>, slices: Slicer): Promise<boolean> {
    const expected = new Map<string, number>();
    for (const [file, c] of changed) if (c) expected.set(file, c.entry.chunks.length);
    const stored = await StoredKeywords.open(
      keywordFile(this.o.storeDir, generation),
      generation,
      () => slices.maybeYield(),
      (files) => holdsExactly(files, expected),
    ).catch(() => undefined);
    if (!stored) return false;
    this.use(new KeywordIndex(stored, this.of.itemAt));
    return true;
  }
}

/** Whether these files with these chunk counts are exactly the expected ones. */
function holdsExactly(files: [string, number][], expected: ReadonlyMap<string, number>): boolean {
  return files.length === expected.size && files.every(([file, count]) => expected.get(file) === count);
}

/** The keyword index exported to be stored, and what it was exported from (see `export`). */
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
