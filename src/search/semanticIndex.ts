import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import * as z from 'zod/mini';
import { nodeFs } from '../storage/atomicFile';
import { PathGuard, type WorkspaceFolderPath } from '../tools/pathGuard';
import { isBinary, walkWorkspace } from '../tools/workspaceTools';
import { chunkText, embeddingText } from './chunker';
import { KeywordIndex, type KeywordHit } from './keywords';
import { VectorIndex } from './vectorIndex';

export interface IndexedChunk {
  /** Display path (folder-prefixed in a multi-root workspace). */
  file: string;
  start: number;
  end: number;
  hash: string;
}

export interface IndexStats {
  files: number;
  chunks: number;
  /** Chunks sent to the embedding model in this run. */
  embedded: number;
  /** Chunks whose stored embedding was reused. */
  reused: number;
  requests: number;
  skipped: number;
  ms: number;
}

export type EmbedFn = (texts: string[], signal?: AbortSignal, onDone?: (done: number) => void) => Promise<{ vectors: Float32Array[]; requests: number }>;

export interface SemanticIndexOptions {
  folders: WorkspaceFolderPath[];
  excludes: string[];
  storeDir: string;
  model: string;
  embed: EmbedFn;
  maxFileBytes?: number;
  chunkTokens?: number;
  onProgress?: (p: { phase: 'scan' | 'embed'; done: number; total: number }) => void;
}

export class IndexModelChanged extends Error {}

