/**
 * Writing a new snapshot generation of the search index (the first build, or folding the log
 * into a new snapshot): the mean of the live rows, every row encoded again around it, the row
 * files, then the metadata. Seconds of arithmetic for a large index, so it runs in a worker
 * thread (`snapshotWorker.ts`, started by `snapshotRunner.ts`); the same function runs inline
 * where no worker can start. It reads and writes only the store folder and returns the parts the
 * index keeps in memory, whose buffers the worker hands over without a copy.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import {
  compactFile,
  CompactFiles,
  expandFile,
  filesAfter,
  IndexStore,
  readCommitted,
  readInto,
  type SnapshotFiles,
  type StoredFile,
} from '../store/indexStore';
import type { KeywordState } from '../keywords/keywords';
import { keywordFile, StoredKeywords, writeKeywordFile } from '../keywords/keywordStore';
import { SpillingKeywords, type KeywordCounts } from '../keywords/keywordSpill';
import { addRows, normaliseRows, VectorIndex } from '../vectors/vectorIndex';

export type SnapshotJob =
  | {
      /** Fold generation `from` (its snapshot and log, as committed on disk) into generation `to`. */
      kind: 'fold';
      dir: string;
      model: string;
      from: number;
      to: number;
      /** The rows the caller has committed: the fold refuses a store that differs. */
      expectRows: number;
      headroom: number;
      inMemoryBytes: number;
    }
  | {
      /** Write generation `to` from vectors in memory (the first build; not yet normalised). */
      kind: 'build';
      dir: string;
      model: string;
      dim: number;
      to: number;
      /** The row hashes space-separated, and the files one JSON line each (`filesText`): strings cross threads in one copy, 100,000 small values would each be copied. */
      rowsText: string;
      filesText: string;
      vectors: Float32Array;
      /**
       * Where each row is (see `batchSource`): row `source[i]` of `rowsFile` when ≥ 0, else row
       * −(source[i] + 1) of `vectors`; without it, row i of `vectors`.
       */
      source?: Int32Array;
      rowsFile?: string;
      headroom: number;
      inMemoryBytes: number;
    };

/**
 * Store the keyword index of generation `to` (`keywordStore.ts`): stored generation `from`'s
 * chunks except those of the `masked` files, then the in-memory chunks of `delta` (its term names
 * one per line and its files as JSON in `termsText`/`filesText`: one string crosses threads in one copy).
 */
export interface KeywordsJob {
  kind: 'keywords';
  dir: string;
  to: number;
  from?: number;
  masked: string[];
  termsText: string;
  filesText: string;
  delta: Omit<KeywordState, 'terms' | 'files'>;
}

/** The wire form of a keywords job's delta, and its buffers (to transfer rather than copy). */
export function keywordsJob(
  dir: string,
  to: number,
  delta: KeywordState,
  base?: { from: number; masked: Iterable<string> },
): { job: KeywordsJob; transfer: ArrayBuffer[] } {
  const { terms, files, ...numbers } = delta;
  const job: KeywordsJob = {
    kind: 'keywords',
    dir,
    to,
    ...(base ? { from: base.from } : {}),
    masked: base ? [...base.masked] : [],
    termsText: terms.join('\n'),
    filesText: JSON.stringify(files),
    delta: numbers,
  };
  return { job, transfer: [...new Set(Object.values(numbers).map((a) => a.buffer as ArrayBuffer))] };
}

export async function runKeywordsJob(job: KeywordsJob): Promise<{ docs: number; terms: number }> {
  const delta: KeywordState = {
    ...job.delta,
    terms: job.termsText ? job.termsText.split('\n') : [],
    files: JSON.parse(job.filesText) as KeywordState['files'],
  };
  const stored = job.from === undefined ? undefined : await StoredKeywords.open(keywordFile(job.dir, job.from), job.from, () => Promise.resolve());
  if (job.from !== undefined && !stored) throw new Error(`the stored keyword index of generation ${job.from} does not read`);
  try {
    return writeKeywordFile(keywordFile(job.dir, job.to), job.to, delta, stored && { stored, masked: new Set(job.masked) });
  } finally {
    stored?.close();
  }
}

