import { readFile, stat } from 'node:fs/promises';
import { PathGuard, type WorkspaceFolderPath } from '../../../tools/pathGuard';
import { walkWorkspace } from '../../../tools/workspaceTools';
import { embeddingText } from '../chunker';
import { chunksFrom, chunkTextOf, displayPathOf, indexable, readNew, SCAN_CONCURRENCY, type IndexedChunk } from '../fileChunks';
import { KeywordIndex, type KeywordHit } from '../keywords/keywords';
import type { EmbedFn, IndexStats } from '../semanticIndex';
import { emptyStats } from '../indexTypes';
import { Slicer } from '../slices';

/** What search in a team store needs of it (`TeamStore` is one). */
export interface StoreSearch {
  /** Which of these hashes the store has a vector for. */
  has(hashes: readonly string[]): Promise<Set<string>>;
  give(hashes: readonly string[], vectors: readonly Float32Array[]): Promise<number>;
  /** Whether this client may add rows: one that may not embeds nothing (it could not keep it). */
  writable(): Promise<boolean>;
  /** The stored hashes nearest to a query vector, best first. */
  nearest(query: ArrayLike<number>, k: number): Promise<{ hash: string; score: number }[]>;
}

export interface StoreSearchIndexOptions {
  folders: WorkspaceFolderPath[];
  excludes: string[];
  secretFiles?: string[];
  model: string;
  embed: EmbedFn;
  store: StoreSearch;
  chunkTokens?: number;
  maxFileBytes?: number;
  /** The store failed (the keyword side goes on alone). */
  onStoreFailure?: (err: unknown) => void;
}

/** Hashes asked about, and texts embedded, per round trip. */
const BATCH = 1000;

type Entry = { size: number; mtimeMs: number; chunks: [number, number, string][] };
/** A chunk's file and text, to embed (`embeddingText`) if the store lacks its vector. */
type ChunkText = { file: string; text: string };
const embeddingTextOf = (c: ChunkText) => embeddingText(c.file, c.text);

/**
 * Search in a team store, for a repository whose vectors do not fit this machine: the vectors stay
 * in Postgres (its HNSW index answers the query's vector side); this machine keeps only which of
 * its files hold which chunk hashes, and the keyword index. A result whose hash no file here holds
 * is dropped: the store answers with hashes, and a hash is shown only as this machine's own text.
 * Nothing is written to disk: a window scans the workspace when it opens (no embedding then).
 */
export class StoreSearchIndex {
  private readonly guard: PathGuard;
  private files = new Map<string, Entry>();
  /** The files holding each hash: one name, or several. */
  private holders = new Map<string, string | string[]>();
  /** Hashes the store has no vector for (a window that only reads, or before a build): keywords only. */
  private unvectored = new Set<string>();
  private keywords = new KeywordIndex<IndexedChunk>();
  readonly keywordsReady: Promise<void> = Promise.resolve();

  constructor(private readonly o: StoreSearchIndexOptions) {
    this.guard = new PathGuard(o.folders, o.excludes, o.secretFiles);
  }

  get model(): string {
    return this.o.model;
  }

  get size(): { chunks: number; files: number; dim: number } {
    let chunks = 0;
    for (const f of this.files.values()) chunks += f.chunks.length;
    return { chunks, files: this.files.size, dim: 0 };
  }

  /** Chunks found by keywords only, for want of a vector in the store. */
  get withoutVectors(): number {
    return this.unvectored.size;
  }

  /** Scans the workspace (nothing embedded: chunks the store lacks are found by keywords until a build). */
  async load(): Promise<'loaded' | 'empty'> {
    await this.update(undefined, undefined, undefined, { embed: false });
    return this.files.size > 0 ? 'loaded' : 'empty';
  }

  clear(): Promise<void> {
    this.files.clear();
    this.holders.clear();
    this.unvectored.clear();
    this.keywords.close();
    this.keywords = new KeywordIndex();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.keywords.close();
    return Promise.resolve();
  }

