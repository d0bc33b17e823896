/**
 * The keyword side of hybrid search: BM25 over identifiers and words, with identifiers split the
 * way code names things (`invoiceTotal`, `invoice_total` and `InvoiceTotal` all give `invoice`,
 * `total` and the whole name), and the names each chunk defines. In memory, optionally over a
 * stored index whose postings stay on disk (`keywordStore.ts`); the search index keeps it in step
 * with the chunks it stores.
 */
import type { StoredKeywords } from './keywordStore';
import { NameTable } from './nameTable';

export interface KeywordHit<T> {
  item: T;
  score: number;
  /** Query terms found in the chunk. */
  matched: string[];
  /** The query names an identifier this chunk defines (`function name`, `class Name`, …). */
  defines?: string;
}

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const STOP = new Set([
  'the',
  'a',
  'an',
  'and',
  'or',
  'of',
  'to',
  'in',
  'is',
  'it',
  'for',
  'on',
  'at',
  'by',
  'be',
  'as',
  'with',
  'this',
  'that',
  'where',
  'what',
  'how',
  'which',
  'does',
  'do',
  'are',
  'from',
]);
const DEFINITION =
  /\b(?:function\*?|class|interface|type|enum|struct|trait|impl|def|fn|func|const|let|var|module|namespace|record|object)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)|^\s*(?:(?:public|private|protected|static|async|export|default|override|readonly)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{=]+)?\{/gm;

/** The parts of an identifier: camelCase, PascalCase, snake_case, kebab and digits split, lower-cased. */
export function identifierParts(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+|(?<=\D)(?=\d)|(?<=\d)(?=\D)/)
    .map((p) => p.toLowerCase())
    .filter((p) => p.length >= 2);
}

/** The terms each identifier gives, remembered: code repeats its names, and splitting them is most of the work. */
const termsOfName = new Map<string, readonly string[]>();
const NAME_CACHE_LIMIT = 200_000;

function namesTerms(name: string): readonly string[] {
  let terms = termsOfName.get(name);
  if (terms) return terms;
  const whole = name.toLowerCase();
  const parts = identifierParts(name);
  const out: string[] = [];
  if (!STOP.has(whole) && whole.length >= 2) out.push(whole);
  if (parts.length > 1) for (const p of parts) if (!STOP.has(p)) out.push(p);
  terms = out;
  if (termsOfName.size >= NAME_CACHE_LIMIT) termsOfName.clear();
  termsOfName.set(name, terms);
  return terms;
}

/** The terms of a text: each identifier whole (lower-cased) and its parts; common words left out. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IDENTIFIER)) for (const t of namesTerms(m[0])) out.push(t);
  return out;
}

/** Names a chunk defines (functions, classes, types, variables, methods), lower-cased. */
export function definitionsOf(text: string): string[] {
  // The one pattern, run from its start (`matchAll` makes a copy of it per call), and a chunk's
  // few names kept in a list: a first build asks this of every chunk.
  const out: string[] = [];
  DEFINITION.lastIndex = 0;
  for (let m = DEFINITION.exec(text); m; m = DEFINITION.exec(text)) {
    const name = m[1] ?? m[2];
    if (!name || NOT_DEFINITIONS.has(name)) continue;
    const lower = name.toLowerCase();
    if (!out.includes(lower)) out.push(lower);
  }
  return out;
}

/** Statements the second form would read as methods (`if (…) {`). */
const NOT_DEFINITIONS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function']);

/** Whether a query reads as an identifier (one word with code casing or `_`, or a dotted name). */
export function identifierQuery(query: string): string | undefined {
  const q = query.trim();
  if (!/^[A-Za-z_$][\w$.]*$/.test(q)) return undefined;
  const last = q.split('.').at(-1)!;
  const codeLike = /[a-z][A-Z]|_|^[A-Z][a-z]+[A-Z]|\./.test(q) || identifierParts(last).length > 1;
  return codeLike ? last.toLowerCase() : undefined;
}

/**
 * The in-memory chunks as numbers, to store them (`writeKeywordFile`): the term names, and per
 * live chunk (grouped by file, in order) its length, terms with counts and definitions. The arrays
 * are concatenations; `termCounts`/`defCounts` say how many each chunk has.
 */
export interface KeywordState {
  terms: string[];
  files: { file: string; count: number }[];
  lengths: Int32Array;
  termCounts: Int32Array;
  termIds: Int32Array;
  tfs: Uint16Array;
  defCounts: Int32Array;
  defIds: Int32Array;
}