export interface SnapshotParts {
  generation: number;
  /** The chunk hash of each row of the new snapshot. */
  rows: string[];
  dim: number;
  mean: Float32Array;
  /** Codes and scales with room for `headroom` more rows. */
  codes: Uint8Array;
  scales: Float32Array;
  /**
   * Whether the index keeps the rows in memory (it reads them from the new vectors file itself, in
   * pieces: a 400 MB buffer handed over from the worker made the host's collector run at once).
   */
  inMemory: boolean;
}

export type SnapshotProgress = (done: number, total: number) => void;

/** Where a committed build's codes and scales are, for whoever reads them into the index's buffers (with room for more rows). */
export interface CodesFrom {
  codes: string;
  scales: string;
  rows: number;
  capacity: number;
  codeBytes: number;
}

function codesWritten(from: CodesFrom): boolean {
  const size = (path: string) => (existsSync(path) ? statSync(path).size : -1);
  return size(from.codes) >= from.rows * from.codeBytes && size(from.scales) >= from.rows * 4;
}

/** A build's codes and scales, read from its files into buffers with room for `capacity` rows. */
export async function readCodes(from: CodesFrom): Promise<{ codes: Uint8Array; scales: Float32Array }> {
  const codes = new Uint8Array(from.capacity * from.codeBytes);
  const scales = new Float32Array(from.capacity);
  const readBack = async (kind: 'codes' | 'scales', into: Uint8Array, bytes: number) => {
    if (!(await readInto(from[kind], into, bytes))) throw new Error(`the ${kind} written for this build do not read back`);
  };
  await readBack('codes', codes, from.rows * from.codeBytes);
  await readBack('scales', new Uint8Array(scales.buffer), from.rows * 4);
  return { codes, scales };
}

/** Rows per block: a block is read, encoded and written at once. */
const BLOCK = 2048;

export async function runSnapshotJob(job: SnapshotJob, onProgress?: SnapshotProgress): Promise<SnapshotParts> {
  return job.kind === 'fold' ? fold(job, onProgress) : build(job, onProgress);
}

const codeBytes = (dim: number) => VectorIndex.codeBytesFor(dim);

async function fold(job: Extract<SnapshotJob, { kind: 'fold' }>, onProgress?: SnapshotProgress): Promise<SnapshotParts> {
  const state = await readCommitted(job.dir, codeBytes);
  if (typeof state === 'string') throw new Error(`the stored index cannot be folded (${state})`);
  if (state.snapshot.generation !== job.from || state.rows !== job.expectRows) {
    throw new Error(`the stored index is generation ${state.snapshot.generation} with ${state.rows} rows, not ${job.from} with ${job.expectRows}`);
  }
  const { dim } = state.snapshot;
  const files = filesAfter(state);
  const held = new Set<string>();
  for (const f of files.values()) for (const c of f.chunks) held.add(c[2]);
  const all = [...state.snapshot.rows, ...state.entries.flatMap((e) => e.add)];
  const live: number[] = [];
  all.forEach((h, r) => held.has(h) && live.push(r));
  const fd = openSync(`${job.dir}/vectors-${job.from}.f32`, 'r');
  try {
    // Rows on disk are already normalised; read in file order, a block of rows at a time.
    const readRuns = runReader(fd, dim);
    const source = (i: number, n: number, into: Float32Array) => readRuns((k) => live[k], i, n, into);
    return await write(job, { dim, rows: live.map((r) => all[r]), files: Object.fromEntries(files), normalised: true, source }, onProgress);
  } finally {
    closeSync(fd);
  }
}

