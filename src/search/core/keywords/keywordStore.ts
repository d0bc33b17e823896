/**
 * The keyword index on disk beside each snapshot (`keywords-G.bin`), its postings left in the
 * file: a query reads only its own terms' postings (one read each), so the memory a large index
 * costs is the term names, each chunk's length and a few numbers per term, not the postings (a
 * million chunks hold about 50 million). Written by a worker after the first build and after
 * each fold, from the previous file minus the files changed since plus the in-memory index of
 * those (`writeKeywordFile`); read by `StoredKeywords`. A cache of what the files say: checked
 * against the snapshot when opened, and anything missing or damaged falls back to tokenising.
 *
 * Layout (little-endian):
 *   blocks     per term: its chunks' numbers (int32, ascending), their counts (uint16), then the
 *              chunks that define the term (int32)
 *   sections   lengths (int32 per chunk), postingCounts and definitionCounts (int32 per term),
 *              blockAt (float64 per term), terms (the names in byte order, UTF-8, end to end) and
 *              termAt (int32, where each name starts, one more than the terms), each 8-byte aligned
 *   header     JSON: version, generation, the files with their chunk counts (in chunk order), the
 *              sections' places
 *   trailer    the header's length (uint32), then "MGK3"
 * A chunk's file, lines and hash are the snapshot's own (the file's chunks in order). The names
 * are found by binary search over the bytes: two million terms open without two million strings.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import type { KeywordState } from './keywords';

export const MAGIC = 0x334b474d; // "MGK3" read as a little-endian uint32
export const TRAILER = 8;

const isFileCount = (v: unknown): boolean => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number';

export const HeaderSchema = z.object({
  version: z.literal(3),
  generation: z.number(),
  /**
   * [file, chunk count] in chunk order, checked in one pass: zod's check of each item as a tuple
   * took 30–70 ms the first time on a 12,500-file header, on the extension host's thread.
   */
  files: z.custom<[string, number][]>((v) => Array.isArray(v) && v.every(isFileCount)),
  totalLength: z.number(),
  /** [byte offset, length in items] of each section. */
  sections: z.object({
    lengths: z.tuple([z.number(), z.number()]),
    postingCounts: z.tuple([z.number(), z.number()]),
    definitionCounts: z.tuple([z.number(), z.number()]),
    blockAt: z.tuple([z.number(), z.number()]),
    terms: z.tuple([z.number(), z.number()]),
    termAt: z.tuple([z.number(), z.number()]),
  }),
});
export type Header = z.infer<typeof HeaderSchema>;

export const keywordFile = (dir: string, generation: number) => join(dir, `keywords-${generation}.bin`);

/** A term's block: the chunks that have it with their counts, and (when asked for) the chunks defining it. */
export interface Postings {
  docs: Int32Array;
  tfs: Uint16Array;
  definers: Int32Array;
}

/** A stored keyword index, open for queries: postings are read from the file when a query needs them. */
export class StoredKeywords {
  private readonly fileIds = new Map<string, number>();
  /** Where each file's chunks start (one more entry than files). */
  readonly fileStarts: Int32Array;
  private scratch = new ArrayBuffer(1 << 16);

  private constructor(
    private fd: number | undefined,
    readonly generation: number,
    readonly files: string[],
    readonly lengths: Int32Array,
    readonly totalLength: number,
    private readonly termBytes: Buffer,
    private readonly termAt: Int32Array,
    readonly postingCounts: Int32Array,
    readonly definitionCounts: Int32Array,
    readonly blockAt: Float64Array,
  ) {
    this.fileStarts = new Int32Array(files.length + 1);
  }

  get docs(): number {
    return this.lengths.length;
  }

