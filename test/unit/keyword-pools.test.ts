import { strict as assert } from 'node:assert';
import { KeywordIndex } from '../../src/search/core/keywords/keywords';

/**
 * The keyword index keeps its chunks' numbers in pooled blocks: a few files take kilobytes (three
 * whole blocks, 10 MB, were taken at the first file and stayed in the extension host all day), and
 * an index that grows through the first block's doublings and on into whole blocks answers every
 * query as it did before each growth.
 */
describe('keyword index pools', () => {
  const fileText = (f: number) =>
    `export function handleRequest${f}(input: string) {\n  const unique${f} = input.trim() + shared;\n  return unique${f};\n}\n// ${Array.from({ length: 40 }, (_, i) => `word${(f * 7 + i) % 300}`).join(' ')}`;

  it('holds a few files in kilobytes, not whole blocks', () => {
    const index = new KeywordIndex<string>();
    for (let f = 0; f < 5; f++) index.setFile(`src/f${f}.ts`, [{ item: `f${f}`, text: fileText(f) }]);
    assert.ok(index.pooledBytes <= 64 * 1024, `${index.pooledBytes} bytes for five small files`);
    assert.deepEqual(
      index.search('unique3', 5).map((h) => h.item),
      ['f3'],
    );
  });

  it('finds every file by its own name after growing through the doublings and past a whole block', () => {
    const index = new KeywordIndex<string>();
    const files = 30_000;
    let grewPast = 0;
    for (let f = 0; f < files; f++) {
      const before = index.pooledBytes;
      index.setFile(`src/f${f}.ts`, [{ item: `f${f}`, text: fileText(f) }]);
      if (index.pooledBytes !== before) grewPast++;
    }
    // 30,000 chunks of about 50 terms: past the first block (2^20 numbers) into a second.
    assert.ok(index.pooledBytes > (1 << 20) * 10, `${index.pooledBytes} bytes`);
    assert.ok(grewPast >= 9, `the pools grew ${grewPast} times`);
    for (let f = 0; f < files; f += 997) {
      assert.equal(index.search(`unique${f}`, 3)[0]?.item, `f${f}`, `unique${f}`);
      // Definitions are read back from their pool: what was there before each growth is still there.
      const definer = index.search(`handleRequest${f}`, 3)[0];
      assert.deepEqual([definer?.item, definer?.defines], [`f${f}`, `handlerequest${f}`], `handleRequest${f}`);
    }
    // A file replaced after the growth is found by its new text only.
    index.setFile('src/f5.ts', [{ item: 'f5 again', text: 'export const replacedName = 1;' }]);
    assert.deepEqual(
      index.search('replacedName', 3).map((h) => h.item),
      ['f5 again'],
    );
    assert.equal(index.search('unique5', 3).length, 0);
  });
});