async function build(job: Extract<SnapshotJob, { kind: 'build' }>, onProgress?: SnapshotProgress): Promise<SnapshotParts> {
  const { dim } = job;
  const rows = job.rowsText ? job.rowsText.split(' ') : [];
  const files = parseFilesText(job.filesText);
  const from = job.source;
  if (!from || !job.rowsFile) {
    if (job.vectors.length < rows.length * dim) throw new Error(`${rows.length} rows need ${rows.length * dim} values, got ${job.vectors.length}`);
    const source = (i: number, n: number, into: Float32Array) => into.set(job.vectors.subarray(i * dim, (i + n) * dim));
    return write(job, { dim, rows, files, normalised: false, source }, onProgress);
  }
  if (from.length !== rows.length) throw new Error(`${rows.length} rows, ${from.length} sources`);
  const fd = openSync(job.rowsFile, 'r');
  try {
    const readRuns = runReader(fd, dim);
    const fromMemory = (at: number, into: Float32Array, offset: number) => {
      const k = -at - 1;
      if ((k + 1) * dim > job.vectors.length) throw new Error(`row ${k} is not among the ${job.vectors.length / dim} in memory`);
      into.set(job.vectors.subarray(k * dim, (k + 1) * dim), offset);
    };
    const source = (i: number, n: number, into: Float32Array) => readRuns((k) => from[k], i, n, into, fromMemory);
    return await write(job, { dim, rows, files, normalised: false, source }, onProgress);
  } finally {
    closeSync(fd);
  }
}

/** Two passes over the rows: their mean, then each row encoded around it and written. */
async function write(
  job: SnapshotJob,
  s: {
    dim: number;
    rows: string[];
    files: Record<string, StoredFile>;
    normalised: boolean;
    source: (first: number, count: number, into: Float32Array) => void;
  },
  onProgress?: SnapshotProgress,
): Promise<SnapshotParts> {
  const { dim, rows } = s;
  const n = rows.length;
  const block = new Float32Array(BLOCK * dim);
  const normalise = (count: number) => {
    if (!s.normalised) normaliseRows(block, count, dim);
  };
  const mean = new Float64Array(dim);
  for (let i = 0; i < n; i += BLOCK) {
    const count = Math.min(BLOCK, n - i);
    s.source(i, count, block);
    if (s.normalised) addRows(mean, block, count, dim);
    else normaliseRows(block, count, dim, mean);
    onProgress?.(Math.floor((i + count) / 2), n);
  }
  const mean32 = meanOf(mean, n);
  const encode = VectorIndex.encoder(dim, mean32);
  const cb = codeBytes(dim);
  const capacity = n + job.headroom;
  const inMemory = n * dim * 4 <= job.inMemoryBytes;
  const codes = new Uint8Array(capacity * cb);
  const scales = new Float32Array(capacity);
  const store = new IndexStore(job.dir, codeBytes, job.inMemoryBytes);
  // The previous generation stays: the index that asked for this one removes it once it has
  // taken the new one over (until then it may still append to it, or read rows from it).
  await store.writeSnapshot(
    { model: job.model, dim, generation: job.to, rows, files: s.files },
    (put) => {
      for (let i = 0; i < n; i += BLOCK) {
        const count = Math.min(BLOCK, n - i);
        s.source(i, count, block);
        normalise(count);
        const rowsOfBlock = block.subarray(0, count * dim);
        const enc = encode(rowsOfBlock, count);
        put(rowsOfBlock, enc.codes, enc.alphas);
        codes.set(enc.codes, i * cb);
        scales.set(enc.alphas, i);
        onProgress?.(Math.floor(n / 2 + (i + count) / 2), n);
      }
    },
    () => mean32,
    true,
  );
  store.close();
  return { generation: job.to, rows, dim, mean: mean32, codes, scales, inMemory };
}

/**
 * Fills `into` with rows `rowAt(i)` … `rowAt(i + n − 1)` of a vectors file, each run of consecutive
 * rows read at once. A negative row is not in the file: `elsewhere` puts it in place.
 */
