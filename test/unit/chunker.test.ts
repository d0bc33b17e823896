import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { chunkHash, chunkText } from '../../src/search/core/chunker';

describe('chunker', () => {
  const fn = (i: number) => [`export function f${i}(x: number): number {`, `  const y = x * ${i};`, `  return y + ${i};`, '}', ''].join('\n');
  const source = Array.from({ length: 60 }, (_, i) => fn(i)).join('\n');

  it('keeps chunks under the token budget, covering every line, with overlap', () => {
    const chunks = chunkText('src/f.ts', source, { maxTokens: 60, overlapLines: 2 });
    assert.ok(chunks.length > 5);
    for (const c of chunks) assert.ok(c.text.length <= 240, `chunk of ${c.text.length} chars`);
    const lines = source.split('\n').length - 1;
    const covered = new Set<number>();
    for (const c of chunks) for (let l = c.startLine; l <= c.endLine; l++) covered.add(l);
    for (let l = 1; l <= lines; l++) if (source.split('\n')[l - 1].trim()) assert.ok(covered.has(l), `line ${l} is in a chunk`);
    assert.ok(
      chunks.slice(1).some((c, i) => c.startLine <= chunks[i].endLine),
      'neighbouring chunks overlap',
    );
  });

  it('ends chunks at blank lines or top-level declarations where it can', () => {
    const chunks = chunkText('src/f.ts', source, { maxTokens: 60 });
    for (const c of chunks.slice(0, -1)) {
      const last = c.text.split('\n').at(-1)!;
      assert.ok(last === '}' || last === '', `chunk ends at a boundary, not mid-function: "${last}"`);
    }
    // The next chunk repeats the last lines (the overlap), then goes on from the boundary.
    assert.ok(chunks[1].startLine <= chunks[0].endLine);
    assert.match(chunks[1].text, /\n\nexport function/);
  });

  it('hashes by path and text: same text in another file differs, unchanged text is stable', () => {
    const a = chunkText('a.ts', 'const x = 1;\n');
    const b = chunkText('b.ts', 'const x = 1;\n');
    assert.notEqual(a[0].hash, b[0].hash);
    assert.equal(chunkText('a.ts', 'const x = 1;\n')[0].hash, a[0].hash);
    // An edit changes the chunks from the edit on; the chunks before it keep their hashes.
    const before = chunkText('s.ts', source, { maxTokens: 60 });
    const edited = source.replace('return y + 40;', 'return y + 4000;');
    const after = chunkText('s.ts', edited, { maxTokens: 60 });
    const editLine = source.split('\n').findIndex((l) => l.includes('return y + 40;')) + 1;
    const untouched = before.filter((c) => c.endLine < editLine);
    assert.ok(untouched.length > 10);
    for (const c of untouched)
      assert.ok(
        after.some((d) => d.hash === c.hash),
        `chunk ${c.startLine}-${c.endLine} keeps its hash`,
      );
    assert.ok(!after.some((d) => d.text.includes('return y + 40;')));
  });

  it('a hash is the first 32 hex digits of SHA-256 over the path, a NUL and the text (what stored indexes and team stores are keyed by)', () => {
    // Pinned: a hash that changed would make every stored index and team store miss, and embed everything again.
    const text = 'export const rate = 0.2;\n';
    const [c] = chunkText('src/tax.ts', text);
    assert.equal(c.hash, createHash('sha256').update('src/tax.ts\u0000export const rate = 0.2;').digest('hex').slice(0, 32));
    assert.equal(chunkHash('src/ünï.ts', 'ß'), createHash('sha256').update('src/ünï.ts\u0000ß').digest('hex').slice(0, 32));
    assert.match(c.hash, /^[0-9a-f]{32}$/);
  });

  it('cuts very long lines and skips blank files', () => {
    const long = chunkText('min.js', 'x'.repeat(10_000), { maxTokens: 100 });
    assert.equal(long.length, 1);
    assert.equal(long[0].text.length, 400);
    assert.deepEqual(chunkText('empty.ts', '\n\n  \n'), []);
  });
});
