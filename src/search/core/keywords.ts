/**
 * The keyword side of hybrid search: BM25 over identifiers and words, with identifiers split the
 * way code names things (`invoiceTotal`, `invoice_total` and `InvoiceTotal` all give `invoice`,
 * `total` and the whole name), and the names each chunk defines. In memory, optionally over a
 * stored index whose postings stay on disk (`keywordStore.ts`); the search index keeps it in step
 * with the chunks it stores.
 */
import type { StoredKeywords } from './keywordStore';

export interface KeywordHit<T> {
  item: T;
  score: number;
  /** Query terms found in the chunk. */
  matched: string[];
  /** The query names an identifier this chunk defines (`function name`, `class Name`, …). */
  defines?: string;
}

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const STOP = new Set(['the', 'a', 'an', 'and', 'or', 'of', 'to', 'in', 'is', 'it', 'for', 'on', 'at', 'by', 'be', 'as', 'with', 'this', 'that', 'where', 'what', 'how', 'which', 'does', 'do', 'are', 'from']);
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
  const out = new Set<string>();
  for (const m of text.matchAll(DEFINITION)) {
    const name = m[1] ?? m[2];
    if (name && !/^(if|for|while|switch|catch|return|function)$/.test(name)) out.add(name.toLowerCase());
  }
  return [...out];
}

/** Whether a query reads as an identifier (one word with code casing or `_`, or a dotted name). */
export function identifierQuery(query: string): string | undefined {
  const q = query.trim();
  if (!/^[A-Za-z_$][\w$.]*$/.test(q)) return undefined;
  const last = q.split('.').at(-1)!;
  const codeLike = /[a-z][A-Z]|_|^[A-Z][a-z]+[A-Z]|\./.test(q) || identifierParts(last).length > 1;
  return codeLike ? last.toLowerCase() : undefined;
}