function runReader(fd: number, dim: number) {
  const scratch = new Float32Array(BLOCK * dim);
  return (rowAt: (k: number) => number, i: number, n: number, into: Float32Array, elsewhere?: (row: number, into: Float32Array, offset: number) => void) => {
    for (let j = 0; j < n;) {
      const at = rowAt(i + j);
      if (at < 0) {
        if (!elsewhere) throw new Error(`row ${i + j} has no place in the file`);
        elsewhere(at, into, j * dim);
        j++;
        continue;
      }
      let end = j + 1;
      while (end < n && rowAt(i + end) === at + (end - j)) end++;
      readVectorRows(fd, dim, at, end - j, scratch);
      into.set(scratch.subarray(0, (end - j) * dim), j * dim);
      j = end;
    }
  };
}

/** Reads `count` rows of a vectors file from row `first` into the start of `into`. */
function readVectorRows(fd: number, dim: number, first: number, count: number, into: Float32Array): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, count * dim * 4);
  for (let off = 0; off < bytes.length;) {
    const n = readSync(fd, bytes, off, bytes.length - off, first * dim * 4 + off);
    if (n <= 0) throw new Error('the vectors file ended early');
    off += n;
  }
}

const meanOf = (sum: Float64Array, n: number) => Float32Array.from(sum, (x) => (n ? x / n : 0));

/**
 * How far a streamed build's provisional mean may be from the true one, as a share of a centred
 * row's expected length (√(1 − |mean|²) for unit rows), before every row is encoded again around
 * the true mean. Any centre keeps the ranking (<q, x − c> orders rows as <q, x> does); an offset δ
 * only moves the rows further from it, E|x − c|² = E|x − mean|² + |δ|², so the codes' estimation
 * error grows by √(1 + drift²): 3% at 0.25. Measured on the bench's hard sets (100,000 rows,
 * 1,536-d), the first 1,024 rows taken in a deliberately skewed order gave drifts up to 0.89 and
 * recall@10 stayed 1.000 (the candidates are re-scored exactly). The next fold centres on the true mean.
 */
export const MAX_MEAN_DRIFT = 0.25;

/** A file's chunk texts, in order, for a streamed build's keyword index, and its `fileLine` for the snapshot's metadata. */
export interface StreamedFileTexts {
  file: string;
  texts: string[];
  line: string;
}

/** The files a streamed build keeps: those whose texts it was sent, less `dropped`; `files` says how many that must be. */
export interface StreamedFilesKept {
  dropped: string[];
  files: number;
}

/**
 * A first build written while its embeddings arrive (`SnapshotBuilder`): started, fed rows and
 * texts, finished. With `keywordsApart`, the texts' keyword index is another thread's (the
 * `keyword-…` messages, `KeywordStream`): that thread's texts come without their `line`, this
 * one's without their texts, and `finish` brings what it stored.
 */
export type StreamMessage =
  | {
      kind: 'stream';
      dir: string;
      model: string;
      dim: number;
      to: number;
      inMemoryBytes: number;
      maxMeanDrift?: number;
      spillChunks?: number;
      keywordsApart?: true;
    }
  | { kind: 'rows'; rowsText: string; vectors: Float32Array }
  | { kind: 'texts'; files: StreamedFileTexts[] }
  | { kind: 'finish'; kept: StreamedFilesKept; headroom: number; keywords?: KeywordCounts }
  | { kind: 'keyword-stream'; dir: string; to: number; spillChunks?: number }
  | { kind: 'keyword-texts'; files: { file: string; texts: string[] }[] }
  | { kind: 'keyword-finish'; dropped: string[] }
  | { kind: 'close' };

/**
 * A first build written while the embeddings still arrive, so that only the last rows are left
 * to encode once they are all in. Each batch of rows is normalised, written, and encoded around a
 * provisional mean (that of the first batch, usually 1,024 rows); the true mean is summed as rows
 * come. At the end, if the two means are further apart than `maxMeanDrift` (say the first batch
 * was all documentation and the rest code), every row is read back and encoded again around the
 * true mean, which is what the batch build (`runSnapshotJob`) does in the first place. A build
 * that arrives in one batch is byte for byte the batch build's.
 */
