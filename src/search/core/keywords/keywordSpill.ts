/**
 * A first build's keyword index in bounded memory: the chunks are tokenised into an in-memory
 * index until it holds a batch of them, which is then stored as a batch file beside the snapshot
 * and emptied; at the end the batches and the last in-memory part are merged by term name into
 * the snapshot's keyword file (`writeKeywordFile`). A million chunks held whole were gigabytes in
 * the worker; a batch of 32,768 is some 70 MB, and the merge reads one term's postings and name
 * at a time. A file sent again, or left out at the end, is masked in the batch that holds it.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { KeywordIndex } from './keywords';
import { KeywordRun } from './keywordRun';
import { keywordFile, writeKeywordFile } from './keywordStore';

/** Chunks held in memory before they are stored as a batch, after the first (at a million chunks, 28 batches). */
export const SPILL_CHUNKS = 32_768;
/**
 * Chunks held before the first batch is stored: a workspace of up to this many (most of them) is
 * never cut into batches. Storing and merging batches took 1.3–1.5 s of a 100,000-chunk build's
 * 7–8.6 s; its keyword index held whole is some 250 MB at this size, early in a larger build,
 * whose peak comes later.
 */
export const FIRST_SPILL_CHUNKS = 131_072;

/** Batch `k` of generation `generation`'s keyword index (removed with the generation's other files, see `IndexStore`). */
export const spillFile = (dir: string, generation: number, k: number) => join(dir, `keywords-${generation}.spill-${k}.bin`);

/** A stored batch: only its place and its masked files are held until the merge opens it. */
interface Batch {
  path: string;
  masked: Set<string>;
}

export class SpillingKeywords {
  private memory = new KeywordIndex<number>();
  private chunksInMemory = 0;
  private readonly batches: Batch[] = [];
  /** The batch holding each file stored so far (files in memory are not in it). */
  private readonly batchOf = new Map<string, number>();
  private readonly files = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly generation: number,
    /** Chunks per batch; when given, the first batch's too (tests set it small). */
    private readonly limit?: number,
  ) {}

  /** Batches stored so far. */
  get spills(): number {
    return this.batches.length;
  }

  /** A file's chunk texts (replacing what it had); may store the in-memory part as a batch. */
  async setFile(file: string, texts: string[]): Promise<void> {
    const k = this.batchOf.get(file);
    if (k !== undefined) {
      this.batches[k].masked.add(file);
      this.batchOf.delete(file);
    }
    this.memory.setFile(
      file,
      texts.map((text, item) => ({ item, text })),
    );
    this.files.add(file);
    this.chunksInMemory += texts.length;
    if (this.chunksInMemory >= (this.limit ?? (this.batches.length === 0 ? FIRST_SPILL_CHUNKS : SPILL_CHUNKS))) await this.spill();
  }

  /**
   * Stores generation `generation`'s keyword file with the chunks of the files `keep` accepts
   * (the snapshot's files) and removes the batches; the counts written.
   */
  async finish(keep: (file: string) => boolean): Promise<KeywordCounts> {
    try {
      for (const file of this.files) {
        if (keep(file)) continue;
        const k = this.batchOf.get(file);
        if (k === undefined) this.memory.removeFile(file);
        else this.batches[k].masked.add(file);
      }
      const delta = await this.memory.exportState(() => Promise.resolve());
      this.memory = new KeywordIndex<number>();
      // Read by the merge one term at a time (`KeywordRun`): no batch's term table is held whole.
      const runs = this.batches.map((b, k) => ({ run: KeywordRun.open(b.path, k), masked: b.masked }));
      try {
        if (runs.some((r) => !r.run)) throw new Error('a keyword batch does not read back');
        return writeKeywordFile(
          keywordFile(this.dir, this.generation),
          this.generation,
          delta,
          runs.map((r) => ({ stored: r.run!, masked: r.masked })),
        );
      } finally {
        for (const r of runs) r.run?.close();
      }
    } finally {
      this.discard();
    }
  }

  /** Closes and removes the batches. */
  discard(): void {
    for (const b of this.batches.splice(0)) rmSync(b.path, { force: true });
    this.batchOf.clear();
  }

  private async spill(): Promise<void> {
    const k = this.batches.length;
    const path = spillFile(this.dir, this.generation, k);
    const state = await this.memory.exportState(() => Promise.resolve());
    // The in-memory index goes before the batch is opened: its memory is what the batch bounds.
    this.memory = new KeywordIndex<number>();
    this.chunksInMemory = 0;
    writeKeywordFile(path, k, state);
    this.batches.push({ path, masked: new Set() });
    for (const f of state.files) this.batchOf.set(f.file, k);
  }
}

/** What a streamed build's keyword index stored: its chunks and terms. */
export interface KeywordCounts {
  docs: number;
  terms: number;
}

/**
 * A streamed build's keyword index on a thread of its own: tokenising the texts was about half of
 * the snapshot worker's time, and that worker is a first build's critical path. Its file is
 * written before the snapshot that names it is committed (`finish` waits for it).
 */
export class KeywordStream {
  private readonly keywords: SpillingKeywords;

  constructor(job: { dir: string; to: number; spillChunks?: number }) {
    // The store's folder may be new, and the snapshot's thread may not have made it yet.
    mkdirSync(job.dir, { recursive: true });
    this.keywords = new SpillingKeywords(job.dir, job.to, job.spillChunks);
  }

  async addTexts(files: { file: string; texts: string[] }[]): Promise<void> {
    for (const f of files) await this.keywords.setFile(f.file, f.texts);
  }

  /** Stores the keyword index of every file sent but the `dropped` ones. */
  finish(dropped: string[]): Promise<KeywordCounts> {
    const left = new Set(dropped);
    return this.keywords.finish((file) => !left.has(file));
  }

  /** Stops: its batches are removed. */
  discard(): void {
    this.keywords.discard();
  }
}