  /**
   * Opens a stored index; undefined when there is none, it does not read, or (with `expect`) it
   * does not hold exactly these files with these chunk counts. `yieldNow` is awaited between slices.
   */
  static async open(
    path: string,
    generation: number,
    yieldNow: () => Promise<void>,
    expect?: (files: [string, number][]) => boolean,
  ): Promise<StoredKeywords | undefined> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(path, 'r');
      const read = async (at: number, bytes: number) => {
        const out = new Uint8Array(bytes);
        for (let off = 0; off < bytes;) {
          const { bytesRead } = await handle!.read(out, off, bytes - off, at + off);
          if (bytesRead <= 0) throw new Error('short read');
          off += bytesRead;
        }
        return out;
      };
      const size = (await handle.stat()).size;
      if (size < TRAILER) return undefined;
      const trailer = new DataView((await read(size - TRAILER, TRAILER)).buffer);
      const headerLength = trailer.getUint32(0, true);
      if (trailer.getUint32(4, true) !== MAGIC || headerLength > size - TRAILER) return undefined;
      const headerAt = size - TRAILER - headerLength;
      const parsed = HeaderSchema.safeParse(JSON.parse(Buffer.from(await read(headerAt, headerLength)).toString('utf8')));
      if (!parsed.success || parsed.data.generation !== generation) return undefined;
      const h: Header = parsed.data;
      if (expect && !expect(h.files)) return undefined;
      const section = async (name: keyof Header['sections'], itemBytes: number) => {
        const [at, count] = h.sections[name];
        if (!Number.isSafeInteger(at) || !Number.isSafeInteger(count) || at < 0 || count < 0 || at + count * itemBytes > headerAt)
          throw new Error(`section ${name} out of bounds`);
        const bytes = await read(at, count * itemBytes);
        await yieldNow();
        return bytes.buffer;
      };
      const lengths = new Int32Array(await section('lengths', 4));
      const postingCounts = new Int32Array(await section('postingCounts', 4));
      const definitionCounts = new Int32Array(await section('definitionCounts', 4));
      const blockAt = new Float64Array(await section('blockAt', 8));
      const termBytes = Buffer.from(await section('terms', 1));
      const termAt = new Int32Array(await section('termAt', 4));
      const t = termAt.length - 1;
      if (t < 0 || termAt[0] !== 0 || termAt[t] !== termBytes.length) return undefined;
      const docs = h.files.reduce((n, [, c]) => n + c, 0);
      if (lengths.length !== docs || postingCounts.length !== t || definitionCounts.length !== t || blockAt.length !== t) return undefined;
      // Every block inside the blocks' region (before the first section).
      const blocksEnd = Math.min(...Object.values(h.sections).map(([at]) => at));
      for (let i = 0; i < t; i++) {
        const n = postingCounts[i];
        const m = definitionCounts[i];
        if (n < 0 || m < 0 || n > docs || m > docs || !(blockAt[i] >= 0) || blockAt[i] + n * 6 + m * 4 > blocksEnd || termAt[i + 1] < termAt[i])
          return undefined;
        if (i % 8192 === 0) await yieldNow();
      }
      const stored = new StoredKeywords(
        undefined,
        generation,
        h.files.map(([f]) => f),
        lengths,
        h.totalLength,
        termBytes,
        termAt,
        postingCounts,
        definitionCounts,
        blockAt,
      );
      h.files.forEach(([file, count], i) => {
        stored.fileIds.set(file, i);
        stored.fileStarts[i + 1] = stored.fileStarts[i] + count;
      });
      // The descriptor stays open for the queries' reads (closed by `close`).
      stored.fd = openSync(path, 'r');
      return stored;
    } catch {
      return undefined;
    } finally {
      await handle?.close();
    }
  }

  get termCount(): number {
    return this.termAt.length - 1;
  }

  /** Term `term`'s number: a binary search over the stored names (in byte order). */
  termId(term: string): number | undefined {
    const q = Buffer.from(term, 'utf8');
    let lo = 0;
    let hi = this.termCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = q.compare(this.termBytes, this.termAt[mid], this.termAt[mid + 1]);
      if (c === 0) return mid;
      if (c < 0) hi = mid - 1;
      else lo = mid + 1;
    }
    return undefined;
  }

  termName(t: number): string {
    return this.termBytes.toString('utf8', this.termAt[t], this.termAt[t + 1]);
  }

  fileIndex(file: string): number | undefined {
    return this.fileIds.get(file);
  }

  /** The file and the chunk's place in it of chunk `doc`. */
  locate(doc: number): { file: string; index: number } {
    let lo = 0;
    let hi = this.files.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.fileStarts[mid] <= doc) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.files[lo], index: doc - this.fileStarts[lo] };
  }

  /**
   * Term `t`'s postings (and the chunks defining it when `definers`), in one read. The arrays are
   * views of a scratch buffer: valid until the next call.
   */
  read(t: number, definers = false): Postings {
    if (this.fd === undefined) throw new Error('the stored keyword index is closed');
    const read = readBlock(this.fd, this.blockAt[t], this.postingCounts[t], definers ? this.definitionCounts[t] : 0, this.scratch);
    this.scratch = read.scratch;
    return read.postings;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * A term's block at `at` with `n` postings and `m` definers, read in one call into `scratch` (a
 * larger one when it is too small, returned with it). The arrays are views of it: valid until it
 * is used again.
 */