export class SnapshotBuilder {
  private rows: string[] = [];
  /**
   * The files as the metadata keeps them, gathered with their texts: the host sends no list of a
   * build's files at the end (80 MB of JSON at a million chunks, held by both threads at the peak).
   */
  private readonly fileEntries: Record<string, [number, number, string]> = Object.create(null) as Record<string, [number, number, string]>;
  /** The keyword index of the files' texts (items: a chunk's place in its file), stored beside the snapshot at the end; undefined when another thread keeps it (`keywordsApart`). */
  private readonly keywords: SpillingKeywords | undefined;
  private textsSent = false;
  private readonly sum: Float64Array;
  private mean: Float32Array | undefined;
  private encode: ReturnType<typeof VectorIndex.encoder> | undefined;
  private readonly codeBytes: number;

  private constructor(
    private readonly job: Extract<StreamMessage, { kind: 'stream' }>,
    private readonly files: SnapshotFiles,
  ) {
    this.codeBytes = codeBytes(job.dim);
    this.keywords = job.keywordsApart ? undefined : new SpillingKeywords(job.dir, job.to, job.spillChunks);
    this.sum = new Float64Array(job.dim);
  }

  static async start(job: Extract<StreamMessage, { kind: 'stream' }>): Promise<SnapshotBuilder> {
    const files = await new IndexStore(job.dir, codeBytes, job.inMemoryBytes).openSnapshot(job.to);
    return new SnapshotBuilder(job, files);
  }

  /** Rows in arrival order (`hashes[i]` is row i of `vectors`, not yet normalised; normalised in place). */
  add(hashes: string[], vectors: Float32Array): void {
    const { dim } = this.job;
    const n = hashes.length;
    if (vectors.length < n * dim) throw new Error(`${n} rows need ${n * dim} values, got ${vectors.length}`);
    if (n === 0) return;
    const rows = vectors.subarray(0, n * dim);
    normaliseRows(rows, n, dim, this.sum);
    if (!this.encode) {
      this.mean = meanOf(this.sum, n);
      this.encode = VectorIndex.encoder(dim, this.mean);
    }
    // The codes go to their file only: read back once at the end (a million rows' codes are 128 MB, and a growing copy held twice that).
    const enc = this.encode(rows, n);
    this.files.put(rows, enc.codes, enc.alphas);
    for (const h of hashes) this.rows.push(h);
  }

  /** Files' chunk texts, tokenised into the keyword index as they come unless another thread keeps it (a file sent again replaces its chunks). */
  async addTexts(files: StreamedFileTexts[]): Promise<void> {
    for (const f of files) {
      const [, size, mtimeMs, chunks] = JSON.parse(f.line) as [string, number, number, string];
      this.fileEntries[f.file] = [size, mtimeMs, chunks];
      await this.keywords?.setFile(f.file, f.texts);
    }
    this.textsSent ||= files.length > 0;
  }