const K1 = 1.2;
const B = 0.75;
/** Query terms beyond this many are ignored (each has a bit in the per-chunk match mask). */
const MAX_QUERY_TERMS = 32;

/** `a`, or a copy of it with room for at least `need` (doubling). */
function room<A extends Int32Array | Uint16Array | Uint32Array>(a: A, need: number): A {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, a.length * 2, 16));
  b.set(a);
  return b;
}

const BLOCK_BITS = 20;
/** The first block's size to start with (2^12 numbers), doubled as it fills. */
const FIRST_BLOCK_BITS = 12;

/**
 * Numbers end to end in blocks of 2^20 (a chunk's never span two): growing never copies a whole
 * block (a doubling copy of 100,000 chunks' terms held the event loop for 40 ms). A position is
 * block × 2^20 + offset. The first block starts small and doubles up to 2^20 (a copy of at most
 * 2 MB): an index of the few files changed since the last fold held three whole blocks, 10 MB.
 */
class Pool<A extends Int32Array | Uint16Array> {
  readonly blocks: A[] = [];
  private used = 0;

  constructor(private readonly make: (n: number) => A) {}

  /** Room for `n` numbers in one block; their position. */
  alloc(n: number): number {
    const whole = 1 << BLOCK_BITS;
    if (n > whole) throw new RangeError(`${n} numbers do not fit a block`);
    const last = this.blocks.length - 1;
    if (last >= 0 && this.used + n <= this.blocks[last].length) {
      // Room in the last block.
    } else if (last === 0 && this.used + n <= whole) {
      let size = this.blocks[0].length * 2;
      while (size < this.used + n) size *= 2;
      const grown = this.make(Math.min(size, whole));
      grown.set(this.blocks[0].subarray(0, this.used));
      this.blocks[0] = grown;
    } else {
      let size = last < 0 ? 1 << FIRST_BLOCK_BITS : whole;
      while (size < n) size *= 2;
      this.blocks.push(this.make(size));
      this.used = 0;
    }
    const at = ((this.blocks.length - 1) << BLOCK_BITS) + this.used;
    this.used += n;
    return at;
  }

  /** Numbers the blocks can hold (what the pool costs in memory). */
  get capacity(): number {
    return this.blocks.reduce((n, b) => n + b.length, 0);
  }

  view(at: number, n: number): A {
    const off = at & ((1 << BLOCK_BITS) - 1);
    return this.blocks[at >>> BLOCK_BITS].subarray(off, off + n) as A;
  }
}

/**
 * BM25 over chunks grouped by file (a file's chunks are replaced together), in compact form: terms
 * are numbered once; the chunks' terms, counts and definitions sit end to end in a few pooled
 * typed arrays (no object per chunk), and each term's postings are a single pair of numbers while
 * it has one chunk (most names in code), then one typed array of (chunk, count) pairs. 100,000
 * chunks are a few hundred objects for the collector instead of millions. A query accumulates
 * into one Float32Array over all chunks and selects the best with a small heap. Removed chunks
 * leave holes that postings skip; postings are filtered once the holes outnumber the live chunks.
 */
export class KeywordIndex<T> {
  /** The stored chunks' mask (1: its file was removed or replaced since), and what is left of them. */
  private readonly baseMask: Uint8Array;
  private readonly baseMasked = new Set<string>();
  private baseLive: number;
  private baseLength: number;
  private readonly termIds = new Map<string, number>();
  private readonly termNames: string[] = [];
  /** Files set or removed since `record()` (while a stored copy is being written). */
  private recorded: Set<string> | undefined;
  // Per term: postings count, live chunks (for the IDF), the one posting while there is one, then a list of (chunk, count) pairs.
  private postingLength = new Int32Array(0);
  private df = new Int32Array(0);
  private firstDoc = new Int32Array(0);
  private firstTf = new Uint16Array(0);
  private lists: (Int32Array | undefined)[] = [];
  // Per chunk: its item (undefined once removed), length, and where its terms and definitions sit in the pools.
  private items: (T | undefined)[] = [];
  private docLength = new Int32Array(0);
  private docTermAt = new Int32Array(0);
  private docTermCount = new Int32Array(0);
  private docDefAt = new Int32Array(0);
  private docDefCount = new Int32Array(0);
  /** Terms and their counts at the same positions; definitions. */
  private readonly termPool = new Pool((n) => new Int32Array(n));
  private readonly tfPool = new Pool((n) => new Uint16Array(n));
  private readonly defPool = new Pool((n) => new Int32Array(n));
  private readonly byFile = new Map<string, number[]>();

