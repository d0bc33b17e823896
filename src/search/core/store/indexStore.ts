/**
 * The search index on disk: a snapshot (generation G) and an append log, so that one changed file
 * costs in proportion to that file, not to the index.
 *
 * - `meta.json`: the snapshot's metadata (model, dimension, generation, centring mean, the chunk
 *   hash of each row, and each file's chunks), written atomically at compaction only;
 * - `vectors-G.f32`, `codes-G.bin`, `scales-G.f32`: one record per row (the normalised float32
 *   vector, its 1-bit code, its estimator scale), appended to;
 * - `log-G.jsonl`: one line per update (`<crc32> <json>`): the rows it added and the files it
 *   changed. A line is written, and flushed, only after the rows it names are flushed, so a crash
 *   at any point leaves a readable index: a torn last line is ignored, and rows no line names are
 *   cut off before the next append.
 */
import { closeSync, fdatasync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { nodeFs } from '../../../storage/atomicFile';
import { Slicer } from '../slices';

/** Bytes a new generation's row files take between the flushes started as they are written. */
const FLUSH_EVERY_BYTES = 64 << 20;

/** A file's chunks: [start line, end line, chunk hash]. */
export interface StoredFile {
  size: number;
  mtimeMs: number;
  chunks: [number, number, string][];
}

export interface Snapshot {
  model: string;
  dim: number;
  generation: number;
  mean: Float32Array;
  /** The chunk hash of each row. */
  rows: string[];
  files: Record<string, StoredFile>;
}

export interface LogEntry {
  /** Rows in the index after this entry. */
  rows: number;
  /** Hashes of the rows this entry appended, in order. */
  add: string[];
  /** Files replaced (or removed: null). */
  files: Record<string, StoredFile | null>;
}

/** Files as the metadata keeps them (`compactFile`): a few strings per file rather than an array per chunk. */
export class CompactFiles {
  constructor(readonly files: Record<string, [number, number, string]>) {}
}

/** A new generation's row files while they are written (`IndexStore.openSnapshot`). */
export interface SnapshotFiles {
  path(kind: 'vectors' | 'codes' | 'scales'): string;
  put(vectors: Float32Array, codes: Uint8Array, scales: Float32Array): void;
  /** Replaces the codes and scales of the rows from `row` on (rows encoded again around another mean). */
  putCodesAt(row: number, codes: Uint8Array, scales: Float32Array): void;
  /** `files` as version 3's metadata keeps them (`compactFile`), or whole. */
  commit(
    s: Omit<Snapshot, 'mean' | 'generation' | 'files'> & { files: Record<string, StoredFile> | CompactFiles },
    mean: Float32Array,
    keepOthers?: boolean,
  ): Promise<void>;
  /** Closes the files, leaving them. */
  close(): void;
  /** Closes and removes them. */
  discard(): void;
}

export interface LoadedStore {
  snapshot: Snapshot;
  entries: LogEntry[];
  rows: number;
  codes: Uint8Array;
  scales: Float32Array;
  /** The vectors in memory, or (a large index) the open file to read rows from. */
  vectors: Float32Array | { fd: number };
}

const FileSchema = z.object({ size: z.number(), mtimeMs: z.number(), chunks: z.array(z.tuple([z.number(), z.number(), z.string()])) });
const MetaSchema = z.object({
  version: z.union([z.literal(2), z.literal(3)]),
  model: z.string(),
  dim: z.number(),
  generation: z.number(),
  mean: z.string(),
  // Version 3: the row hashes space-separated in one string (version 2: an array).
  rows: z.union([z.string(), z.array(z.string())]),
  // Each file is checked on its own, in slices (a 100,000-chunk index has 12,500 of them).
  files: z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
});
/** A file in version 3's metadata: [size, mtimeMs, "start end hash start end hash …"]. */
const CompactFileSchema = z.tuple([z.number(), z.number(), z.string()]);

/**
 * Version 3 of the metadata keeps each file's chunks in one string and the row hashes in
 * another: a 100,000-chunk index parses in a few milliseconds (version 2's 100,000 small arrays
 * took 80 ms and a collection after), and the strings are taken apart in slices.
 */
export function compactFile(f: StoredFile): [number, number, string] {
  return [f.size, f.mtimeMs, f.chunks.map((c) => `${c[0]} ${c[1]} ${c[2]}`).join(' ')];
}

export function expandFile(c: [number, number, string]): StoredFile | undefined {
  const parts = c[2] ? c[2].split(' ') : [];
  if (parts.length % 3 !== 0) return undefined;
  const chunks: [number, number, string][] = [];
  for (let i = 0; i < parts.length; i += 3) {
    const start = Number(parts[i]);
    const end = Number(parts[i + 1]);
    if (!Number.isInteger(start) || !Number.isInteger(end)) return undefined;
    chunks.push([start, end, parts[i + 2]]);
  }
  return { size: c[0], mtimeMs: c[1], chunks };
}

const EntrySchema = z.object({ rows: z.number(), add: z.array(z.string()), files: z.record(z.string(), z.nullable(FileSchema)) });

/** Above this, vectors stay in their file and only the rows re-scored are read. */
export const IN_MEMORY_BYTES = 512 * 1024 * 1024;

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): string {
  let c = 0xffffffff;
  for (const b of Buffer.from(text, 'utf8')) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return ((c ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0');
}

const f32Bytes = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

export class IndexStore {
  /** Committed lengths of the current generation's files (what a crash may have left beyond is cut off). */
  private committed: { generation: number; rows: number; logBytes: number } | undefined;
  private files: { vectors: FileHandle; codes: FileHandle; scales: FileHandle; log: FileHandle } | undefined;

  constructor(
    private readonly dir: string,
    private readonly codeBytes: (dim: number) => number,
    /** Vectors up to this many bytes are held in memory, larger ones read from their file. */
    readonly inMemoryBytes = IN_MEMORY_BYTES,
  ) {}

  private path(kind: 'vectors' | 'codes' | 'scales' | 'log', generation: number): string {
    const ext = { vectors: 'f32', codes: 'bin', scales: 'f32', log: 'jsonl' }[kind];
    return join(this.dir, `${kind}-${generation}.${ext}`);
  }

  /**
   * 'empty' when there is no index, 'damaged' when what is there cannot be read, 'v1' for the
   * previous format. In-memory vectors get `headroom` free rows at the end (read straight into
   * place: a 400 MB index is not copied again). Every read is asynchronous (the thread pool's,
   * in 16 MB pieces): loading a large index never holds the event loop.
   */
  async load(headroom: (rows: number) => number = () => 0): Promise<LoadedStore | 'empty' | 'damaged' | 'v1'> {
    this.close();
    await nodeFs.removeOrphanTemps(this.dir);
    const state = await readCommitted(this.dir, this.codeBytes);
    if (typeof state === 'string') return state;
    const { snapshot, entries, rows, logBytes } = state;
    const g = snapshot.generation;
    const read = async (k: 'codes' | 'scales', bytes: number) => {
      const b = await readFile(this.path(k, g));
      return new Uint8Array(b.buffer, b.byteOffset, bytes);
    };
    const codes = await read('codes', rows * this.codeBytes(snapshot.dim));
    const scalesBytes = await read('scales', rows * 4);
    const scales = new Float32Array(scalesBytes.slice().buffer);
    let vectors: LoadedStore['vectors'];
    if (rows * snapshot.dim * 4 <= this.inMemoryBytes) {
      vectors = new Float32Array((rows + headroom(rows)) * snapshot.dim);
      if (!(await readInto(this.path('vectors', g), f32Bytes(vectors), rows * snapshot.dim * 4))) return 'damaged';
    } else vectors = { fd: openSync(this.path('vectors', g), 'r') };
    this.committed = { generation: g, rows, logBytes };
    // Files of a generation whose snapshot never got written (a crash during compaction).
    await this.removeOtherGenerations(g);
    return { snapshot, entries, rows, codes, scales, vectors };
  }

  /**
   * Takes over a generation another thread wrote (a snapshot job): later appends go to its files.
   * The previous generation's files are removed.
   */
  async adopt(generation: number, rows: number): Promise<void> {
    this.close();
    this.committed = { generation, rows, logBytes: 0 };
    await this.removeOtherGenerations(generation);
  }

  /** The generation and rows appends currently go to (undefined before a load or a snapshot). */
  get current(): { generation: number; rows: number } | undefined {
    return this.committed && { generation: this.committed.generation, rows: this.committed.rows };
  }

  /**
   * Writes a whole new generation (a build, or compaction) block by block: `fill` is called with
   * a writer for the rows (vectors, codes, scales, in order); the files are flushed, then the
   * metadata that points at them is written atomically, then the previous generation's files
   * go. A crash before the metadata leaves the previous generation in use (the new files are
   * removed at the next load).
   */
  async writeSnapshot(
    s: Omit<Snapshot, 'mean'>,
    fill: (write: (vectors: Float32Array, codes: Uint8Array, scales: Float32Array) => void) => void,
    mean: () => Float32Array,
    keepOthers = false,
  ): Promise<void> {
    const files = await this.openSnapshot(s.generation);
    try {
      fill((vectors, codes, scales) => files.put(vectors, codes, scales));
    } catch (err) {
      files.discard();
      throw err;
    }
    await files.commit(s, mean(), keepOthers);
  }

  /**
   * Starts generation `generation`'s row files, for rows that arrive over time (the first build
   * writes them while the embeddings come in): `put` appends rows, `putCodesAt` replaces codes and
   * scales (rows encoded again around another mean), `commit` flushes them and writes
   * the metadata as `writeSnapshot` does, `discard` removes them.
   */
  async openSnapshot(generation: number): Promise<SnapshotFiles> {
    this.close();
    await nodeFs.mkdirp(this.dir);
    const kinds = ['vectors', 'codes', 'scales', 'log'] as const;
    const fds = kinds.map((k) => openSync(this.path(k, generation), 'w+'));
    let open = true;
    const closeAll = () => {
      if (open) for (const fd of fds) closeSync(fd);
      open = false;
    };
    // The rows' files flushed in the background as they grow, so that the commit's flush waits for
    // the last rows only: a newcomer's 614 MB of vectors, all flushed there, held its first query
    // 0.35–0.4 s (the kernel starts writing back on its own only past a tenth of memory). A flush
    // still running when the files are discarded fails or syncs another file: either is harmless.
    let unflushed = 0;
    let flushing: Promise<void> | undefined;
    const put = (fd: number, data: Uint8Array, at?: number) => {
      for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off, at === undefined ? null : at + off);
      unflushed += data.length;
      if (flushing || unflushed < FLUSH_EVERY_BYTES) return;
      unflushed = 0;
      flushing = (async () => {
        // One file after another: one thread of the pool the process shares, not three.
        for (const rowsFd of fds.slice(0, kinds.indexOf('log'))) await new Promise<void>((resolve) => fdatasync(rowsFd, () => resolve()));
        flushing = undefined;
      })();
    };
    return {
      path: (kind) => this.path(kind, generation),
      put: (vectors, codes, scales) => {
        put(fds[0], f32Bytes(vectors));
        put(fds[1], codes);
        put(fds[2], f32Bytes(scales));
      },
      putCodesAt: (row, codes, scales) => {
        put(fds[1], codes, row * (codes.length / scales.length));
        put(fds[2], f32Bytes(scales), row * 4);
      },
      commit: async (s, mean, keepOthers = false) => {
        try {
          await flushing;
          for (const fd of fds) fsyncSync(fd);
        } finally {
          closeAll();
        }
        let files: Record<string, [number, number, string]> = {};
        if (s.files instanceof CompactFiles) files = s.files.files;
        else for (const [name, f] of Object.entries(s.files)) files[name] = compactFile(f);
        const head = { version: 3, model: s.model, dim: s.dim, generation, mean: Buffer.from(f32Bytes(mean)).toString('base64') };
        await nodeFs.writeAtomic(join(this.dir, 'meta.json'), metaParts(head, s.rows, files));
        this.committed = { generation, rows: s.rows.length, logBytes: 0 };
        if (!keepOthers) await this.removeOtherGenerations(generation);
      },
      close: closeAll,
      discard: () => {
        closeAll();
        removeGeneration(this.dir, generation);
      },
    };
  }

  private async removeOtherGenerations(keep: number): Promise<void> {
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const m = /^(?:vectors|codes|scales|log|keywords|streamed)-(\d+)(?:\.spill-\d+)?\.(?:f32|bin|jsonl)$/.exec(name);
      // A file still open elsewhere cannot be removed on Windows: it goes at a later load.
      if (m && Number(m[1]) !== keep) await rm(join(this.dir, name), { force: true }).catch(() => undefined);
    }
  }

  /**
   * Appends an update: its rows (vectors, codes, scales), flushed, then its log line, flushed.
   * Anything a crash left past the committed lengths is cut off first. The writes and flushes run
   * in the thread pool: a slow disk does not hold the event loop.
   */
  async append(entry: LogEntry, dim: number, vectors: Float32Array, codes: Uint8Array, scales: Float32Array): Promise<void> {
    const c = this.committed;
    if (!c) throw new Error('The index store is not loaded.');
    const g = c.generation;
    this.files ??= {
      vectors: await open(this.path('vectors', g), 'r+'),
      codes: await open(this.path('codes', g), 'r+'),
      scales: await open(this.path('scales', g), 'r+'),
      log: await open(this.path('log', g), 'r+'),
    };
    const f = this.files;
    const cb = this.codeBytes(dim);
    const writeAt = async (file: FileHandle, data: Uint8Array, at: number) => {
      await file.truncate(at);
      let off = 0;
      while (off < data.length) off += (await file.write(data, off, data.length - off, at + off)).bytesWritten;
      await file.sync();
    };
    if (entry.add.length > 0) {
      await Promise.all([
        writeAt(f.vectors, f32Bytes(vectors), c.rows * dim * 4),
        writeAt(f.codes, codes, c.rows * cb),
        writeAt(f.scales, f32Bytes(scales), c.rows * 4),
      ]);
    }
    const json = JSON.stringify(entry);
    const line = Buffer.from(`${crc32(json)} ${json}\n`, 'utf8');
    await writeAt(f.log, line, c.logBytes);
    this.committed = { generation: g, rows: entry.rows, logBytes: c.logBytes + line.length };
  }

  close(): void {
    // Closed in the background: a write of this store never overlaps its close (appends are awaited).
    if (this.files) for (const f of Object.values(this.files)) void f.close().catch(() => undefined);
    this.files = undefined;
  }
}

