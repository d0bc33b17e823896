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

interface Doc<T> {
  item: T;
  length: number;
  tf: Map<string, number>;
  defs: Set<string>;
}

const K1 = 1.2;
const B = 0.75;

/** BM25 over chunks grouped by file (a file's chunks are replaced together). */
export class KeywordIndex<T> {
  private readonly docs = new Map<number, Doc<T>>();
  private readonly postings = new Map<string, Set<number>>();
  private readonly byFile = new Map<string, number[]>();
  private nextId = 0;
  private totalLength = 0;

  get size(): number {
    return this.docs.size;
  }

  has(file: string): boolean {
    return this.byFile.has(file);
  }

  removeFile(file: string): void {
    for (const id of this.byFile.get(file) ?? []) {
      const doc = this.docs.get(id);
      if (!doc) continue;
      for (const t of doc.tf.keys()) {
        const p = this.postings.get(t);
        p?.delete(id);
        if (p?.size === 0) this.postings.delete(t);
      }
      this.totalLength -= doc.length;
      this.docs.delete(id);
    }
    this.byFile.delete(file);
  }

  /** Points a file's entries at new records of the same chunks (same order), keeping the terms. */
  setItems(file: string, items: T[]): void {
    const ids = this.byFile.get(file) ?? [];
    if (ids.length !== items.length) return;
    ids.forEach((id, i) => {
      const doc = this.docs.get(id);
      if (doc) doc.item = items[i];
    });
  }

  /** Replaces a file's chunks. */
  setFile(file: string, chunks: { item: T; text: string }[]): void {
    this.removeFile(file);
    const ids: number[] = [];
    for (const c of chunks) {
      const id = this.nextId++;
      const terms = termsOf(c.text);
      const tf = new Map<string, number>();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) {
        let p = this.postings.get(t);
        if (!p) this.postings.set(t, (p = new Set()));
        p.add(id);
      }
      this.docs.set(id, { item: c.item, length: terms.length, tf, defs: new Set(definitionsOf(c.text)) });
      this.totalLength += terms.length;
      ids.push(id);
    }
    this.byFile.set(file, ids);
  }

  /**
   * The best `k` chunks for a query by BM25. When the query is an identifier, the chunks that
   * define it come first, whatever their score.
   */
  search(query: string, k: number): KeywordHit<T>[] {
    const n = this.docs.size;
    if (n === 0) return [];
    const terms = [...new Set(termsOf(query))];
    const avg = this.totalLength / n || 1;
    const scores = new Map<number, { score: number; matched: string[] }>();
    for (const t of terms) {
      const p = this.postings.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (n - p.size + 0.5) / (p.size + 0.5));
      for (const id of p) {
        const doc = this.docs.get(id)!;
        const f = doc.tf.get(t) ?? 0;
        const s = (idf * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * doc.length) / avg));
        const e = scores.get(id) ?? { score: 0, matched: [] };
        e.score += s;
        e.matched.push(t);
        scores.set(id, e);
      }
    }
    const name = identifierQuery(query);
    return [...scores.entries()]
      .map(([id, e]) => {
        const doc = this.docs.get(id)!;
        return { item: doc.item, score: e.score, matched: e.matched, ...(name && doc.defs.has(name) ? { defines: name } : {}) };
      })
      .sort((a, b) => Number(!!b.defines) - Number(!!a.defines) || b.score - a.score)
      .slice(0, k);
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
