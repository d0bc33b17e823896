import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeywordIndex } from '../../src/search/core/keywords/keywords';
import { StoredKeywords, writeKeywordFile } from '../../src/search/core/keywords/keywordStore';

/**
 * The keyword index with its postings on disk answers exactly as the same chunks in memory: after
 * it is written, with files replaced, removed and added on top of it, and once those are merged
 * into the next stored generation. A damaged file is refused, never half-read.
 */
type Item = { file: string; i: number };

const WORDS = [
  'invoice',
  'total',
  'parse',
  'render',
  'cache',
  'token',
  'stream',
  'retry',
  'budget',
  'index',
  'vector',
  'query',
  'merge',
  'fold',
  'snapshot',
  'payment',
  'refund',
  'ledger',
  'account',
  'session',
];

function random(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Code-like chunks: a definition, a few identifiers made of common parts, a rare name or two. */
function chunkText(r: () => number, tag: string): string {
  const pick = () => WORDS[Math.floor(r() ** 2 * WORDS.length)];
  const name = `${pick()}${pick()[0].toUpperCase()}${pick().slice(1)}`;
  const lines = [`export function ${name}${tag}(value: number) {`];
  for (let l = 0; l < 1 + Math.floor(r() * 6); l++) lines.push(`  const ${pick()}_${pick()} = ${pick()}.${pick()}(value) + ${Math.floor(r() * 100)};`);
  if (r() < 0.2) lines.push(`  return rareName${tag};`);
  lines.push('}');
  return lines.join('\n');
}

function corpus(seed: number, files: number, tag = '') {
  const r = random(seed);
  return Array.from({ length: files }, (_, f) => ({
    file: `src/f${tag}${f}.ts`,
    chunks: Array.from({ length: 1 + Math.floor(r() * 5) }, (_, c) => chunkText(r, `${tag}${f}x${c}`)),
  }));
}

const QUERIES = [
  'invoice total',
  'parseToken',
  'refund ledger account',
  'retry budget snapshot',
  'rareName3x0',
  'value',
  'cache_stream',
  'merge fold',
  'sessionIndex',
  'vector.query',
  'nothing matches this',
];

describe('keyword postings on disk', () => {
  let dir: string;
  const open: StoredKeywords[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mg-postings-'))));
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const fill = (index: KeywordIndex<Item>, files: { file: string; chunks: string[] }[]) => {
    for (const f of files)
      index.setFile(
        f.file,
        f.chunks.map((text, i) => ({ item: { file: f.file, i }, text })),
      );
  };
  const noYield = () => Promise.resolve();
  const openStored = async (path: string, generation: number) => {
    const s = await StoredKeywords.open(path, generation, noYield);
    assert.ok(s, 'the stored index opens');
    open.push(s);
    return s;
  };
  const over = (s: StoredKeywords) => new KeywordIndex<Item>(s, (file, i) => ({ file, i }));
  /** Same hits in the same order, same scores (float32 accumulators: a little rounding apart). */
  const sameAnswers = (a: KeywordIndex<Item>, b: KeywordIndex<Item>, label: string) => {
    assert.equal(a.size, b.size, `${label}: size`);
    for (const q of QUERIES) {
      const x = a.search(q, 10);
      const y = b.search(q, 10);
      assert.deepEqual(
        x.map((h) => `${h.item.file}#${h.item.i}`),
        y.map((h) => `${h.item.file}#${h.item.i}`),
        `${label}: ${q}`,
      );
      x.forEach((h, i) => {
        assert.ok(Math.abs(h.score - y[i].score) < 1e-4 * Math.max(1, h.score), `${label}: ${q} score`);
        assert.deepEqual(h.matched, y[i].matched);
        assert.equal(h.defines, y[i].defines);
      });
    }
  };

  it('answers as the same chunks in memory, before and after changes, and after they are merged into the next file', async () => {
    const files = corpus(1, 120);
    const memory = new KeywordIndex<Item>();
    fill(memory, files);
    const first = join(dir, 'keywords-1.bin');
    const written = writeKeywordFile(first, 1, await memory.exportState(noYield));
    assert.equal(written.docs, memory.size);
    const disk = over(await openStored(first, 1));
    sameAnswers(disk, memory, 'stored');
    assert.ok(disk.search('invoice total', 10).length === 10, 'the common words find chunks');
    assert.equal(disk.search('rareName3x0', 10)[0]?.defines, undefined, 'a use, not a definition');

    // Replaced, removed and new files on top of the stored ones.
    const oldName = /function (\w+)/.exec(files[0].chunks[0])![1];
    const whole = (index: KeywordIndex<Item>, name: string) =>
      index
        .search(name, 10)
        .filter((h) => h.matched.includes(name.toLowerCase()))
        .map((h) => [h.item.file, h.defines]);
    assert.deepEqual(whole(disk, oldName), [[files[0].file, oldName.toLowerCase()]], 'found before the change');
    const changed = corpus(2, 30, 'n');
    for (const [i, f] of files.slice(0, 20).entries()) {
      const replacement = { file: f.file, chunks: changed[i].chunks };
      fill(memory, [replacement]);
      fill(disk, [replacement]);
    }
    for (const f of files.slice(20, 35)) {
      memory.removeFile(f.file);
      disk.removeFile(f.file);
    }
    fill(memory, changed.slice(20));
    fill(disk, changed.slice(20));
    sameAnswers(disk, memory, 'with changes');
    assert.deepEqual(whole(disk, oldName), [], 'a replaced file no longer answers with its old chunks');
    const newName = /function (\w+)/.exec(changed[0].chunks[0])![1];
    assert.deepEqual(whole(disk, newName), [[files[0].file, newName.toLowerCase()]], 'but with its new ones');

    // The next generation: the stored chunks less the changed files, plus the in-memory ones.
    const base = disk.stored!;
    assert.equal(base.masked.size, 35);
    const second = join(dir, 'keywords-2.bin');
    writeKeywordFile(second, 2, await disk.exportState(noYield), base);
    const merged = over(await openStored(second, 2));
    sameAnswers(merged, memory, 'merged');
    const fresh = new KeywordIndex<Item>();
    const final = [...files.slice(35), ...files.slice(0, 20).map((f, i) => ({ file: f.file, chunks: changed[i].chunks })), ...changed.slice(20)];
    fill(fresh, final);
    const direct = join(dir, 'keywords-3.bin');
    writeKeywordFile(direct, 3, await fresh.exportState(noYield));
    assert.ok(statSync(second).size <= statSync(direct).size + 64, 'terms no chunk has any longer are dropped');
  });

  it('an identifier query puts the stored chunks that define it first', async () => {
    const memory = new KeywordIndex<Item>();
    fill(memory, [
      { file: 'a.ts', chunks: ['const x = computeInvoiceTotal(lines) + computeInvoiceTotal(more);'] },
      { file: 'b.ts', chunks: ['export function computeInvoiceTotal(lines: Line[]) {\n  return sum(lines);\n}'] },
    ]);
    const path = join(dir, 'keywords-1.bin');
    writeKeywordFile(path, 1, await memory.exportState(noYield));
    const disk = over(await openStored(path, 1));
    const hits = disk.search('computeInvoiceTotal', 5);
    assert.equal(hits[0].item.file, 'b.ts');
    assert.equal(hits[0].defines, 'computeinvoicetotal');
    assert.ok(hits[1].score > hits[0].score, 'pinned first though the use scores higher');
    disk.removeFile('b.ts');
    assert.deepEqual(
      disk.search('computeInvoiceTotal', 5).map((h) => h.item.file),
      ['a.ts'],
      'a removed file no longer answers',
    );
  });

  it('refuses a file that is truncated, damaged, of another generation or another set of files', async () => {
    const memory = new KeywordIndex<Item>();
    fill(memory, corpus(3, 20));
    const path = join(dir, 'keywords-4.bin');
    writeKeywordFile(path, 4, await memory.exportState(noYield));
    const good = readFileSync(path);
    assert.equal(await StoredKeywords.open(path, 5, noYield), undefined, 'another generation');
    assert.equal(await StoredKeywords.open(path, 4, noYield, (files) => files.length === 19), undefined, 'not the snapshot files');
    assert.equal(await StoredKeywords.open(join(dir, 'missing.bin'), 4, noYield), undefined, 'missing');
    truncateSync(path, good.length - 3);
    assert.equal(await StoredKeywords.open(path, 4, noYield), undefined, 'truncated');
    // A block count pointing past the blocks: the header still reads, the numbers do not hold.
    const damaged = Buffer.from(good);
    const headerLength = damaged.readUInt32LE(damaged.length - 8);
    const header = JSON.parse(damaged.toString('utf8', damaged.length - 8 - headerLength, damaged.length - 8)) as {
      sections: Record<string, [number, number]>;
    };
    damaged.writeInt32LE(1 << 24, header.sections.postingCounts[0]);
    writeFileSync(path, damaged);
    assert.equal(await StoredKeywords.open(path, 4, noYield), undefined, 'a count out of bounds');
    const flipped = Buffer.from(good);
    flipped[flipped.length - 1] ^= 0xff;
    writeFileSync(path, flipped);
    assert.equal(await StoredKeywords.open(path, 4, noYield), undefined, 'not a keyword file');
    writeFileSync(path, good);
    assert.ok(await openStored(path, 4), 'the good bytes open');
  });

  it('chunk numbers out of range in a block are skipped by queries and by the merge, never used', async () => {
    const memory = new KeywordIndex<Item>();
    fill(memory, corpus(5, 30));
    const path = join(dir, 'keywords-1.bin');
    writeKeywordFile(path, 1, await memory.exportState(noYield));
    const stored = await openStored(path, 1);
    const t = stored.termId('invoice')!;
    const bytes = readFileSync(path);
    const headerLength = bytes.readUInt32LE(bytes.length - 8);
    const header = JSON.parse(bytes.toString('utf8', bytes.length - 8 - headerLength, bytes.length - 8)) as { sections: Record<string, [number, number]> };
    const blockAt = new Float64Array(
      bytes.buffer.slice(bytes.byteOffset + header.sections.blockAt[0], bytes.byteOffset + header.sections.blockAt[0] + header.sections.blockAt[1] * 8),
    );
    const count = stored.read(t).docs.length;
    assert.ok(count >= 2);
    stored.close();
    bytes.writeInt32LE(-5, blockAt[t]);
    bytes.writeInt32LE(1 << 30, blockAt[t] + 4);
    writeFileSync(path, bytes);
    const damaged = over(await openStored(path, 1));
    const hits = damaged.search('invoice', 1000);
    assert.equal(hits.length, count - 2, `the two bad numbers left out: ${hits.length} of ${count}`);
    assert.ok(hits.every((h) => h.item.i >= 0 && memory.search('invoice', 1000).some((m) => m.item.file === h.item.file && m.item.i === h.item.i)));
    const next = join(dir, 'keywords-2.bin');
    writeKeywordFile(next, 2, await damaged.exportState(noYield), damaged.stored);
    const merged = over(await openStored(next, 2));
    assert.equal(merged.search('invoice', 1000).length, count - 2);
  });
});
