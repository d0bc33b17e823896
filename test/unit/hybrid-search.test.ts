import { strict as assert } from 'node:assert';
import { definitionsOf, identifierParts, identifierQuery, KeywordIndex, reciprocalRankFusion, termsOf } from '../../src/search/core/keywords/keywords';
import { fuseResults, whyMatched } from '../../src/search/core/hybrid';
import type { IndexedChunk } from '../../src/search/core/semanticIndex';

const chunk = (file: string, start: number): IndexedChunk => ({ file, start, end: start + 9, hash: `${file}:${start}` });

describe('keyword search over code', () => {
  it('splits identifiers the way code names things', () => {
    assert.deepEqual(identifierParts('invoiceTotal'), ['invoice', 'total']);
    assert.deepEqual(identifierParts('INVOICE_TOTAL'), ['invoice', 'total']);
    assert.deepEqual(identifierParts('HTTPServerError'), ['http', 'server', 'error']);
    assert.deepEqual(identifierParts('parse_config2'), ['parse', 'config']);
    assert.deepEqual(termsOf('const invoice_total = sumLines(lines);'), ['const', 'invoice_total', 'invoice', 'total', 'sumlines', 'sum', 'lines', 'lines']);
  });

  it('finds the names a chunk defines, in several languages', () => {
    assert.deepEqual(definitionsOf('export function invoiceTotal(lines: number[]): number {'), ['invoicetotal']);
    assert.deepEqual(definitionsOf('class RetryPolicy {\n  nextDelay(attempt: number): number {\n    return 1;\n  }\n}'), ['retrypolicy', 'nextdelay']);
    assert.deepEqual(definitionsOf('def parse_config(path):\n    pass'), ['parse_config']);
    assert.deepEqual(definitionsOf('func (s *Server) ServeHTTP(w http.ResponseWriter) {'), ['servehttp']);
    assert.deepEqual(definitionsOf('if (ready) {\n  call(x);\n}'), [], 'control flow is not a definition');
  });

  it('tells an identifier query from a question', () => {
    assert.equal(identifierQuery('invoiceTotal'), 'invoicetotal');
    assert.equal(identifierQuery('parse_config'), 'parse_config');
    assert.equal(identifierQuery('RetryPolicy.nextDelay'), 'nextdelay');
    assert.equal(identifierQuery('where do retries wait'), undefined);
    assert.equal(identifierQuery('retries'), undefined, 'a plain word is not an identifier');
  });

  it('ranks by BM25 and puts the definition of an identifier first, above files that only use it more', () => {
    const index = new KeywordIndex<IndexedChunk>();
    const use = chunk('src/report.ts', 1);
    const def = chunk('src/billing.ts', 20);
    const other = chunk('src/other.ts', 1);
    index.setFile('src/report.ts', [{ item: use, text: 'const a = invoiceTotal(x);\nconst b = invoiceTotal(y);\nlog(invoiceTotal(z));' }]);
    index.setFile('src/billing.ts', [
      { item: def, text: 'export function invoiceTotal(lines: number[]): number {\n  return lines.reduce((s, v) => s + v, 0);\n}' },
    ]);
    index.setFile('src/other.ts', [{ item: other, text: 'export const greeting = "hello";' }]);
    const hits = index.search('invoiceTotal', 10);
    assert.deepEqual(
      hits.map((h) => h.item.file),
      ['src/billing.ts', 'src/report.ts'],
    );
    assert.equal(hits[0].defines, 'invoicetotal');
    assert.ok(hits[1].score > hits[0].score, 'the usage scores higher by BM25; the definition still comes first');
    index.removeFile('src/billing.ts');
    assert.deepEqual(
      index.search('invoiceTotal', 10).map((h) => h.item.file),
      ['src/report.ts'],
    );
  });

  it('stays correct through many replaced files (removed chunks leave holes, dropped in bulk)', () => {
    const index = new KeywordIndex<IndexedChunk>();
    for (let round = 0; round < 3; round++) {
      for (let f = 0; f < 1500; f++)
        index.setFile(`src/f${f}.ts`, [{ item: chunk(`src/f${f}.ts`, round + 1), text: `export const value${f} = version${round}(${f});` }]);
    }
    assert.equal(index.size, 1500);
    const hits = index.search('version2', 5000);
    assert.equal(hits.length, 1500, 'every file in its newest version');
    assert.ok(hits.every((h) => h.item.start === 3));
    assert.equal(index.search('version0', 10).length, 0, 'no old version left');
    assert.equal(index.search('value42', 3)[0].item.file, 'src/f42.ts');
  });

  it('fuses rankings by reciprocal rank', () => {
    const fused = reciprocalRankFusion(
      [
        ['a', 'b', 'c'],
        ['c', 'a'],
      ],
      (x) => x,
    );
    assert.deepEqual(
      fused.map((f) => f.item),
      ['a', 'c', 'b'],
    );
    assert.ok(Math.abs(fused[0].score - (1 / 61 + 1 / 62)) < 1e-12);
  });
});

describe('hybrid results', () => {
  it('an exact identifier finds its definition first even when the embeddings rank it low', () => {
    const def = chunk('src/billing.ts', 20);
    const vector = Array.from({ length: 30 }, (_, i) => ({ chunk: chunk(`src/v${i}.ts`, 1), score: 0.4 - i * 0.005 }));
    vector.push({ chunk: def, score: 0.2 });
    const results = fuseResults(vector, [{ item: def, score: 3, matched: ['invoicetotal'], defines: 'invoicetotal' }], 10);
    assert.equal(results[0].chunk, def);
    assert.match(whyMatched({ ...results[0], preview: '' }), /^defines invoicetotal · similarity 0\.20 · words: invoicetotal$/);
  });

  it('drops near-zero and negative similarities, and those far below the best', () => {
    const vector = [
      { chunk: chunk('a.ts', 1), score: 0.42 },
      { chunk: chunk('b.ts', 1), score: 0.3 },
      { chunk: chunk('c.ts', 1), score: 0.15 },
      { chunk: chunk('d.ts', 1), score: 0.0 },
      { chunk: chunk('e.ts', 1), score: -0.016 },
    ];
    assert.deepEqual(
      fuseResults(vector, [], 10).map((r) => r.chunk.file),
      ['a.ts', 'b.ts'],
    );
    const weak = [{ chunk: chunk('x.ts', 1), score: 0.03 }];
    assert.deepEqual(fuseResults(weak, [], 10), [], 'nothing similar: no results rather than noise');
  });

  it('a chunk both passes found ranks above one only one found', () => {
    const a = chunk('a.ts', 1);
    const b = chunk('b.ts', 1);
    const c = chunk('c.ts', 1);
    const results = fuseResults(
      [
        { chunk: a, score: 0.4 },
        { chunk: b, score: 0.39 },
      ],
      [
        { item: c, score: 5, matched: ['retry'] },
        { item: b, score: 4, matched: ['retry'] },
      ],
      10,
    );
    assert.equal(results[0].chunk, b);
  });
});