/** Indexing stopped on a gateway error; what was embedded before it is saved (the next run resumes). */
export class IndexingStopped extends Error {
  constructor(
    override readonly cause: unknown,
    readonly embedded: number,
    readonly total: number,
  ) {
    super(`Indexing stopped after ${embedded.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} chunks: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'IndexingStopped';
  }
}

const FileEntry = z.object({ size: z.number(), mtimeMs: z.number(), hashes: z.array(z.string()) });
const Meta = z.object({
  version: z.literal(1),
  model: z.string(),
  dim: z.number(),
  generation: z.number(),
  rows: z.array(z.string()),
  chunks: z.array(z.object({ file: z.string(), start: z.number(), end: z.number(), hash: z.string() })),
  files: z.record(z.string(), FileEntry),
});
type Meta = z.infer<typeof Meta>;

const BINARY_EXT = /\.(png|jpe?g|gif|webp|ico|bmp|pdf|zip|gz|tgz|xz|7z|rar|jar|class|exe|dll|so|dylib|o|a|wasm|mp3|mp4|wav|mov|avi|webm|ttf|otf|woff2?|eot|bin|dat|db|sqlite|vsix|pyc)$/i;
const GENERATED = /(\.min\.(js|css)|\.map|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|composer\.lock)|\.snap)$/i;

/** Whether a text looks machine-made (minified): very long lines on average. */
function looksGenerated(text: string): boolean {
  const lines = text.split('\n', 200);
  const avg = lines.reduce((n, l) => n + l.length, 0) / Math.max(1, lines.length);
  return avg > 300;
}

/**
 * The workspace's embeddings index. Files are walked with the same ignore rules as the tools
 * (.gitignore, exclude settings, extra globs), chunked, and embedded in batches; a chunk whose
 * hash is already stored is never embedded again, also across restarts. Stored as a generation of
 * vectors (a compact float32 file) plus a metadata file written after it, both atomically: a crash
 * at any point leaves the previous index readable.
 */
export class SemanticIndex {
  private guard: PathGuard;
  private meta: Meta | undefined;
  private vectors: VectorIndex | undefined;
  /** Row of each stored chunk hash. */
  private rowOf = new Map<string, number>();
  /** Chunk of each row (for results). */
  private chunkOfRow = new Map<number, IndexedChunk>();
  /** The keyword side of hybrid search, over the same chunks (filled from disk after a load). */
  private keywords = new KeywordIndex<IndexedChunk>();
  /** Settles when the keyword index covers every stored file. */
  keywordsReady: Promise<void> = Promise.resolve();

  constructor(private readonly o: SemanticIndexOptions) {
    this.guard = new PathGuard(o.folders, o.excludes);
  }

  get model(): string {
    return this.o.model;
  }

  get size(): { chunks: number; files: number; dim: number } {
    return { chunks: this.meta?.chunks.length ?? 0, files: Object.keys(this.meta?.files ?? {}).length, dim: this.meta?.dim ?? 0 };
  }

  /** Bytes of memory per indexed vector. */
  get bytesPerChunk(): number {
    return this.vectors?.bytesPerVector ?? 0;
  }

  private metaPath() {
    return join(this.o.storeDir, 'meta.json');
  }

  private vectorsPath(generation: number) {
    return join(this.o.storeDir, `vectors-${generation}.f32`);
  }

  /** Loads the stored index. `model-changed` means the stored one was built with another model. */
  async load(): Promise<'loaded' | 'empty' | 'model-changed' | 'damaged'> {
    await nodeFs.removeOrphanTemps(this.o.storeDir);
    const text = await nodeFs.read(this.metaPath());
    if (!text) return 'empty';
    let meta: Meta;
    try {
      const r = Meta.safeParse(JSON.parse(text));
      if (!r.success) return 'damaged';
      meta = r.data;
    } catch {
      return 'damaged';
    }
    if (meta.model !== this.o.model) return 'model-changed';
    const bytes = await readFile(this.vectorsPath(meta.generation)).catch(() => undefined);
    if (!bytes || bytes.length !== meta.rows.length * meta.dim * 4) return 'damaged';
    const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    this.vectors = VectorIndex.fromVectors(floats, meta.dim);
    this.meta = meta;
    this.reindexMaps();
    this.keywords = new KeywordIndex();
    this.keywordsReady = this.syncKeywords(new Map());
    return 'loaded';
  }

  private reindexMaps(): void {
    this.rowOf = new Map(this.meta!.rows.map((h, i) => [h, i]));
    this.chunkOfRow = new Map();
    for (const c of this.meta!.chunks) {
      const row = this.rowOf.get(c.hash);
      if (row !== undefined && !this.chunkOfRow.has(row)) this.chunkOfRow.set(row, c);
    }
  }

  /** Forgets the stored index (a model or dimension change). */
  async clear(): Promise<void> {
    this.meta = undefined;
    this.vectors = undefined;
    this.rowOf.clear();
    this.chunkOfRow.clear();
    this.keywords = new KeywordIndex();
    await rm(this.o.storeDir, { recursive: true, force: true });
  }

  /** Reads, filters and chunks one file; undefined when it is skipped. */
  private async chunksOf(f: { rel: string; abs: string; display: string }, size: number): Promise<IndexedChunk[] | undefined> {
    if (BINARY_EXT.test(f.rel) || GENERATED.test(f.rel)) return undefined;
    if (size > (this.o.maxFileBytes ?? 512 * 1024) || size === 0) return undefined;
    if (await isBinary(f.abs)) return undefined;
    const text = await readFile(f.abs, 'utf8');
    if (looksGenerated(text)) return undefined;
    return chunkText(f.display, text, { maxTokens: this.o.chunkTokens ?? 300 }).map((c) => ({ file: f.display, start: c.startLine, end: c.endLine, hash: c.hash, text: c.text }));
  }

  /**
   * Brings the index up to date with the workspace (all files, or only `paths` when given:
   * absolute paths from a file watcher). Unchanged files are not read; unchanged chunks are not
   * embedded. Cancelling keeps what was finished.
   */
  async update(paths?: string[], signal?: AbortSignal, onProgress = this.o.onProgress): Promise<IndexStats> {
    const t0 = Date.now();
    const stats: IndexStats = { files: 0, chunks: 0, embedded: 0, reused: 0, requests: 0, skipped: 0, ms: 0 };
    const old = this.meta;
    const files: Meta['files'] = paths ? { ...(old?.files ?? {}) } : {};
    const chunksByFile = new Map<string, (IndexedChunk & { text?: string })[]>();
    for (const c of old?.chunks ?? []) {
      if (!chunksByFile.has(c.file)) chunksByFile.set(c.file, []);
      chunksByFile.get(c.file)!.push(c);
    }
    const kept = new Map<string, (IndexedChunk & { text?: string })[]>();
    const visit = async (f: { rel: string; abs: string; display: string }) => {
      const s = await stat(f.abs).catch(() => undefined);
      if (!s || !s.isFile()) return;
      const prev = old?.files[f.display];
      if (prev && prev.size === s.size && prev.mtimeMs === s.mtimeMs && chunksByFile.has(f.display)) {
        files[f.display] = prev;
        kept.set(f.display, chunksByFile.get(f.display)!);
        stats.files++;
        return;
      }
      const chunks = await this.chunksOf(f, s.size);
      if (!chunks) {
        stats.skipped++;
        delete files[f.display];
        return;
      }
      files[f.display] = { size: s.size, mtimeMs: s.mtimeMs, hashes: chunks.map((c) => c.hash) };
      kept.set(f.display, chunks);
      stats.files++;
    };
    if (paths) {
      for (const [file, chunks] of chunksByFile) kept.set(file, chunks);
      for (const abs of paths) {
        // Drop what was indexed for the path; index it again if it still exists and is not ignored.
        const display = this.displayOf(abs);
        if (!display) continue;
        kept.delete(display);
        delete files[display];
        const resolved = await this.guard.resolve(abs).catch(() => undefined);
        if (resolved) await visit({ rel: resolved.rel, abs: resolved.abs, display });
      }
    } else {
      let scanned = 0;
      for await (const f of walkWorkspace(this.guard)) {
        if (signal?.aborted) break;
        await visit({ rel: f.rel, abs: f.abs, display: this.guard.display(f.folder, f.rel) });
        if (++scanned % 200 === 0) onProgress?.({ phase: 'scan', done: scanned, total: 0 });
      }
    }

    // What needs embedding: chunks whose hash has no stored vector (each hash once).
    const todo = new Map<string, string>();
    for (const chunks of kept.values()) {
      for (const c of chunks) {
        stats.chunks++;
        if (this.rowOf.has(c.hash) || todo.has(c.hash)) {
          if (this.rowOf.has(c.hash)) stats.reused++;
          continue;
        }
        todo.set(c.hash, embeddingText(c.file, c.text ?? ''));
      }
    }
    const hashes = [...todo.keys()];
    const newVectors = new Map<string, Float32Array>();
    let failure: unknown;
    if (hashes.length > 0 && !signal?.aborted) {
      onProgress?.({ phase: 'embed', done: 0, total: hashes.length });
      try {
        const { vectors, requests } = await this.o.embed(hashes.map((h) => todo.get(h)!), signal, (done) => onProgress?.({ phase: 'embed', done, total: hashes.length }));
        stats.requests = requests;
        vectors.forEach((v, i) => v && newVectors.set(hashes[i], v));
      } catch (err) {
        // Cancelled, or the gateway failed: keep the batches that finished either way.
        if (!signal?.aborted) failure = err;
        const partial = (err as { partial?: { vectors: (Float32Array | undefined)[]; requests: number } }).partial;
        partial?.vectors.forEach((v, i) => v && newVectors.set(hashes[i], v));
        stats.requests = partial?.requests ?? 0;
      }
      stats.embedded = newVectors.size;
    }
    const dim = newVectors.size > 0 ? newVectors.values().next().value!.length : (old?.dim ?? 0);
    if (old && newVectors.size > 0 && dim !== old.dim) throw new IndexModelChanged(`The embedding dimension changed from ${old.dim} to ${dim}.`);

    // A file is indexed only when every one of its chunks has a vector (a cancelled run resumes).
    const chunks: IndexedChunk[] = [];
    for (const [file, list] of kept) {
      if (list.every((c) => this.rowOf.has(c.hash) || newVectors.has(c.hash))) {
        for (const c of list) chunks.push({ file: c.file, start: c.start, end: c.end, hash: c.hash });
      } else delete files[file];
    }
    await this.save(chunks, files, newVectors, dim);
    const texts = new Map<string, string[]>();
    for (const [file, list] of kept) if (files[file] && list.every((c) => c.text !== undefined)) texts.set(file, list.map((c) => c.text!));
    this.keywordsReady = this.syncKeywords(texts);
    await this.keywordsReady;
    stats.ms = Date.now() - t0;
    if (failure !== undefined) throw new IndexingStopped(failure, stats.embedded, hashes.length);
    return stats;
  }

  /**
   * Brings the keyword index in line with the stored chunks: files with fresh texts from this
   * update, files it does not have yet read from disk (after a load), gone files removed.
   */
  private async syncKeywords(texts: Map<string, string[]>): Promise<void> {
    const meta = this.meta;
    if (!meta) return;
    const byFile = new Map<string, IndexedChunk[]>();
    for (const c of meta.chunks) {
      if (!byFile.has(c.file)) byFile.set(c.file, []);
      byFile.get(c.file)!.push(c);
    }
    for (const file of [...this.keywordFiles]) if (!byFile.has(file)) this.keywords.removeFile(file);
    for (const [file, chunks] of byFile) {
      const fresh = texts.get(file);
      if (fresh && fresh.length === chunks.length) this.keywords.setFile(file, chunks.map((c, i) => ({ item: c, text: fresh[i] })));
      else if (!this.keywords.has(file) || fresh) {
        const p = await this.guard.resolve(file).catch(() => undefined);
        const lines = p ? (await readFile(p.abs, 'utf8').catch(() => '')).split(/\r?\n/) : [];
        this.keywords.setFile(file, chunks.map((c) => ({ item: c, text: lines.slice(c.start - 1, c.end).join('\n') })));
      }
      // Chunk records are replaced on every save: point the keyword entries at the current ones.
      else this.keywords.setItems(file, chunks);
    }
    this.keywordFiles = new Set(byFile.keys());
  }

  private keywordFiles = new Set<string>();

  /** The best chunks by keywords and identifiers (BM25; an identifier's definitions first). */
  keywordSearch(query: string, k: number): KeywordHit<IndexedChunk>[] {
    return this.keywords.search(query, k);
  }

  /** Writes a new generation: live vectors, compacted, then the metadata that points at them. */
  private async save(chunks: IndexedChunk[], files: Meta['files'], fresh: Map<string, Float32Array>, dim: number): Promise<void> {
    const hashes = [...new Set(chunks.map((c) => c.hash))];
    const all = new Float32Array(hashes.length * dim);
    hashes.forEach((h, i) => {
      const row = this.rowOf.get(h);
      all.set(row !== undefined && this.vectors ? this.vectors.vector(row) : fresh.get(h)!, i * dim);
    });
    const generation = (this.meta?.generation ?? 0) + 1;
    const meta: Meta = { version: 1, model: this.o.model, dim, generation, rows: hashes, chunks, files };
    await nodeFs.mkdirp(this.o.storeDir);
    await nodeFs.writeAtomic(this.vectorsPath(generation), new Uint8Array(all.buffer, all.byteOffset, all.byteLength));
    await nodeFs.writeAtomic(this.metaPath(), JSON.stringify(meta));
    for (const name of await readdir(this.o.storeDir).catch(() => [] as string[])) {
      if (/^vectors-\d+\.f32$/.test(name) && name !== `vectors-${generation}.f32`) await rm(join(this.o.storeDir, name), { force: true });
    }
    this.meta = meta;
    this.vectors = VectorIndex.fromVectors(all, Math.max(dim, 1));
    this.reindexMaps();
  }

  /** The best chunks for a query vector. */
  search(query: Float32Array, k: number): { chunk: IndexedChunk; score: number }[] {
    if (!this.vectors || !this.meta || this.meta.rows.length === 0) return [];
    return this.vectors
      .search(query, k)
      .map((h) => ({ chunk: this.chunkOfRow.get(h.row)!, score: h.score }))
      .filter((r) => r.chunk);
  }

  /** The current text of a chunk's lines (read from disk). */
  async chunkText(c: IndexedChunk): Promise<string> {
    const p = await this.guard.resolve(c.file).catch(() => undefined);
    if (!p) return '';
    const lines = (await readFile(p.abs, 'utf8').catch(() => '')).split(/\r?\n/);
    return lines.slice(c.start - 1, c.end).join('\n');
  }

  private displayOf(abs: string): string | undefined {
    for (const folder of this.o.folders) {
      const rel = relative(folder.path, abs);
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return this.guard.display(folder, rel.split(sep).join('/'));
    }
    return undefined;
  }

  /** Absolute path of a display path. */
  async absolutePath(file: string): Promise<string | undefined> {
    return (await this.guard.resolve(file).catch(() => undefined))?.abs;
  }
}
