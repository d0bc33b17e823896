/**
 * The keyword side of the million-chunk benchmark, in its own process (see vectorsMillion.ts):
 * indexes the generated chunks (files of ten, chunk i beside vector row i), answers the queries
 * exactly in memory, then stores the index as the extension does (`keywords-1.bin`, postings on
 * disk) and writes the queries with their exact top 30 into the folder given.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeywordIndex } from '../src/search/core/keywords/keywords';
import { writeKeywordFile } from '../src/search/core/keywords/keywordStore';
import { keywordCorpus } from './keywordCorpus';

export const CHUNKS_PER_FILE = 10;
export const fileOfRow = (row: number) => `pkg${Math.floor(row / CHUNKS_PER_FILE / 100)}/mod${Math.floor(row / CHUNKS_PER_FILE)}.ts`;
export const LIST = 30;

async function main() {
  const [dir, nText, queriesText] = process.argv.slice(2);
  const n = Number(nText);
  const t0 = performance.now();
  const corpus = keywordCorpus();
  const index = new KeywordIndex<number>();
  for (let row = 0; row < n; row += CHUNKS_PER_FILE) {
    const chunks = Array.from({ length: Math.min(CHUNKS_PER_FILE, n - row) }, (_, c) => ({ item: row + c, text: corpus.next() }));
    index.setFile(fileOfRow(row), chunks);
  }
  const indexSeconds = (performance.now() - t0) / 1000;
  const texts = corpus.queries(Number(queriesText));
  const exact = texts.map((t) => index.search(t, LIST).map((h) => [h.item, h.score, h.defines ? 1 : 0]));
  const t1 = performance.now();
  const state = await index.exportState(() => Promise.resolve());
  const written = writeKeywordFile(join(dir, 'keywords-1.bin'), 1, state);
  const storeSeconds = (performance.now() - t1) / 1000;
  writeFileSync(join(dir, 'keywords.json'), JSON.stringify({ texts, exact }));
  console.log(JSON.stringify({ indexSeconds, storeSeconds, terms: written.terms, postings: state.termIds.length }));
}

if (require.main === module) void main();