  /**
   * Brings the map of this machine's chunks up to date (all files, or `paths`), asks the store
   * which hashes it has, and (unless `embed` is false) embeds the missing ones and adds them.
   */
  async update(
    paths?: string[],
    signal?: AbortSignal,
    onProgress?: (p: { phase: 'scan' | 'embed'; done: number; total: number }) => void,
    opts: { embed: boolean } = { embed: true },
  ): Promise<IndexStats> {
    const t0 = Date.now();
    const stats = emptyStats();
    const changed = new Map<string, { entry: Entry; texts: string[] } | null>();
    const consider = async (f: { rel: string; abs: string; display: string }) => {
      const prev = this.files.get(f.display);
      if (prev) {
        const s = await stat(f.abs).catch(() => undefined);
        if (!s?.isFile()) return void changed.set(f.display, null);
        if (s.size === prev.size && s.mtimeMs === prev.mtimeMs) {
          stats.files++;
          stats.chunks += prev.chunks.length;
          stats.reused += prev.chunks.length;
          return;
        }
      }
      const got = await readNew(f.abs, (size) => indexable(f.rel, size, this.o.maxFileBytes));
      const chunks = typeof got === 'string' ? undefined : chunksFrom(f.display, got.bytes, this.o.chunkTokens);
      if (typeof got === 'string' || !chunks) {
        if (got === 'skipped' || chunks === undefined) stats.skipped++;
        if (prev) changed.set(f.display, null);
        return;
      }
      changed.set(f.display, {
        entry: { size: got.stat.size, mtimeMs: got.stat.mtimeMs, chunks: chunks.map((c) => [c.start, c.end, c.hash]) },
        texts: chunks.map((c) => c.text),
      });
      stats.files++;
      stats.chunks += chunks.length;
    };
    if (paths) {
      for (const abs of paths) {
        const display = this.displayOf(abs);
        if (!display) continue;
        const resolved = await this.guard.resolve(abs).catch(() => undefined);
        if (resolved) await consider({ rel: resolved.rel, abs: resolved.abs, display });
        else if (this.files.has(display)) changed.set(display, null);
      }
    } else {
      const seen = new Set<string>();
      let scanned = 0;
      // Several files read at once (their reads overlap in the thread pool), as the local index does.
      const inFlight = new Set<Promise<void>>();
      for await (const f of walkWorkspace(this.guard)) {
        if (signal?.aborted) break;
        const display = this.guard.display(f.folder, f.rel);
        seen.add(display);
        const reading: Promise<void> = consider({ rel: f.rel, abs: f.abs, display }).finally(() => inFlight.delete(reading));
        inFlight.add(reading);
        if (inFlight.size >= SCAN_CONCURRENCY) await Promise.race(inFlight);
        if (++scanned % 200 === 0) onProgress?.({ phase: 'scan', done: scanned, total: 0 });
      }
      await Promise.all(inFlight);
      if (!signal?.aborted) for (const file of this.files.keys()) if (!seen.has(file)) changed.set(file, null);
    }
    stats.scanMs = Date.now() - t0;

    // Which new hashes the store has, then the missing ones embedded and added.
    // Each new hash's file and text, joined into the embedding's text only if it is embedded (a
    // window opening a repository embeds nothing, and joining 100,000 held its thread for 70 ms).
    const texts = new Map<string, ChunkText>();
    const slices = new Slicer();
    for (const [file, c] of changed) {
      c?.entry.chunks.forEach(([, , h], i) => texts.has(h) || this.holders.has(h) || texts.set(h, { file, text: c.texts[i] }));
      await slices.maybeYield();
    }
    // Chunks left keyword-only before (the store lacked them, or this window only read) are asked
    // again, and embedded now if they are still missing.
    const storeFailed = (err: unknown) => {
      stats.storeFailure = (err as Error)?.message ?? String(err);
      this.o.onStoreFailure?.(err);
    };
    const embedding = opts.embed && (await this.o.store.writable().catch((err: unknown) => (storeFailed(err), false)));
    if (embedding && this.unvectored.size > 0) await this.addUnvectoredTexts(texts, changed);
    const asked = [...texts.keys()];
    const vectored = new Set<string>();
    const missing: string[] = [];
    try {
      for (let at = 0; at < asked.length && !signal?.aborted; at += BATCH) {
        const batch = asked.slice(at, at + BATCH);
        const present = await this.o.store.has(batch);
        for (const h of batch) {
          if (present.has(h)) vectored.add(h);
          else missing.push(h);
        }
        onProgress?.({ phase: 'embed', done: Math.min(asked.length, at + BATCH), total: asked.length });
      }
      stats.fromStore = vectored.size;
      const tEmbed = Date.now();
      for (let at = 0; embedding && at < missing.length && !signal?.aborted; at += BATCH) {
        const batch = missing.slice(at, at + BATCH);
        const r = await this.o.embed(
          batch.map((h) => embeddingTextOf(texts.get(h)!)),
          signal,
        );
        stats.requests += r.requests;
        const got = batch.flatMap((h, i) => (r.vectors[i] ? [[h, r.vectors[i]] as const] : []));
        stats.embedded += got.length;
        const added = await this.o.store.give(
          got.map(([h]) => h),
          got.map(([, v]) => v),
        );
        stats.toStore += added;
        // Fewer added than given: a teammate added some meanwhile, or this window may not write.
        const now = added === got.length ? new Set(got.map(([h]) => h)) : await this.o.store.has(got.map(([h]) => h));
        for (const h of now) vectored.add(h);
        // A window that may not write embeds nothing more it cannot keep: the rest stay keyword-only.
        if (now.size === 0 && got.length > 0) break;
      }
      stats.embedMs = Date.now() - tEmbed;
    } catch (err) {
      storeFailed(err);
    }
    for (const h of texts.keys()) if (vectored.has(h)) this.unvectored.delete(h);
    const tApply = Date.now();
    await this.applyChanges(changed, texts, vectored, slices);
    stats.persistMs = Date.now() - tApply;
    stats.ms = Date.now() - t0;
    return stats;
  }