  /**
   * Flushes the rows and writes the metadata (with the files sent with their texts, less those
   * `kept` drops); the rows are encoded again first if the mean moved too far. Then the keyword
   * index of those files is stored as the snapshot's (`keywordStore.ts`), or, kept apart, is what
   * `apart` says the other thread stored; `keywords` is undefined when that failed (the snapshot
   * stands: the caller indexes the keywords itself). Throws when the files kept are not as many as
   * the caller expects (then nothing is committed).
   */
  async finish(
    kept: StreamedFilesKept,
    headroom: number,
    codes: 'read' | 'caller' = 'read',
    apart?: KeywordCounts,
  ): Promise<SnapshotParts & { reencoded: boolean; keywords?: KeywordCounts; codesFrom?: CodesFrom }> {
    const { dim } = this.job;
    const n = this.rows.length;
    const mean = meanOf(this.sum, n);
    let reencoded = false;
    if (n > 0 && this.mean && drift(mean, this.mean) > (this.job.maxMeanDrift ?? MAX_MEAN_DRIFT)) {
      this.reencode(mean);
      reencoded = true;
    } else if (this.mean) mean.set(this.mean);
    for (const file of kept.dropped) delete this.fileEntries[file];
    const held = Object.keys(this.fileEntries).length;
    if (held !== kept.files) throw new Error(`the build was sent ${held} files' texts and keeps ${kept.files} files`);
    const files = new CompactFiles(this.fileEntries);
    // The keywords first (their file is removed with the generation's others if the commit never comes).
    let keywords: KeywordCounts | undefined;
    if (!this.keywords) keywords = apart;
    else if (this.textsSent) keywords = await this.keywords.finish((file) => files.files[file] !== undefined).catch(() => undefined);
    const codesFrom: CodesFrom = {
      codes: this.files.path('codes'),
      scales: this.files.path('scales'),
      rows: n,
      capacity: n + headroom,
      codeBytes: this.codeBytes,
    };
    // Checked before the commit, which must be the last step that can fail.
    if (!codesWritten(codesFrom)) throw new Error('the codes written for this build are short');
    await this.files.commit({ model: this.job.model, dim, rows: this.rows, files }, mean, true);
    const parts = {
      generation: this.job.to,
      rows: this.rows,
      dim,
      mean,
      inMemory: n * dim * 4 <= this.job.inMemoryBytes,
      reencoded,
      ...(keywords ? { keywords } : {}),
    };
    // Read by the caller once this thread is gone (`codes: 'caller'`): the merge's garbage goes with it instead of sitting under 140 MB of codes.
    if (codes === 'caller') return { ...parts, codes: new Uint8Array(0), scales: new Float32Array(0), codesFrom };
    return { ...parts, ...(await readCodes(codesFrom)) };
  }

  /** Rows written so far. */
  get rowCount(): number {
    return this.rows.length;
  }

  /** Stops: the files written so far are removed (the store's metadata never named them). */
  discard(): void {
    this.keywords?.discard();
    this.files.discard();
  }

  /** Stops, leaving the files written so far (for the caller to read back, then remove). */
  close(): void {
    this.keywords?.discard();
    this.files.close();
  }

  private reencode(mean: Float32Array): void {
    const { dim } = this.job;
    const n = this.rows.length;
    const encode = VectorIndex.encoder(dim, mean);
    const block = new Float32Array(BLOCK * dim);
    const fd = openSync(this.files.path('vectors'), 'r');
    try {
      for (let i = 0; i < n; i += BLOCK) {
        const count = Math.min(BLOCK, n - i);
        readVectorRows(fd, dim, i, count, block);
        const enc = encode(block.subarray(0, count * dim), count);
        this.files.putCodesAt(i, enc.codes, enc.alphas);
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** |a − b| over the expected length of a centred unit row around `a` (√(1 − |a|²)). */
function drift(a: Float32Array, b: Float32Array): number {
  let d2 = 0;
  let a2 = 0;
  for (let i = 0; i < a.length; i++) {
    d2 += (a[i] - b[i]) ** 2;
    a2 += a[i] ** 2;
  }
  return Math.sqrt(d2) / Math.sqrt(Math.max(1e-6, 1 - a2));
}

/** One line of a build job's `filesText`: a file and its chunks as version 3's metadata keeps them. */
export function fileLine(name: string, f: StoredFile): string {
  return JSON.stringify([name, ...compactFile(f)]);
}

export function parseFilesText(text: string): Record<string, StoredFile> {
  const files: Record<string, StoredFile> = {};
  for (const line of text ? text.split('\n') : []) {
    const [name, ...compact] = JSON.parse(line) as [string, number, number, string];
    const file = expandFile(compact);
    if (!file) throw new Error(`the chunks of ${name} do not read`);
    files[name] = file;
  }
  return files;
}