/** Removes a generation's row files and log (one never committed: a build that stopped). */
/**
 * The metadata's JSON (`head` with the rows space-separated and the files), made in pieces of about
 * a megabyte as they are written: at a million rows it is some 80 MB, and one string of it (plus
 * what building it took) was held at once beside everything else a first build holds.
 */
function* metaParts(head: object, rows: readonly string[], files: Record<string, [number, number, string]>): Generator<Uint8Array> {
  const PIECE = 1 << 20;
  const whole = JSON.stringify(head);
  yield Buffer.from(`${whole.slice(0, -1)}${whole.length > 2 ? ',' : ''}"rows":"`);
  const ROWS = 16_384;
  for (let i = 0; i < rows.length; i += ROWS) yield Buffer.from((i > 0 ? ' ' : '') + JSON.stringify(rows.slice(i, i + ROWS).join(' ')).slice(1, -1));
  let piece = '","files":{';
  let first = true;
  for (const name in files) {
    piece += `${first ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(files[name])}`;
    first = false;
    if (piece.length >= PIECE) {
      yield Buffer.from(piece);
      piece = '';
    }
  }
  yield Buffer.from(`${piece}}}`);
}

export function removeGeneration(dir: string, generation: number): void {
  for (const name of [`vectors-${generation}.f32`, `codes-${generation}.bin`, `scales-${generation}.f32`, `log-${generation}.jsonl`])
    rmSync(join(dir, name), { force: true });
}