/** A chunk as the index keeps it: its distinct terms (ids), its length in terms, its definitions. */
interface Doc<T> {
  item: T;
  terms: Int32Array;
  /** The count of each of `terms` in the chunk (kept to store the index, see `exportState`). */
  tf: Uint16Array;
  length: number;
  defs: Int32Array;
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

/**
 * BM25 over chunks grouped by file (a file's chunks are replaced together), in compact form: terms
 * are numbered once, a chunk keeps a typed array of its term ids, each term growing typed arrays
 * of the chunks that have it and their counts (so scoring reads postings front to back, no
 * lookups). A query accumulates into one Float32Array over all chunks and selects the best with
 * a small heap: a common word in 100,000 chunks costs about a millisecond. Removed chunks leave
 * holes that postings skip; postings are filtered once the holes outnumber the live chunks.
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
  private postings: Int32Array[] = [];
  private postingTf: Uint16Array[] = [];
  private postingLength: number[] = [];
  /** Live chunks per term (for the IDF). */
  private df: number[] = [];
  private docs: (Doc<T> | undefined)[] = [];
  private readonly byFile = new Map<string, number[]>();
  private live = 0;
  private holes = 0;
  private totalLength = 0;
  /** Scratch for queries: a score and a mask of matched query terms per chunk. */
  private scores = new Float32Array(0);
  private masks = new Uint32Array(0);
  private touched = new Int32Array(0);
  /** Scratch for `setFile`: a count per term id, zero between chunks. */
  private counts = new Uint32Array(0);
  private readonly nameIds = new Map<string, Int32Array>();

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
      id = this.postings.length;
      this.termIds.set(term, id);
      this.termNames.push(term);
      this.postings.push(new Int32Array(4));
      this.postingTf.push(new Uint16Array(4));
      this.postingLength.push(0);
      this.df.push(0);
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
      const doc = this.docs[id];
      if (!doc) continue;
      for (const t of doc.terms) this.df[t]--;
      this.totalLength -= doc.length;
      this.docs[id] = undefined;
      this.live--;
      this.holes++;
    }
    this.byFile.delete(file);
    if (this.holes > Math.max(1024, this.live)) this.dropHoles();
  }

  /** Postings without the removed chunks (their ids stay unused). */
  private dropHoles(): void {
    for (let t = 0; t < this.postings.length; t++) {
      const p = this.postings[t];
      const f = this.postingTf[t];
      let n = 0;
      for (let i = 0; i < this.postingLength[t]; i++) {
        if (!this.docs[p[i]]) continue;
        p[n] = p[i];
        f[n++] = f[i];
      }
      this.postingLength[t] = n;
      if (p.length > 16 && n < p.length / 4) {
        this.postings[t] = p.slice(0, Math.max(4, n * 2));
        this.postingTf[t] = f.slice(0, Math.max(4, n * 2));
      }
    }
    this.holes = 0;
  }

  /** Replaces a file's chunks. */
  setFile(file: string, chunks: { item: T; text: string }[]): void {
    this.removeFile(file);
    const ids: number[] = [];
    for (const c of chunks) {
      const id = this.docs.length;
      // Each term's count in a scratch array by term id (a map per chunk was most of the work).
      const distinct: number[] = [];
      let length = 0;
      for (const m of c.text.matchAll(IDENTIFIER)) {
        for (const tid of this.idsOfName(m[0])) {
          if (tid >= this.counts.length) this.growCounts();
          if (this.counts[tid]++ === 0) distinct.push(tid);
          length++;
        }
      }
      const sorted = Int32Array.from(distinct).sort();
      const tf = new Uint16Array(sorted.length);
      for (let i = 0; i < sorted.length; i++) {
        const t = sorted[i];
        tf[i] = Math.min(65535, this.counts[t]);
        this.counts[t] = 0;
        this.addPosting(t, id, tf[i]);
      }
      const defs = Int32Array.from(definitionsOf(c.text).map((d) => this.termId(d)));
      this.docs.push({ item: c.item, terms: sorted, tf, length, defs });
      this.totalLength += length;
      this.live++;
      ids.push(id);
    }
    this.byFile.set(file, ids);
  }

  /** The term ids an identifier gives (as `termsOf`), remembered per index: code repeats its names. */
  private idsOfName(name: string): Int32Array {
    let ids = this.nameIds.get(name);
    if (ids) return ids;
    ids = Int32Array.from(namesTerms(name), (t) => this.termId(t));
    if (this.nameIds.size >= NAME_CACHE_LIMIT / 2) this.nameIds.clear();
    this.nameIds.set(name, ids);
    return ids;
  }

  private growCounts(): void {
    const grown = new Uint32Array(Math.max(1024, this.postings.length * 2));
    grown.set(this.counts);
    this.counts = grown;
  }

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
        const d = from.docs[other];
        if (!d) continue;
        const id = this.docs.length;
        const terms = Int32Array.from(d.terms, (t) => this.termId(from.termNames[t]));
        terms.forEach((t, i) => this.addPosting(t, id, d.tf[i]));
        const defs = Int32Array.from(d.defs, (t) => this.termId(from.termNames[t]));
        this.docs.push({ item: d.item, terms, tf: d.tf, length: d.length, defs });
        this.totalLength += d.length;
        this.live++;
        ids.push(id);
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
    const lengths: number[] = [];
    const termCounts: number[] = [];
    const defCounts: number[] = [];
    let termTotal = 0;
    let defTotal = 0;
    const docs: Doc<T>[] = [];
    // The files as they are now: changes made between slices do not move the walk.
    for (const [file, ids] of [...this.byFile]) {
      let count = 0;
      for (const id of ids) {
        const d = this.docs[id];
        if (!d) continue;
        docs.push(d);
        count++;
        lengths.push(d.length);
        termCounts.push(d.terms.length);
        defCounts.push(d.defs.length);
        termTotal += d.terms.length;
        defTotal += d.defs.length;
      }
      files.push({ file, count });
      await yieldNow();
    }
    const termIds = new Int32Array(termTotal);
    const tfs = new Uint16Array(termTotal);
    const defIds = new Int32Array(defTotal);
    let t = 0;
    let f = 0;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i];
      if (i % 1024 === 0) await yieldNow();
      termIds.set(d.terms, t);
      tfs.set(d.tf, t);
      t += d.terms.length;
      defIds.set(d.defs, f);
      f += d.defs.length;
    }
    const terms = new Array<string>(this.postings.length);
    for (const [name, id] of this.termIds) terms[id] = name;
    return { terms, files, lengths: Int32Array.from(lengths), termCounts: Int32Array.from(termCounts), termIds, tfs, defCounts: Int32Array.from(defCounts), defIds };
  }

  private addPosting(t: number, id: number, count: number): void {
    let p = this.postings[t];
    let f = this.postingTf[t];
    const n = this.postingLength[t];
    if (n === p.length) {
      const grown = new Int32Array(n * 2);
      grown.set(p);
      this.postings[t] = p = grown;
      const grownTf = new Uint16Array(n * 2);
      grownTf.set(f);
      this.postingTf[t] = f = grownTf;
    }
    p[n] = id;
    f[n] = count;
    this.postingLength[t] = n + 1;
    this.df[t]++;
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
    const span = first + this.docs.length;
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
          if (id >= first || this.baseMask[id]) continue;
          const f = tfs[i];
          if (masks[id] === 0) touched[touchedCount++] = id;
          scores[id] += (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * lengths![id]) / avg));
          masks[id] |= bit;
        }
      }
      if (t === undefined) return;
      const p = this.postings[t];
      const tfs = this.postingTf[t];
      for (let i = 0, len = this.postingLength[t]; i < len; i++) {
        const doc = this.docs[p[i]];
        if (!doc) continue;
        const id = first + p[i];
        const f = tfs[i];
        if (masks[id] === 0) touched[touchedCount++] = id;
        scores[id] += (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * doc.length) / avg));
        masks[id] |= bit;
      }
    });
    // An identifier the query names but does not score (a stop word, say) still finds its definers.
    if (name !== undefined && !terms.includes(name)) {
      const bt = this.base?.termId(name);
      if (bt !== undefined) for (const d of this.base!.read(bt, true).definers) if (!this.baseMask[d]) storedDefiners.add(d);
    }
    const defines = (id: number) => (id < first ? storedDefiners.has(id) : nameId !== undefined && this.docs[id - first]!.defs.includes(nameId));
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
      const item = id < first ? this.storedItem(id) : this.docs[id - first]!.item;
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
    return this.ids.map((id, i) => ({ id, s: this.scores[i] })).sort((a, b) => b.s - a.s).map((x) => x.id);
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