  /** Bytes the chunks' terms, counts and definitions take in their pools. */
  get pooledBytes(): number {
    return this.termPool.capacity * 4 + this.tfPool.capacity * 2 + this.defPool.capacity * 4;
  }
  private live = 0;
  private holes = 0;
  private totalLength = 0;
  /** Scratch for queries: a score and a mask of matched query terms per chunk. */
  private scores = new Float32Array(0);
  private masks = new Uint32Array(0);
  private touched = new Int32Array(0);
  /** Scratch for `setFile`: a count per term id, zero between chunks. */
  private counts = new Uint32Array(0);
  private readonly names = new NameTable();
  private namePool = new Int32Array(0);
  private namePoolUsed = 0;

  /**
   * An empty index, or (with `base`) one over a stored index whose postings stay on disk: what is
   * set here afterwards lives in memory and replaces the stored chunks of the same files. `itemOf`
   * gives a stored chunk's item from its file and place in the file.
   */
  constructor(
    private readonly base?: StoredKeywords,
    private readonly itemOf?: (file: string, index: number) => T | undefined,
  ) {
    this.baseMask = new Uint8Array(base?.docs ?? 0);
    this.baseLive = base?.docs ?? 0;
    this.baseLength = base?.totalLength ?? 0;
  }

  get size(): number {
    return this.live + this.baseLive;
  }

  /** The stored index this one reads from, and its files replaced or removed since (to store the next one). */
  get stored(): { stored: StoredKeywords; masked: ReadonlySet<string> } | undefined {
    return this.base && { stored: this.base, masked: this.baseMasked };
  }