export function readBlock(fd: number, at: number, n: number, m: number, scratch: ArrayBuffer): { postings: Postings; scratch: ArrayBuffer } {
  const bytes = n * 6 + m * 4;
  // Docs (int32) at 0, definers (int32) after them, counts (uint16) last: each view aligned.
  const need = n * 4 + m * 4 + n * 2 + 8;
  if (scratch.byteLength < need) scratch = new ArrayBuffer(Math.max(need, scratch.byteLength * 2));
  const raw = new Uint8Array(scratch, 0, bytes);
  for (let off = 0; off < bytes;) {
    const r = readSync(fd, raw, off, bytes - off, at + off);
    if (r <= 0) throw new Error('the keyword file ended early');
    off += r;
  }
  // On disk: docs, counts, definers. The counts move after the definers so each view is aligned.
  if (m === 0) return { scratch, postings: { docs: new Int32Array(scratch, 0, n), definers: new Int32Array(0), tfs: new Uint16Array(scratch, n * 4, n) } };
  const all = new Uint8Array(scratch);
  const tfBytes = all.slice(n * 4, n * 6);
  all.copyWithin(n * 4, n * 6, n * 6 + m * 4);
  all.set(tfBytes, n * 4 + m * 4);
  return {
    scratch,
    postings: { docs: new Int32Array(scratch, 0, n), definers: new Int32Array(scratch, n * 4, m), tfs: new Uint16Array(scratch, n * 4 + m * 4, n) },
  };
}

/** Writes a file through a buffer, remembering where it is. */
class BufferedWriter {
  private readonly buffer = Buffer.allocUnsafe(4 << 20);
  private used = 0;
  at = 0;

  constructor(private readonly fd: number) {}

  put(bytes: Uint8Array): void {
    if (bytes.length > this.buffer.length - this.used) this.flush();
    if (bytes.length > this.buffer.length) this.writeAll(bytes);
    else {
      this.buffer.set(bytes, this.used);
      this.used += bytes.length;
    }
    this.at += bytes.length;
  }

  align(to: number): void {
    const pad = (to - (this.at % to)) % to;
    if (pad) this.put(new Uint8Array(pad));
  }

