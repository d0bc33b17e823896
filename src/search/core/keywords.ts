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

/** The terms of a text: each identifier whole (lower-cased) and its parts; common words left out. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IDENTIFIER)) {
    const whole = m[0].toLowerCase();
    const parts = identifierParts(m[0]);
    if (!STOP.has(whole) && whole.length >= 2) out.push(whole);
    if (parts.length > 1) for (const p of parts) if (!STOP.has(p)) out.push(p);
  }
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

/** A chunk as the index keeps it: its distinct terms (ids, sorted) with their counts, its definitions. */
interface Doc<T> {
  item: T;
  terms: Int32Array;
  tf: Uint16Array;
  length: number;
  defs: Int32Array;
}

const K1 = 1.2;
const B = 0.75;

/**
 * BM25 over chunks grouped by file (a file's chunks are replaced together), in compact form: terms
 * are numbered once, a chunk keeps typed arrays of its term ids and counts, each term a growing
 * Int32Array of the chunks that have it. Removed chunks leave holes that postings skip; postings
 * are filtered once the holes outnumber the live chunks. (Maps of sets took 750 MB for 100,000
 * chunks of code; this takes about a tenth.)
 */
export class KeywordIndex<T> {
  private readonly termIds = new Map<string, number>();
  private postings: Int32Array[] = [];
  private postingLength: number[] = [];
  /** Live chunks per term (for the IDF). */
  private df: number[] = [];
  private docs: (Doc<T> | undefined)[] = [];
  private readonly byFile = new Map<string, number[]>();
  private live = 0;
  private holes = 0;
  private totalLength = 0;

  get size(): number {
    return this.live;
  }

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.postings.length;
      this.termIds.set(term, id);
      this.postings.push(new Int32Array(4));
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
      let n = 0;
      for (let i = 0; i < this.postingLength[t]; i++) if (this.docs[p[i]]) p[n++] = p[i];
      this.postingLength[t] = n;
      if (p.length > 16 && n < p.length / 4) this.postings[t] = p.slice(0, Math.max(4, n * 2));
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
      const tf = Uint16Array.from(sorted, (t) => Math.min(65535, counts.get(t)!));
      for (const t of sorted) {
        let p = this.postings[t];
        const n = this.postingLength[t];
        if (n === p.length) {
          const grown = new Int32Array(n * 2);
          grown.set(p);
          this.postings[t] = p = grown;
        }
        p[n] = id;
        this.postingLength[t] = n + 1;
        this.df[t]++;
      }
      const defs = Int32Array.from(definitionsOf(c.text).map((d) => this.termId(d)));
      this.docs.push({ item: c.item, terms: sorted, tf, length: terms.length, defs });
      this.totalLength += terms.length;
      this.live++;
      ids.push(id);
    }
    this.byFile.set(file, ids);
  }

  /**
   * The best `k` chunks for a query by BM25. When the query is an identifier, the chunks that
   * define it come first, whatever their score.
   */
  search(query: string, k: number): KeywordHit<T>[] {
    const n = this.live;
    if (n === 0) return [];
    const avg = this.totalLength / n || 1;
    const scores = new Map<number, { score: number; matched: string[] }>();
    for (const term of new Set(termsOf(query))) {
      const t = this.termIds.get(term);
      if (t === undefined || this.df[t] <= 0) continue;
      const idf = Math.log(1 + (n - this.df[t] + 0.5) / (this.df[t] + 0.5));
      const p = this.postings[t];
      for (let i = 0; i < this.postingLength[t]; i++) {
        const id = p[i];
        const doc = this.docs[id];
        if (!doc) continue;
        const f = doc.tf[binarySearch(doc.terms, t)];
        const s = (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * doc.length) / avg));
        const e = scores.get(id) ?? { score: 0, matched: [] };
        e.score += s;
        e.matched.push(term);
        scores.set(id, e);
      }
    }
    const name = identifierQuery(query);
    const nameId = name === undefined ? undefined : this.termIds.get(name);
    return [...scores.entries()]
      .map(([id, e]) => {
        const doc = this.docs[id]!;
        return { item: doc.item, score: e.score, matched: e.matched, ...(name && nameId !== undefined && doc.defs.includes(nameId) ? { defines: name } : {}) };
      })
      .sort((a, b) => Number(!!b.defines) - Number(!!a.defines) || b.score - a.score)
      .slice(0, k);
  }
}

function binarySearch(sorted: Int32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else if (sorted[mid] > value) hi = mid - 1;
    else return mid;
  }
  return -1;
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
