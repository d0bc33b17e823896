/**
 * A stored keyword file read once, in term order, by a merge (`writeKeywordFile`): a first build's
 * batch (`keywordSpill.ts`). `StoredKeywords` holds each term's name, counts and block place in
 * memory for queries, about 10 MB per 65,536 chunks; a million chunks' batches held so were 150 MB
 * through the whole build and its merge. Here only the files and the chunks' lengths are held, and
 * the per-term sections are read through small windows as the merge walks them.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { HeaderSchema, MAGIC, readBlock, TRAILER, type Header, type MergeSource, type Postings } from './keywordStore';

/** Bytes of a section read at once. */
const WINDOW = 1 << 16;

function readExactly(fd: number, into: Uint8Array, at: number): void {
  for (let off = 0; off < into.length;) {
    const r = readSync(fd, into, off, into.length - off, at + off);
    if (r <= 0) throw new Error('the keyword file ended early');
    off += r;
  }
}

/** A section of the file read forwards through a window (moving back re-reads, it does not fail). */
class SectionWindow {
  private buffer = Buffer.alloc(0);
  /** The section offset of `buffer[0]`, and how many bytes from there were read. */
  private start = 0;
  private valid = 0;

  constructor(
    private readonly fd: number,
    private readonly at: number,
    private readonly size: number,
  ) {}

  /** Makes `[offset, offset + length)` of the section readable at `this.buffer[offset - this.start]`. */
  private cover(offset: number, length: number): number {
    if (offset < 0 || offset + length > this.size) throw new Error('a keyword section read out of bounds');
    if (offset < this.start || offset + length > this.start + this.valid) {
      const bytes = Math.min(Math.max(length, WINDOW), this.size - offset);
      if (this.buffer.length < bytes || this.buffer.length > WINDOW) this.buffer = Buffer.allocUnsafe(Math.max(bytes, WINDOW));
      this.start = offset;
      this.valid = bytes;
      readExactly(this.fd, this.buffer.subarray(0, bytes), this.at + offset);
    }
    return offset - this.start;
  }

  // `cover` first: it may replace the buffer (`this.buffer.readInt32LE(this.cover(…))` would read the old one).
  int32(i: number): number {
    const at = this.cover(i * 4, 4);
    return this.buffer.readInt32LE(at);
  }

  float64(i: number): number {
    const at = this.cover(i * 8, 8);
    return this.buffer.readDoubleLE(at);
  }

  text(offset: number, length: number): string {
    const at = this.cover(offset, length);
    return this.buffer.toString('utf8', at, at + length);
  }
}

export class KeywordRun implements MergeSource {
  readonly fileStarts: Int32Array;
  private scratch = new ArrayBuffer(1 << 16);

  private constructor(
    private fd: number | undefined,
    readonly files: string[],
    readonly lengths: Int32Array,
    readonly termCount: number,
    private readonly blocksEnd: number,
    private readonly postingCounts: SectionWindow,
    private readonly definitionCounts: SectionWindow,
    private readonly blockAt: SectionWindow,
    private readonly names: SectionWindow,
    private readonly termAt: SectionWindow,
    counts: number[],
  ) {
    this.fileStarts = new Int32Array(files.length + 1);
    counts.forEach((c, i) => (this.fileStarts[i + 1] = this.fileStarts[i] + c));
  }

  get docs(): number {
    return this.lengths.length;
  }

  /** Opens keyword file `path` of `generation` for one merge; undefined when it does not read. */
  static open(path: string, generation: number): KeywordRun | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'r');
      const size = fstatSync(fd).size;
      if (size < TRAILER) throw new Error('too short');
      const trailer = Buffer.alloc(TRAILER);
      readExactly(fd, trailer, size - TRAILER);
      const headerLength = trailer.readUInt32LE(0);
      if (trailer.readUInt32LE(4) !== MAGIC || headerLength > size - TRAILER) throw new Error('no trailer');
      const headerAt = size - TRAILER - headerLength;
      const headerBytes = Buffer.alloc(headerLength);
      readExactly(fd, headerBytes, headerAt);
      const parsed = HeaderSchema.safeParse(JSON.parse(headerBytes.toString('utf8')));
      if (!parsed.success || parsed.data.generation !== generation) throw new Error('another header');
      const h: Header = parsed.data;
      const window = (name: keyof Header['sections'], itemBytes: number) => {
        const [at, count] = h.sections[name];
        if (!Number.isSafeInteger(at) || !Number.isSafeInteger(count) || at < 0 || count < 0 || at + count * itemBytes > headerAt)
          throw new Error(`section ${name} out of bounds`);
        return new SectionWindow(fd!, at, count * itemBytes);
      };
      const terms = h.sections.postingCounts[1];
      const docs = h.files.reduce((n, [, c]) => n + c, 0);
      const lengths = new Int32Array(h.sections.lengths[1]);
      if (lengths.length !== docs) throw new Error('lengths');
      window('lengths', 4); // its bounds checked
      readExactly(fd, new Uint8Array(lengths.buffer), h.sections.lengths[0]);
      if (h.sections.definitionCounts[1] !== terms || h.sections.blockAt[1] !== terms || h.sections.termAt[1] !== terms + 1) throw new Error('section sizes');
      const blocksEnd = Math.min(...Object.values(h.sections).map(([at]) => at));
      const run = new KeywordRun(
        fd,
        h.files.map(([f]) => f),
        lengths,
        terms,
        blocksEnd,
        window('postingCounts', 4),
        window('definitionCounts', 4),
        window('blockAt', 8),
        window('terms', 1),
        window('termAt', 4),
        h.files.map(([, c]) => c),
      );
      return run;
    } catch {
      if (fd !== undefined) closeSync(fd);
      return undefined;
    }
  }

  termName(t: number): string {
    const from = this.termAt.int32(t);
    const to = this.termAt.int32(t + 1);
    if (to < from) throw new Error('the keyword file names its terms out of order');
    return this.names.text(from, to - from);
  }

  read(t: number, definers = false): Postings {
    if (this.fd === undefined) throw new Error('the keyword run is closed');
    const n = this.postingCounts.int32(t);
    const m = definers ? this.definitionCounts.int32(t) : 0;
    const at = this.blockAt.float64(t);
    const all = this.definitionCounts.int32(t);
    if (n < 0 || all < 0 || n > this.docs || all > this.docs || !(at >= 0) || at + n * 6 + all * 4 > this.blocksEnd)
      throw new Error(`term ${t}'s block is out of bounds`);
    const read = readBlock(this.fd, at, n, m, this.scratch);
    this.scratch = read.scratch;
    return read.postings;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