  /** The changed files taken into the map and the keyword index (each hash held by its files; the new ones without a vector noted). */
  private async applyChanges(
    changed: Map<string, { entry: Entry; texts: string[] } | null>,
    texts: Map<string, ChunkText>,
    vectored: Set<string>,
    slices: Slicer,
  ): Promise<void> {
    for (const [file, c] of changed) {
      const prev = this.files.get(file);
      if (prev) for (const [, , h] of prev.chunks) this.release(h, file);
      if (!c) {
        this.files.delete(file);
        this.keywords.removeFile(file);
      } else {
        this.files.set(file, c.entry);
        for (const [, , h] of c.entry.chunks) {
          this.hold(h, file);
          if (texts.has(h) && !vectored.has(h)) this.unvectored.add(h);
        }
        this.keywords.setFile(
          file,
          c.entry.chunks.map(([start, end, hash], i) => ({ item: { file, start, end, hash }, text: c.texts[i] })),
        );
      }
      await slices.maybeYield();
    }
  }

  /** The embedding texts of the chunks without a vector (from the changed files, or their files read again). */
  private async addUnvectoredTexts(texts: Map<string, ChunkText>, changed: Map<string, { entry: Entry; texts: string[] } | null>): Promise<void> {
    const wanted = new Set([...this.unvectored].filter((h) => !texts.has(h)));
    for (const [file, c] of changed) c?.entry.chunks.forEach(([, , h], i) => wanted.delete(h) && texts.set(h, { file, text: c.texts[i] }));
    const files = new Set<string>();
    for (const h of wanted) {
      const file = this.holderOf(h);
      if (file !== undefined && !changed.has(file)) files.add(file);
    }
    for (const file of files) {
      const at = await this.guard.resolve(file).catch(() => undefined);
      const bytes = at && (await readFile(at.abs).catch(() => undefined));
      const chunks = bytes && chunksFrom(file, bytes, this.o.chunkTokens);
      for (const c of chunks || []) if (wanted.delete(c.hash)) texts.set(c.hash, { file, text: c.text });
    }
  }

  /** A file that holds this hash (the first, when several do). */
  private holderOf(hash: string): string | undefined {
    const held = this.holders.get(hash);
    return held === undefined || typeof held === 'string' ? held : held[0];
  }

  private hold(hash: string, file: string): void {
    const held = this.holders.get(hash);
    if (held === undefined) this.holders.set(hash, file);
    else if (typeof held === 'string') this.holders.set(hash, held === file ? held : [held, file]);
    else if (!held.includes(file)) held.push(file);
  }

  private release(hash: string, file: string): void {
    const held = this.holders.get(hash);
    if (held === undefined) return;
    const rest = typeof held === 'string' ? (held === file ? [] : [held]) : held.filter((f) => f !== file);
    if (rest.length === 0) {
      this.holders.delete(hash);
      this.unvectored.delete(hash);
    } else this.holders.set(hash, rest.length === 1 ? rest[0] : rest);
  }

  /**
   * The best chunks for a query vector, from the store's HNSW index: asked for three times as many
   * as wanted, then more while too few are held here (other branches, other repositories).
   */
  async search(query: Float32Array, k: number): Promise<{ chunk: IndexedChunk; score: number }[]> {
    if (this.holders.size === 0) return [];
    for (let want = Math.max(k * 3, 30); ; want = Math.min(1000, want * 4)) {
      const hits = await this.o.store.nearest(query, want);
      const held = hits.flatMap((h) => {
        const file = this.holderOf(h.hash);
        const c = file === undefined ? undefined : this.files.get(file)?.chunks.find((x) => x[2] === h.hash);
        return c && file ? [{ chunk: { file, start: c[0], end: c[1], hash: h.hash }, score: h.score }] : [];
      });
      if (held.length >= k || hits.length < want || want >= 1000) return held.slice(0, k);
    }
  }

  keywordSearch(query: string, k: number): KeywordHit<IndexedChunk>[] {
    return this.keywords.search(query, k);
  }

  chunkText(c: IndexedChunk): Promise<string> {
    return chunkTextOf(this.guard, c);
  }

  async absolutePath(file: string): Promise<string | undefined> {
    return (await this.guard.resolve(file).catch(() => undefined))?.abs;
  }

  private displayOf(abs: string): string | undefined {
    return displayPathOf(this.guard, this.o.folders, abs);
  }
}
