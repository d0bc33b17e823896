import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeywordIndex } from '../../src/search/core/keywords/keywords';
import { FIRST_SPILL_CHUNKS, SPILL_CHUNKS, SpillingKeywords } from '../../src/search/core/keywords/keywordSpill';
import { KeywordRun } from '../../src/search/core/keywords/keywordRun';
import { keywordFile, StoredKeywords, writeKeywordFile } from '../../src/search/core/keywords/keywordStore';

/**
 * A first build's keyword index stored in batches and merged at the end answers exactly as the
 * same chunks indexed whole in memory: files sent again replace their chunks wherever the earlier
 * version was stored, files left out at the end are gone, and no batch file is left behind.
 */
describe('the keyword index of a first build in bounded batches', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mg-spill-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const words = ['parse', 'stream', 'token', 'handler', 'value', 'render', 'index', 'query', 'vector', 'cache'];
  const text = (f: number, c: number, version: number) =>
    `export function ${words[f % 10]}${words[(f + c) % 10]}${f}_${c}(input: string) {\n  const ${words[(c * 3 + version) % 10]} = ${words[(f * 7) % 10]}(input, ${version});\n  return ${words[(f + version) % 10]};\n}`;
  const chunksOf = (f: number, version: number) => Array.from({ length: 1 + (f % 4) }, (_, c) => text(f, c, version));

  it('answers as the whole index in memory, with files sent again and files left out', async () => {
    const spilling = new SpillingKeywords(dir, 3, 9);
    const whole = new KeywordIndex<{ file: string; index: number }>();
    const put = async (file: string, texts: string[]) => {
      await spilling.setFile(file, texts);
      whole.setFile(
        file,
        texts.map((t, index) => ({ item: { file, index }, text: t })),
      );
    };
    for (let f = 0; f < 40; f++) await put(`src/f${f}.ts`, chunksOf(f, 0));
    assert.ok(spilling.spills >= 8, `${spilling.spills} batches stored`);
    // Sent again: some stored in an early batch, one still in memory.
    for (const f of [0, 5, 17, 39]) await put(`src/f${f}.ts`, chunksOf(f, 1));
    const leftOut = new Set(['src/f3.ts', 'src/f21.ts', 'src/f39.ts']);
    for (const file of leftOut) whole.removeFile(file);
    const written = await spilling.finish((file) => !leftOut.has(file));
    assert.deepEqual(readdirSync(dir), ['keywords-3.bin'], 'only the merged file is left');
    const stored = await StoredKeywords.open(keywordFile(dir, 3), 3, () => Promise.resolve());
    assert.ok(stored);
    const merged = new KeywordIndex<{ file: string; index: number }>(stored, (file, index) => ({ file, index }));
    assert.equal(written.docs, whole.size);
    assert.equal(merged.size, whole.size);
    const shown = (hits: ReturnType<typeof merged.search>) =>
      hits.map((h) => `${h.item.file}#${h.item.index} ${h.score.toFixed(6)} ${h.defines ?? false}`).sort();
    // Identifiers (one defined in a file sent again, one in a file left out), words, phrases.
    for (const q of ['parseparse0_0', 'renderindex5_1', 'handlerhandler3_0', 'stream value', 'render input', 'query vector cache', 'index']) {
      const expected = shown(whole.search(q, 80));
      assert.ok(expected.length > 0 || q === 'handlerhandler3_0', q);
      assert.deepEqual(shown(merged.search(q, 80)), expected, q);
    }
    assert.deepEqual(
      merged.search('handlerhandler3_0', 5).filter((h) => h.item.file === 'src/f3.ts'),
      [],
      'a file left out is gone',
    );
    merged.close();
  });

  it('holds a workspace of up to FIRST_SPILL_CHUNKS chunks whole, then stores batches of SPILL_CHUNKS', async function () {
    this.timeout(60_000);
    const spilling = new SpillingKeywords(dir, 4);
    // Files of 64 one-line chunks: the counts land on the batch sizes exactly.
    const file = (f: number) => Array.from({ length: 64 }, (_, c) => `v${c} w${f % 97}`);
    let chunks = 0;
    let f = 0;
    const fill = async (upTo: number) => {
      for (; chunks < upTo; f++, chunks += 64) await spilling.setFile(`f${f}`, file(f));
    };
    await fill(FIRST_SPILL_CHUNKS - 64);
    assert.equal(spilling.spills, 0, 'a workspace below the first batch is never cut');
    await fill(FIRST_SPILL_CHUNKS);
    assert.equal(spilling.spills, 1, 'stored once it holds the first batch');
    await fill(FIRST_SPILL_CHUNKS + SPILL_CHUNKS - 64);
    assert.equal(spilling.spills, 1);
    await fill(FIRST_SPILL_CHUNKS + SPILL_CHUNKS);
    assert.equal(spilling.spills, 2, 'the later batches are smaller');
    const written = await spilling.finish(() => true);
    assert.equal(written.docs, chunks);
    assert.deepEqual(readdirSync(dir), ['keywords-4.bin']);
  });

  it('a build that stops removes its batches', async () => {
    const spilling = new SpillingKeywords(dir, 2, 5);
    for (let f = 0; f < 20; f++) await spilling.setFile(`f${f}.ts`, chunksOf(f, 0));
    assert.ok(readdirSync(dir).some((f) => f.includes('.spill-')));
    spilling.discard();
    assert.deepEqual(readdirSync(dir), []);
  });

  it('a batch read once in term order (its sections through small windows) gives every term and block a whole read gives', async () => {
    // 30,000 terms with long names: every section is larger than a window (64 KB), names straddle them.
    const index = new KeywordIndex<number>();
    const files = Array.from({ length: 300 }, (_, f) =>
      Array.from({ length: 4 }, (_, c) => Array.from({ length: 25 }, (_, k) => `identifier_with_a_rather_long_name_${f}_${c}_${k} shared${k % 7}`).join(' ')),
    );
    files.forEach((texts, f) =>
      index.setFile(
        `f${f}.ts`,
        texts.map((text, item) => ({ item, text })),
      ),
    );
    const path = join(dir, 'run.bin');
    writeKeywordFile(path, 7, await index.exportState(() => Promise.resolve()));
    const whole = await StoredKeywords.open(path, 7, () => Promise.resolve());
    const run = KeywordRun.open(path, 7);
    assert.ok(whole && run);
    assert.ok(whole.termCount > 30_000, `${whole.termCount} terms`);
    assert.deepEqual([run.docs, [...run.lengths], run.files, [...run.fileStarts]], [whole.docs, [...whole.lengths], whole.files, [...whole.fileStarts]]);
    const same = (p: ReturnType<typeof run.read>) => [[...p.docs], [...p.tfs], [...p.definers]];
    for (let t = 0; t < whole.termCount; t++) {
      assert.equal(run.termName(t), whole.termName(t));
      assert.deepEqual(same(run.read(t, t % 2 === 0)), same(whole.read(t, t % 2 === 0)), `term ${t}`);
    }
    assert.equal(KeywordRun.open(path, 8), undefined, 'another generation is refused');
    run.close();
    whole.close();
  });
});