/** What is committed in a store folder: the snapshot's metadata and the log's good entries (no rows read). */
export interface CommittedState {
  snapshot: Snapshot;
  entries: LogEntry[];
  /** Rows after the last good entry. */
  rows: number;
  logBytes: number;
}

/**
 * Reads the committed state of a store folder: the metadata, then the log up to its first bad
 * line (a torn write), and checks that the row files are long enough. Pure reads: the snapshot
 * job's worker calls it too.
 */
export async function readCommitted(dir: string, codeBytes: (dim: number) => number): Promise<CommittedState | 'empty' | 'damaged' | 'v1'> {
  const text = await nodeFs.read(join(dir, 'meta.json'));
  if (!text) return 'empty';
  let meta: z.infer<typeof MetaSchema>;
  try {
    const raw = JSON.parse(text) as { version?: unknown };
    if (raw.version === 1) return 'v1';
    const r = MetaSchema.safeParse(raw);
    if (!r.success) return 'damaged';
    meta = r.data;
  } catch {
    return 'damaged';
  }
  const g = meta.generation;
  const meanBytes = Buffer.from(meta.mean, 'base64');
  if (meanBytes.length !== meta.dim * 4) return 'damaged';
  const mean = new Float32Array(meanBytes.buffer.slice(meanBytes.byteOffset, meanBytes.byteOffset + meanBytes.length));
  const files: Record<string, StoredFile> = {};
  const slices = new Slicer();
  for (const [name, value] of Object.entries(meta.files)) {
    if (meta.version === 3) {
      const r = CompactFileSchema.safeParse(value);
      const file = r.success ? expandFile(r.data) : undefined;
      if (!file) return 'damaged';
      files[name] = file;
    } else {
      const r = FileSchema.safeParse(value);
      if (!r.success) return 'damaged';
      files[name] = r.data;
    }
    await slices.maybeYield();
  }
  const metaRows = typeof meta.rows === 'string' ? (meta.rows ? meta.rows.split(' ') : []) : meta.rows;
  // The log: each good line is committed; the first bad one (a torn write) ends it.
  const entries: LogEntry[] = [];
  let rows = metaRows.length;
  let logBytes = 0;
  const log = await readFile(join(dir, `log-${g}.jsonl`), 'utf8').catch(() => '');
  for (const line of log.split('\n')) {
    const m = /^([0-9a-f]{8}) (.*)$/.exec(line);
    if (!m || crc32(m[2]) !== m[1]) break;
    let entry: LogEntry;
    try {
      const r = EntrySchema.safeParse(JSON.parse(m[2]));
      if (!r.success) break;
      entry = r.data;
    } catch {
      break;
    }
    if (entry.rows !== rows + entry.add.length) break;
    entries.push(entry);
    rows = entry.rows;
    logBytes += Buffer.byteLength(line, 'utf8') + 1;
  }
  const cb = codeBytes(meta.dim);
  const size = (name: string) =>
    stat(join(dir, name))
      .then((s) => s.size)
      .catch(() => -1);
  const sizes = await Promise.all([size(`vectors-${g}.f32`), size(`codes-${g}.bin`), size(`scales-${g}.f32`)]);
  if (sizes[0] < rows * meta.dim * 4 || sizes[1] < rows * cb || sizes[2] < rows * 4) return 'damaged';
  return { snapshot: { model: meta.model, dim: meta.dim, generation: g, mean, rows: metaRows, files }, entries, rows, logBytes };
}

