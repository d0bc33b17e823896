/**
 * The keyword side of hybrid search: BM25 over identifiers and words, with identifiers split the
 * way code names things (`invoiceTotal`, `invoice_total` and `InvoiceTotal` all give `invoice`,
 * `total` and the whole name), and the names each chunk defines. Pure and in memory; the index
 * keeps it in step with the chunks it stores.
 */

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

/** A chunk as the index keeps it: its distinct terms (ids, sorted), its length in terms, its definitions. */
interface Doc<T> {
  item: T;
  terms: Int32Array;
  /** The count of each of `terms` in the chunk (kept to store the index, see `exportState`). */
  tf: Uint16Array;
  length: number;
  defs: Int32Array;
}

/**
 * The index as numbers, to store and read back without tokenising the chunks again: the term
 * names, and per live chunk (grouped by file, in order) its item, length, terms with counts and
 * definitions. The arrays are concatenations; `termCounts`/`defCounts` say how many each chunk has.
 */
export interface KeywordState<T> {
  terms: string[];
  files: { file: string; items: T[] }[];
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
  private readonly termIds = new Map<string, number>();
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

  get size(): number {
    return this.live;
  }

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.postings.length;
      this.termIds.set(term, id);
      this.postings.push(new Int32Array(4));
      this.postingTf.push(new Uint16Array(4));
      this.postingLength.push(0);
      this.df.push(0);
    }
    return id;
  }

  removeFile(file: string): void {
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
      const terms = termsOf(c.text);
      const counts = new Map<number, number>();
      for (const t of terms) {
        const tid = this.termId(t);
        counts.set(tid, (counts.get(tid) ?? 0) + 1);
      }
      const sorted = Int32Array.from(counts.keys()).sort();
      for (const t of sorted) this.addPosting(t, id, Math.min(65535, counts.get(t)!));
      const defs = Int32Array.from(definitionsOf(c.text).map((d) => this.termId(d)));
      const tf = Uint16Array.from(sorted, (t) => Math.min(65535, counts.get(t)!));
      this.docs.push({ item: c.item, terms: sorted, tf, length: terms.length, defs });
      this.totalLength += terms.length;
      this.live++;
      ids.push(id);
    }
    this.byFile.set(file, ids);
  }

  /** The live chunks as numbers (see `KeywordState`); `yieldNow` is awaited between files. */
  async exportState(yieldNow: () => Promise<void>): Promise<KeywordState<T>> {
    const files: KeywordState<T>['files'] = [];
    const lengths: number[] = [];
    const termCounts: number[] = [];
    const defCounts: number[] = [];
    let termTotal = 0;
    let defTotal = 0;
    const docs: Doc<T>[] = [];
    for (const [file, ids] of this.byFile) {
      const items: T[] = [];
      for (const id of ids) {
        const d = this.docs[id];
        if (!d) continue;
        docs.push(d);
        items.push(d.item);
        lengths.push(d.length);
        termCounts.push(d.terms.length);
        defCounts.push(d.defs.length);
        termTotal += d.terms.length;
        defTotal += d.defs.length;
      }
      files.push({ file, items });
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

  /** An index from a stored state (no tokenising); undefined when the state does not hold together. */
  static async fromState<T>(s: KeywordState<T>, yieldNow: () => Promise<void>): Promise<KeywordIndex<T> | undefined> {
    const index = new KeywordIndex<T>();
    for (let i = 0; i < s.terms.length; i++) {
      index.termId(s.terms[i]);
      if (i % 4096 === 0) await yieldNow();
    }
    const termCount = s.terms.length;
    let doc = 0;
    let t = 0;
    let f = 0;
    for (const { file, items } of s.files) {
      const ids: number[] = [];
      for (const item of items) {
        const n = s.termCounts[doc];
        const m = s.defCounts[doc];
        if (n === undefined || m === undefined || t + n > s.termIds.length || f + m > s.defIds.length) return undefined;
        // Views of the stored arrays, not copies: one buffer for all chunks (the collector walks few).
        const terms = s.termIds.subarray(t, t + n);
        const tf = s.tfs.subarray(t, t + n);
        const defs = s.defIds.subarray(f, f + m);
        t += n;
        f += m;
        const id = index.docs.length;
        for (let i = 0; i < n; i++) {
          const term = terms[i];
          if (term < 0 || term >= termCount) return undefined;
          index.addPosting(term, id, tf[i]);
        }
        for (const d of defs) if (d < 0 || d >= termCount) return undefined;
        index.docs.push({ item, terms, tf, length: s.lengths[doc], defs });
        index.totalLength += s.lengths[doc];
        index.live++;
        ids.push(id);
        doc++;
      }
      index.byFile.set(file, ids);
      await yieldNow();
    }
    return doc === s.lengths.length && t === s.termIds.length ? index : undefined;
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
   * The best `k` chunks for a query by BM25. When the query is an identifier, the chunks that
   * define it come first, whatever their score.
   */
  search(query: string, k: number): KeywordHit<T>[] {
    const n = this.live;
    if (n === 0 || k <= 0) return [];
    const avg = this.totalLength / n || 1;
    if (this.scores.length < this.docs.length) {
      this.scores = new Float32Array(Math.ceil(this.docs.length * 1.25));
      this.masks = new Uint32Array(this.scores.length);
    }
    const { scores, masks } = this;
    const terms = [...new Set(termsOf(query))].slice(0, MAX_QUERY_TERMS);
    const touched: number[] = [];
    terms.forEach((term, q) => {
      const t = this.termIds.get(term);
      if (t === undefined || this.df[t] <= 0) return;
      const idf = Math.log(1 + (n - this.df[t] + 0.5) / (this.df[t] + 0.5));
      const p = this.postings[t];
      const tfs = this.postingTf[t];
      const bit = 1 << q;
      for (let i = 0, len = this.postingLength[t]; i < len; i++) {
        const id = p[i];
        const doc = this.docs[id];
        if (!doc) continue;
        const f = tfs[i];
        if (masks[id] === 0) touched.push(id);
        scores[id] += (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * doc.length) / avg));
        masks[id] |= bit;
      }
    });
    const name = identifierQuery(query);
    const nameId = name === undefined ? undefined : this.termIds.get(name);
    const defining: number[] = [];
    const best = new TopK(k);
    for (const id of touched) {
      if (nameId !== undefined && this.docs[id]!.defs.includes(nameId)) defining.push(id);
      else best.offer(id, scores[id]);
    }
    defining.sort((a, b) => scores[b] - scores[a]);
    const order = [...defining.slice(0, k), ...best.sorted()].slice(0, k);
    const hits = order.map((id) => ({
      item: this.docs[id]!.item,
      score: scores[id],
      matched: terms.filter((_, q) => masks[id] & (1 << q)),
      ...(name && defining.includes(id) ? { defines: name } : {}),
    }));
    for (const id of touched) {
      scores[id] = 0;
      masks[id] = 0;
    }
    return hits;
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