  flush(): void {
    this.writeAll(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  private writeAll(bytes: Uint8Array): void {
    for (let off = 0; off < bytes.length;) off += writeSync(this.fd, bytes, off, bytes.length - off);
  }
}

const bytesOf = (a: Int32Array | Uint16Array | Float64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** A term's chunks in compressed-row form: `at[t]` .. `at[t + 1]` index `docs` (and `tfs`). */
function byTerm(terms: number, docCount: number, counts: Int32Array, ids: Int32Array, tfs: Uint16Array | undefined, firstDoc: number) {
  const at = new Int32Array(terms + 1);
  for (const id of ids) at[id + 1]++;
  for (let t = 0; t < terms; t++) at[t + 1] += at[t];
  const fill = at.slice(0, terms);
  const docs = new Int32Array(ids.length);
  const outTfs = tfs && new Uint16Array(ids.length);
  let k = 0;
  for (let d = 0; d < docCount; d++) {
    for (let j = 0; j < counts[d]; j++, k++) {
      const p = fill[ids[k]]++;
      docs[p] = firstDoc + d;
      if (outTfs) outTfs[p] = tfs[k];
    }
  }
  return { at, docs, tfs: outTfs };
}

/**
 * What a merge reads of a stored index: its files and chunk lengths, and its terms in order
 * (`termName` and `read` asked with a term number that never goes down). `StoredKeywords` is one;
 * `KeywordRun` (a first build's batch) reads its terms from the file as the merge goes.
 */
export interface MergeSource {
  readonly files: string[];
  readonly fileStarts: Int32Array;
  readonly lengths: Int32Array;
  readonly docs: number;
  readonly termCount: number;
  termName(t: number): string;
  read(t: number, definers?: boolean): Postings;
}

/** A stored keyword index to carry into a new one, less the chunks of its `masked` files. */
export interface KeywordBase {
  stored: MergeSource;
  masked: ReadonlySet<string>;
}

/** Bytes end to end in a buffer that doubles: names and numbers for millions of terms without an object each. */
class Growing {
  bytes = Buffer.allocUnsafe(1 << 16);
  used = 0;

  reserve(n: number): void {
    if (this.used + n <= this.bytes.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.used + n, this.bytes.length * 2));
    this.bytes.copy(next, 0, 0, this.used);
    this.bytes = next;
  }

  name(text: string): void {
    this.reserve(text.length * 3);
    this.used += this.bytes.write(text, this.used, 'utf8');
  }

  int32(v: number): void {
    this.reserve(4);
    this.used = this.bytes.writeInt32LE(v, this.used);
  }

  float64(v: number): void {
    this.reserve(8);
    this.used = this.bytes.writeDoubleLE(v, this.used);
  }

  get view(): Uint8Array {
    return this.bytes.subarray(0, this.used);
  }
}

/**
 * The chunks of a new keyword file: each base's kept files in order, then the delta's; with each
 * base's chunk numbers renumbered (-1: a masked file's), the chunks' lengths and their total, and
 * the number of the delta's first chunk.
 */
function mergedChunks(
  bases: KeywordBase[],
  delta: KeywordState,
): { files: [string, number][]; baseDocs: Int32Array[]; lengths: Int32Array; totalLength: number; firstDelta: number } {
  const files: [string, number][] = [];
  const baseDocs = bases.map(({ stored: b, masked }) => {
    const map = new Int32Array(b.docs).fill(-1);
    b.files.forEach((file, i) => {
      if (masked.has(file)) return;
      files.push([file, b.fileStarts[i + 1] - b.fileStarts[i]]);
      for (let d = b.fileStarts[i]; d < b.fileStarts[i + 1]; d++) map[d] = 0;
    });
    return map;
  });
  const docCount = baseDocs.reduce((n, map) => n + map.reduce((k, x) => k + (x === 0 ? 1 : 0), 0), 0) + delta.lengths.length;
  const lengths = new Int32Array(docCount);
  let next = 0;
  let totalLength = 0;
  bases.forEach(({ stored: b }, k) => {
    const map = baseDocs[k];
    for (let d = 0; d < map.length; d++) {
      if (map[d] < 0) continue;
      map[d] = next;
      lengths[next++] = b.lengths[d];
      totalLength += b.lengths[d];
    }
  });
  const firstDelta = next;
  for (const f of delta.files) files.push([f.file, f.count]);
  for (const l of delta.lengths) {
    lengths[next++] = l;
    totalLength += l;
  }
  return { files, baseDocs, lengths, totalLength, firstDelta };
}

/**
 * Writes keyword file `path` for `generation` (atomically: a temporary file flushed, then renamed):
 * the chunks of each base (open stored indexes, in order) except those of its `masked` files, then
 * the in-memory chunks of `delta`. Terms no chunk has any longer are left out. The terms of all of
 * them are merged by name as they are written, a base's blocks read one term at a time (a first
 * build's batches, stored as they fill, are merged so without a term map of the whole index).
 * Runs in the snapshot worker (synchronous writes).
 */
export function writeKeywordFile(path: string, generation: number, delta: KeywordState, base?: KeywordBase | KeywordBase[]): { docs: number; terms: number } {
  const bases = base === undefined ? [] : Array.isArray(base) ? base : [base];
  const { files, baseDocs, lengths, totalLength, firstDelta } = mergedChunks(bases, delta);
  const deltaTerms = delta.terms.length;
  const postings = byTerm(deltaTerms, delta.lengths.length, delta.termCounts, delta.termIds, delta.tfs, firstDelta);
  const defs = byTerm(deltaTerms, delta.lengths.length, delta.defCounts, delta.defIds, undefined, firstDelta);
  // Names are ASCII (identifiers), so string order is byte order. The stored ones are in order already.
  const byName = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const deltaOrder = Int32Array.from(delta.terms.keys()).sort((x, y) => byName(delta.terms[x], delta.terms[y]));

  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx');
  try {
    const out = new BufferedWriter(fd);
    const names = new Growing();
    const termAt = new Growing();
    const postingCounts = new Growing();
    const definitionCounts = new Growing();
    const blockAt = new Growing();
    termAt.int32(0);
    let docs = new Int32Array(1024);
    let tfs = new Uint16Array(1024);
    let definers = new Int32Array(256);
    let n = 0;
    let m = 0;
    const reserve = (moreN: number, moreM: number) => {
      if (docs.length < n + moreN) {
        const size = Math.max(n + moreN, docs.length * 2);
        const d = new Int32Array(size);
        d.set(docs.subarray(0, n));
        const t = new Uint16Array(size);
        t.set(tfs.subarray(0, n));
        docs = d;
        tfs = t;
      }
      if (definers.length < m + moreM) {
        const d = new Int32Array(Math.max(m + moreM, definers.length * 2));
        d.set(definers.subarray(0, m));
        definers = d;
      }
    };
    // Each source's next term: the bases' in their stored order, the delta's sorted by name.
    const cursor = bases.map(() => 0);
    const head = bases.map(({ stored }) => (stored.termCount > 0 ? stored.termName(0) : undefined));
    let nextDelta = 0;
    for (;;) {
      let name: string | undefined = nextDelta < deltaTerms ? delta.terms[deltaOrder[nextDelta]] : undefined;
      for (const h of head) if (h !== undefined && (name === undefined || byName(h, name) < 0)) name = h;
      if (name === undefined) break;
      n = 0;
      m = 0;
      bases.forEach(({ stored: b }, k) => {
        if (head[k] !== name) return;
        const p = b.read(cursor[k], true);
        const map = baseDocs[k];
        reserve(p.docs.length, p.definers.length);
        for (let i = 0; i < p.docs.length; i++) {
          const x = p.docs[i];
          const d = x >= 0 && x < map.length ? map[x] : -1;
          if (d < 0) continue;
          docs[n] = d;
          tfs[n++] = p.tfs[i];
        }
        for (const x of p.definers) {
          const d = x >= 0 && x < map.length ? map[x] : -1;
          if (d >= 0) definers[m++] = d;
        }
        cursor[k]++;
        head[k] = cursor[k] < b.termCount ? b.termName(cursor[k]) : undefined;
      });
      if (nextDelta < deltaTerms && delta.terms[deltaOrder[nextDelta]] === name) {
        const t = deltaOrder[nextDelta++];
        const fromDelta = postings.at[t + 1] - postings.at[t];
        const defsFromDelta = defs.at[t + 1] - defs.at[t];
        reserve(fromDelta, defsFromDelta);
        docs.set(postings.docs.subarray(postings.at[t], postings.at[t + 1]), n);
        tfs.set(postings.tfs!.subarray(postings.at[t], postings.at[t + 1]), n);
        n += fromDelta;
        definers.set(defs.docs.subarray(defs.at[t], defs.at[t + 1]), m);
        m += defsFromDelta;
      }
      if (n === 0 && m === 0) continue;
      names.name(name);
      termAt.int32(names.used);
      postingCounts.int32(n);
      definitionCounts.int32(m);
      blockAt.float64(out.at);
      out.put(bytesOf(docs.subarray(0, n)));
      out.put(bytesOf(tfs.subarray(0, n)));
      out.put(bytesOf(definers.subarray(0, m)));
    }
    const terms = postingCounts.used / 4;
    const sections: Record<string, [number, number]> = {};
    const section = (name: string, data: Uint8Array, count: number) => {
      out.align(8);
      sections[name] = [out.at, count];
      out.put(data);
    };
    section('lengths', bytesOf(lengths), lengths.length);
    section('postingCounts', postingCounts.view, terms);
    section('definitionCounts', definitionCounts.view, terms);
    section('blockAt', blockAt.view, terms);
    section('terms', names.view, names.used);
    section('termAt', termAt.view, terms + 1);
    const header = Buffer.from(JSON.stringify({ version: 3, generation, files, totalLength, sections }), 'utf8');
    out.put(header);
    const trailer = Buffer.alloc(TRAILER);
    trailer.writeUInt32LE(header.length, 0);
    trailer.writeUInt32LE(MAGIC, 4);
    out.put(trailer);
    out.flush();
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, path);
    return { docs: lengths.length, terms };
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw err;
  }
}
