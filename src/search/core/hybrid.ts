/**
 * Hybrid ranking (pure, no `vscode`): the embeddings' and the keywords' lists fused, an
 * identifier's definitions first, weak similarities dropped, and why each result matched.
 */
import { reciprocalRankFusion } from './keywords/keywords';
import type { IndexedChunk } from './semanticIndex';

export interface SearchResult {
  chunk: IndexedChunk;
  /** Cosine similarity from the embeddings pass (absent when only the keywords found it). */
  score?: number;
  /** Query terms the chunk contains (the keyword pass). */
  matched?: string[];
  /** The identifier the query names, defined in this chunk. */
  defines?: string;
  /** Relevance from the rerank model, when one is configured. */
  rerankScore?: number;
  preview: string;
}

/** Similarities at or under this are no match at all (real embeddings put unrelated text near 0). */
const MIN_SIMILARITY = 0.05;

/** Why a result is there, in a few words: the definition, the rerank, the similarity, the words. */
export function whyMatched(r: SearchResult): string {
  const parts: string[] = [];
  if (r.defines) parts.push(`defines ${r.defines}`);
  if (r.rerankScore !== undefined) parts.push(`relevance ${r.rerankScore.toFixed(2)}`);
  if (r.score !== undefined) parts.push(`similarity ${r.score.toFixed(2)}`);
  if (r.matched?.length) parts.push(`words: ${[...new Set(r.matched)].slice(0, 4).join(', ')}`);
  return parts.join(' · ');
}

/**
 * The hybrid order: chunks that define the identifier the query names first, then the embeddings'
 * and the keywords' rankings fused by reciprocal rank. Near-zero and negative similarities are
 * dropped (also when they are far below the best).
 */
export function fuseResults(
  vector: { chunk: IndexedChunk; score: number }[],
  keyword: { item: IndexedChunk; score: number; matched: string[]; defines?: string }[],
  limit: number,
): Omit<SearchResult, 'preview'>[] {
  const best = vector[0]?.score ?? 0;
  const similar = vector.filter((h) => h.score > MIN_SIMILARITY && h.score >= best * 0.5);
  const key = (c: IndexedChunk) => `${c.file}:${c.start}`;
  const similarity = new Map(similar.map((h) => [key(h.chunk), h.score]));
  const words = new Map(keyword.map((h) => [key(h.item), h]));
  const defining = keyword.filter((h) => h.defines).map((h) => h.item);
  const fused = reciprocalRankFusion([similar.map((h) => h.chunk), keyword.map((h) => h.item)], key);
  const pinned = new Set(defining.map(key));
  const order = [...defining, ...fused.map((f) => f.item).filter((c) => !pinned.has(key(c)))];
  return order.slice(0, limit).map((chunk) => {
    const w = words.get(key(chunk));
    return { chunk, score: similarity.get(key(chunk)), ...(w?.matched.length ? { matched: w.matched } : {}), ...(w?.defines ? { defines: w.defines } : {}) };
  });
}