/** The files of a store after its log: the snapshot's, with each entry's replacements and removals applied. */
export function filesAfter(state: Pick<CommittedState, 'snapshot' | 'entries'>): Map<string, StoredFile> {
  const files = new Map(Object.entries(state.snapshot.files));
  for (const e of state.entries) {
    for (const [file, entry] of Object.entries(e.files)) {
      if (entry) files.set(file, entry);
      else files.delete(file);
    }
  }
  return files;
}

/**
 * Reads the first `bytes` of a file into `into`, asynchronously in 16 MB pieces, four at a time
 * (the thread pool's size: from the page cache they copy in parallel); false when the file is
 * shorter.
 */
export async function readInto(path: string, into: Uint8Array, bytes: number): Promise<boolean> {
  const PIECE = 16 << 20;
  const file = await open(path, 'r');
  try {
    let next = 0;
    let whole = true;
    const reader = async () => {
      while (next < bytes && whole) {
        const at = next;
        next += PIECE;
        for (let off = at, end = Math.min(bytes, at + PIECE); off < end;) {
          const { bytesRead } = await file.read(into, off, end - off, off);
          if (bytesRead <= 0) {
            whole = false;
            return;
          }
          off += bytesRead;
        }
      }
    };
    await Promise.all([reader(), reader(), reader(), reader()]);
    return whole;
  } finally {
    await file.close();
  }
}