  /** Closes the stored index's file. */
  close(): void {
    this.base?.close();
  }

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.termNames.length;
      this.termIds.set(term, id);
      this.termNames.push(term);
      if (id >= this.df.length) {
        this.postingLength = room(this.postingLength, id + 1);
        this.df = room(this.df, id + 1);
        this.firstDoc = room(this.firstDoc, id + 1);
        this.firstTf = room(this.firstTf, id + 1);
      }
      this.lists.push(undefined);
    }
    return id;
  }

  removeFile(file: string): void {
    this.recorded?.add(file);
    const stored = this.base?.fileIndex(file);
    if (stored !== undefined && !this.baseMasked.has(file)) {
      this.baseMasked.add(file);
      for (let d = this.base!.fileStarts[stored]; d < this.base!.fileStarts[stored + 1]; d++) {
        this.baseMask[d] = 1;
        this.baseLive--;
        this.baseLength -= this.base!.lengths[d];
      }
    }
    for (const id of this.byFile.get(file) ?? []) {
      if (this.items[id] === undefined) continue;
      for (const t of this.termPool.view(this.docTermAt[id], this.docTermCount[id])) this.df[t]--;
      this.totalLength -= this.docLength[id];
      this.items[id] = undefined;
      this.live--;
      this.holes++;
    }
    this.byFile.delete(file);
    if (this.holes > Math.max(1024, this.live)) this.dropHoles();
  }

  /** Postings without the removed chunks (their ids stay unused). */
  private dropHoles(): void {
    for (let t = 0; t < this.termNames.length; t++) {
      const len = this.postingLength[t];
      if (len === 1) {
        if (this.items[this.firstDoc[t]] === undefined) this.postingLength[t] = 0;
        continue;
      }
      const list = this.lists[t];
      if (!list) continue;
      let n = 0;
      for (let i = 0; i < len; i++) {
        if (this.items[list[2 * i]] === undefined) continue;
        list[2 * n] = list[2 * i];
        list[2 * n + 1] = list[2 * i + 1];
        n++;
      }
      this.postingLength[t] = n;
      if (n <= 1) {
        if (n === 1) {
          this.firstDoc[t] = list[0];
          this.firstTf[t] = list[1];
        }
        this.lists[t] = undefined;
      } else if (list.length > 32 && n < list.length / 8) this.lists[t] = list.slice(0, n * 4);
    }
    this.holes = 0;
  }

  /** A new chunk: its item, length, terms with counts and definitions (term ids), its postings added. */
  private addDoc(item: T, length: number, terms: ArrayLike<number>, tfs: ArrayLike<number>, defs: ArrayLike<number>): number {
    const id = this.items.length;
    this.items.push(item);
    if (id >= this.docLength.length) {
      this.docLength = room(this.docLength, id + 1);
      this.docTermAt = room(this.docTermAt, id + 1);
      this.docTermCount = room(this.docTermCount, id + 1);
      this.docDefAt = room(this.docDefAt, id + 1);
      this.docDefCount = room(this.docDefCount, id + 1);
    }
    const at = this.termPool.alloc(terms.length);
    this.tfPool.alloc(terms.length);
    const termView = this.termPool.view(at, terms.length);
    const tfView = this.tfPool.view(at, terms.length);
    for (let i = 0; i < terms.length; i++) {
      termView[i] = terms[i];
      tfView[i] = tfs[i];
      this.addPosting(terms[i], id, tfs[i]);
    }
    const defAt = this.defPool.alloc(defs.length);
    this.defPool.view(defAt, defs.length).set(defs);
    this.docLength[id] = length;
    this.docTermAt[id] = at;
    this.docTermCount[id] = terms.length;
    this.docDefAt[id] = defAt;
    this.docDefCount[id] = defs.length;
    this.totalLength += length;
    this.live++;
    return id;
  }

  private addPosting(t: number, id: number, count: number): void {
    const n = this.postingLength[t];
    if (n === 0) {
      this.firstDoc[t] = id;
      this.firstTf[t] = count;
    } else {
      let list = this.lists[t];
      if (!list) {
        list = new Int32Array(8);
        list[0] = this.firstDoc[t];
        list[1] = this.firstTf[t];
      } else if (2 * n + 2 > list.length) list = room(list, 2 * n + 2);
      list[2 * n] = id;
      list[2 * n + 1] = count;
      this.lists[t] = list;
    }
    this.postingLength[t] = n + 1;
    this.df[t]++;
  }

  /** Replaces a file's chunks. */
  setFile(file: string, chunks: { item: T; text: string }[]): void {
    this.removeFile(file);
    const ids: number[] = [];
    for (const c of chunks) {
      // Each term's count in a scratch array by term id (a map per chunk was most of the work).
      const distinct: number[] = [];
      let length = 0;
      if (this.names.size >= NAME_CACHE_LIMIT / 2 || this.namePoolUsed > 1 << 22) {
        this.names.clear();
        this.namePoolUsed = 0;
      }
      const found = this.names.scan(c.text, this.nameSlot);
      if (this.counts.length < this.termNames.length) this.counts = room(this.counts, this.termNames.length);
      const slots = this.names.values;
      for (let k = 0; k < found; k++) {
        const at = slots[k];
        const n = this.namePool[at];
        for (let i = at + 1; i <= at + n; i++) {
          const tid = this.namePool[i];
          if (this.counts[tid]++ === 0) distinct.push(tid);
        }
        length += n;
      }
      const sorted = Int32Array.from(distinct).sort();
      const tf = new Uint16Array(sorted.length);
      for (let i = 0; i < sorted.length; i++) {
        tf[i] = Math.min(65535, this.counts[sorted[i]]);
        this.counts[sorted[i]] = 0;
      }
      const defs = definitionsOf(c.text).map((d) => this.termId(d));
      ids.push(this.addDoc(c.item, length, sorted, tf, defs));
    }
    this.byFile.set(file, ids);
  }

  /**
   * Where the term ids a new identifier gives (as `termsOf`) sit in one pool, count first: the
   * name table remembers it per name (code repeats its names; no array per name for the collector).
   */
  private readonly nameSlot = (name: string): number => {
    const terms = namesTerms(name);
    const at = this.namePoolUsed;
    this.namePool = room(this.namePool, at + terms.length + 1);
    this.namePool[at] = terms.length;
    for (let i = 0; i < terms.length; i++) this.namePool[at + 1 + i] = this.termId(terms[i]);
    this.namePoolUsed += terms.length + 1;
    return at;
  };

  /** From now on, remembers the files set or removed (see `copyFiles`); returns them. */
  record(): ReadonlySet<string> {
    this.recorded = new Set();
    return this.recorded;
  }

  /** Replaces these files' chunks with what `from` has for them (nothing, when it has none): changes made to `from` meanwhile. */
  copyFiles(from: KeywordIndex<T>, files: Iterable<string>): void {
    for (const file of files) {
      this.removeFile(file);
      const ids: number[] = [];
      for (const other of from.byFile.get(file) ?? []) {
        const item = from.items[other];
        if (item === undefined) continue;
        const at = from.docTermAt[other];
        const n = from.docTermCount[other];
        const terms = Array.from(from.termPool.view(at, n), (t) => this.termId(from.termNames[t]));
        const defAt = from.docDefAt[other];
        const defs = Array.from(from.defPool.view(defAt, from.docDefCount[other]), (t) => this.termId(from.termNames[t]));
        ids.push(this.addDoc(item, from.docLength[other], terms, from.tfPool.view(at, n), defs));
      }
      if (ids.length) this.byFile.set(file, ids);
    }
  }

  /**
   * The live chunks as numbers (see `KeywordState`); `yieldNow` is awaited between files. Each
   * file is read whole at once; one changed meanwhile may be seen before or after the change
   * (`record()` names it, to be carried over).
   */
  async exportState(yieldNow: () => Promise<void>): Promise<KeywordState> {
    const files: KeywordState['files'] = [];
    // The files as they are now: changes made between slices do not move the walk.
    const walk = [...this.byFile];
    let docCount = 0;
    let termTotal = 0;
    let defTotal = 0;
    for (const [, ids] of walk) {
      for (const id of ids) {
        if (this.items[id] === undefined) continue;
        docCount++;
        termTotal += this.docTermCount[id];
        defTotal += this.docDefCount[id];
      }
    }
    const lengths = new Int32Array(docCount);
    const termCounts = new Int32Array(docCount);
    const defCounts = new Int32Array(docCount);
    const termIds = new Int32Array(termTotal);
    const tfs = new Uint16Array(termTotal);
    const defIds = new Int32Array(defTotal);
    let d = 0;
    let t = 0;
    let f = 0;
    // Counted above and copied below without a turn of the event loop in between for a file.
    for (const [file, ids] of walk) {
      let count = 0;
      for (const id of ids) {
        if (this.items[id] === undefined) continue;
        const at = this.docTermAt[id];
        const n = this.docTermCount[id];
        lengths[d] = this.docLength[id];
        termCounts[d] = n;
        termIds.set(this.termPool.view(at, n), t);
        tfs.set(this.tfPool.view(at, n), t);
        t += n;
        const defAt = this.docDefAt[id];
        const m = this.docDefCount[id];
        defCounts[d] = m;
        defIds.set(this.defPool.view(defAt, m), f);
        f += m;
        d++;
        count++;
      }
      files.push({ file, count });
      await yieldNow();
    }
    return {
      terms: [...this.termNames],
      files,
      lengths: lengths.subarray(0, d),
      termCounts: termCounts.subarray(0, d),
      termIds: termIds.subarray(0, t),
      tfs: tfs.subarray(0, t),
      defCounts: defCounts.subarray(0, d),
      defIds: defIds.subarray(0, f),
    };
  }

  /**
   * The best `k` chunks for a query by BM25 over the stored and the in-memory chunks together (one
   * collection: the counts, lengths and IDF cover both). When the query is an identifier, the
   * chunks that define it come first, whatever their score.
   */
  search(query: string, k: number): KeywordHit<T>[] {
    const n = this.size;
    if (n === 0 || k <= 0) return [];
    const avg = (this.totalLength + this.baseLength) / n || 1;
    const first = this.base?.docs ?? 0;
    const span = first + this.items.length;
    if (this.scores.length < span) {
      this.scores = new Float32Array(Math.ceil(span * 1.25));
      this.masks = new Uint32Array(this.scores.length);
      this.touched = new Int32Array(this.scores.length);
    }
    const { scores, masks, touched } = this;
    let touchedCount = 0;
    const name = identifierQuery(query);
    const nameId = name === undefined ? undefined : this.termIds.get(name);
    const storedDefiners = new Set<number>();
    const terms = [...new Set(termsOf(query))].slice(0, MAX_QUERY_TERMS);
    terms.forEach((term, q) => {
      const t = this.termIds.get(term);
      const bt = this.base?.termId(term);
      // The stored postings (read now; views of a scratch buffer, used before the next read).
      const stored = bt === undefined ? undefined : this.base!.read(bt, term === name);
      if (stored) for (const d of stored.definers) if (!this.baseMask[d]) storedDefiners.add(d);
      let df = t === undefined ? 0 : this.df[t];
      if (stored) {
        if (this.baseLive === first) df += stored.docs.length;
        else for (const d of stored.docs) if (d < first && !this.baseMask[d]) df++;
      }
      if (df <= 0) return;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const bit = 1 << q;
      const lengths = this.base?.lengths;
      if (stored) {
        const { docs, tfs } = stored;
        for (let i = 0, len = docs.length; i < len; i++) {
          const id = docs[i];
          // Out of range only in a damaged file: skipped, never indexed with.
          if (id < 0 || id >= first || this.baseMask[id]) continue;
          const f = tfs[i];
          if (masks[id] === 0) touched[touchedCount++] = id;
          scores[id] += (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * lengths![id]) / avg));
          masks[id] |= bit;
        }
      }
      if (t === undefined) return;
      const len = this.postingLength[t];
      const list = this.lists[t];
      for (let i = 0; i < len; i++) {
        const doc = len === 1 ? this.firstDoc[t] : list![2 * i];
        if (this.items[doc] === undefined) continue;
        const id = first + doc;
        const f = len === 1 ? this.firstTf[t] : list![2 * i + 1];
        if (masks[id] === 0) touched[touchedCount++] = id;
        scores[id] += (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * this.docLength[doc]) / avg));
        masks[id] |= bit;
      }
    });
    // An identifier the query names but does not score (a stop word, say) still finds its definers.
    if (name !== undefined && !terms.includes(name)) {
      const bt = this.base?.termId(name);
      if (bt !== undefined) for (const d of this.base!.read(bt, true).definers) if (!this.baseMask[d]) storedDefiners.add(d);
    }
    const defines = (id: number) => {
      if (id < first) return storedDefiners.has(id);
      const at = this.docDefAt[id - first];
      return nameId !== undefined && this.defPool.view(at, this.docDefCount[id - first]).includes(nameId);
    };
    const defining: number[] = [];
    const best = new TopK(k);
    for (let i = 0; i < touchedCount; i++) {
      const id = touched[i];
      if (name !== undefined && defines(id)) defining.push(id);
      else best.offer(id, scores[id]);
    }
    defining.sort((a, b) => scores[b] - scores[a]);
    const order = [...defining.slice(0, k), ...best.sorted()].slice(0, k);
    const isDefining = new Set(defining.slice(0, k));
    const hits: KeywordHit<T>[] = [];
    for (const id of order) {
      const item = id < first ? this.storedItem(id) : this.items[id - first];
      if (item === undefined) continue;
      hits.push({ item, score: scores[id], matched: terms.filter((_, q) => masks[id] & (1 << q)), ...(name && isDefining.has(id) ? { defines: name } : {}) });
    }
    for (let i = 0; i < touchedCount; i++) {
      scores[touched[i]] = 0;
      masks[touched[i]] = 0;
    }
    return hits;
  }

  private storedItem(doc: number): T | undefined {
    const { file, index } = this.base!.locate(doc);
    return this.itemOf?.(file, index);
  }
}

/** The `k` largest by score, with a binary min-heap. */
class TopK {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

  offer(id: number, score: number): void {
    const { ids, scores } = this;
    if (ids.length < this.k) {
      ids.push(id);
      scores.push(score);
      let i = ids.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (scores[parent] <= scores[i]) break;
        this.swap(i, parent);
        i = parent;
      }
    } else if (score > scores[0]) {
      ids[0] = id;
      scores[0] = score;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < ids.length && scores[l] < scores[m]) m = l;
        if (r < ids.length && scores[r] < scores[m]) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b], this.ids[a]];
    [this.scores[a], this.scores[b]] = [this.scores[b], this.scores[a]];
  }

  /** Best first. */
  sorted(): number[] {
    return this.ids
      .map((id, i) => ({ id, s: this.scores[i] }))
      .sort((a, b) => b.s - a.s)
      .map((x) => x.id);
  }
}

/**
 * Reciprocal rank fusion of ranked lists (k = 60, as in the paper): each item scores the sum of
 * 1 / (60 + rank) over the lists it appears in.
 */
export function reciprocalRankFusion<T>(lists: T[][], key: (t: T) => string): { item: T; score: number }[] {
  const fused = new Map<string, { item: T; score: number }>();
  for (const list of lists) {
    list.forEach((item, rank) => {
      const id = key(item);
      const e = fused.get(id) ?? { item, score: 0 };
      e.score += 1 / (60 + rank + 1);
      fused.set(id, e);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
