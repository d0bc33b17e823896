import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeaderSchema } from '../../src/search/core/keywords/keywordStore';
import { SemanticIndex, type EmbedFn } from '../../src/search/core/semanticIndex';

/**
 * The keyword index is stored beside each snapshot and read back at load instead of tokenising
 * every file again; the files the log changed since are tokenised again; a damaged store falls
 * back to the files.
 */
const embed: EmbedFn = (texts) =>
  Promise.resolve({ vectors: texts.map((t) => Float32Array.from({ length: 16 }, (_, d) => ((t.length * (d + 1)) % 7) - 3 + 0.5)), requests: 1 });

describe('the keyword index stored with the search index', () => {
  let base: string;
  let root: string;
  let store: string;
  const opened: SemanticIndex[] = [];
  const make = (extra: Partial<ConstructorParameters<typeof SemanticIndex>[0]> = {}) => {
    const index = new SemanticIndex({
      folders: [{ name: 'ws', path: root }],
      excludes: [],
      storeDir: store,
      model: 'stand-in',
      embed,
      maxLogEntries: 4,
      ...extra,
    });
    opened.push(index);
    return index;
  };
  const files = (name: string) => readdirSync(store).filter((f) => f.startsWith(name));
  const found = async (index: SemanticIndex, query: string) => {
    await index.keywordsReady;
    // The chunks that have the identifier whole (its parts alone match every file here).
    return index
      .keywordSearch(query, 10)
      .filter((h) => h.matched.includes(query.toLowerCase()))
      .map((h) => h.item.file);
  };

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'mg-keywords-'));
    root = join(base, 'ws');
    store = join(base, 'store');
    mkdirSync(root);
    for (let i = 0; i < 8; i++)
      writeFileSync(join(root, `m${i}.ts`), `export function computeInvoiceTotal${i}(lines: number[]): number {\n  return lines.length * ${i};\n}\n`);
    const index = make();
    await index.update();
    await index.idle();
  });
  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('a load reads the stored keywords back, not the files', async () => {
    assert.equal(files('keywords-').length, 1, 'stored after the first build');
    // Gone from disk behind the index's back: only the stored keywords still know what it said.
    rmSync(join(root, 'm3.ts'));
    const index = make();
    assert.equal(await index.load(), 'loaded');
    assert.deepEqual(await found(index, 'computeInvoiceTotal3'), ['m3.ts']);
  });

  it('files the log changed since the snapshot are tokenised again; a fold stores the keywords anew', async () => {
    const index = make();
    await index.load();
    writeFileSync(join(root, 'm5.ts'), 'export function refundPayment(id: string): void {}\n');
    await index.update([join(root, 'm5.ts')]);
    rmSync(join(root, 'm6.ts'));
    await index.update([join(root, 'm6.ts')]);
    const again = make();
    await again.load();
    assert.deepEqual(await found(again, 'refundPayment'), ['m5.ts'], 'the changed file, as it is now');
    assert.deepEqual(await found(again, 'computeInvoiceTotal5'), [], 'not as it was');
    assert.deepEqual(await found(again, 'computeInvoiceTotal6'), [], 'the removed file is gone');
    const [before] = files('keywords-');
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(root, `m${i}.ts`), `export const settled${i} = ${i};\n`);
      await again.update([join(root, `m${i}.ts`)]);
    }
    await again.idle();
    const [after] = files('keywords-');
    assert.notEqual(after, before, 'the fold stored its own generation');
    assert.equal(files('keywords-').length, 1, 'and the previous one went');
    const third = make();
    await third.load();
    assert.deepEqual(await found(third, 'settled1'), ['m1.ts']);
    assert.deepEqual(await found(third, 'refundPayment'), ['m5.ts']);
  });

  it('a damaged store falls back to reading the files', async () => {
    const [name] = files('keywords-');
    writeFileSync(join(store, name), Buffer.from('\x10\x00\x00\x00{"version":1,"gen'));
    const index = make();
    assert.equal(await index.load(), 'loaded');
    assert.deepEqual(await found(index, 'computeInvoiceTotal2'), ['m2.ts']);
  });

  it('a fold whose keywords cannot be stored reports it and reads the files again; the keywords stay whole', async () => {
    const errors: unknown[] = [];
    const index = new SemanticIndex({
      folders: [{ name: 'ws', path: root }],
      excludes: [],
      storeDir: store,
      model: 'stand-in',
      embed,
      maxLogEntries: 2,
      onBackgroundError: (e) => errors.push(e),
    });
    opened.push(index);
    await index.load();
    await index.keywordsReady;
    // The stored keywords the fold would merge from disappear (a disk cleaner, say); the index keeps its open file.
    for (const f of files('keywords-')) rmSync(join(store, f));
    writeFileSync(join(root, 'm1.ts'), 'export function chargeCard(id: string): void {}\n');
    await index.update([join(root, 'm1.ts')]);
    writeFileSync(join(root, 'm2.ts'), 'export function voidInvoice(id: string): void {}\n');
    await index.update([join(root, 'm2.ts')]);
    await index.idle();
    assert.equal(errors.length, 1, 'reported once');
    assert.match(String(errors[0]), /keyword index of generation \d+ does not read/);
    assert.deepEqual(await found(index, 'voidInvoice'), ['m2.ts']);
    assert.deepEqual(await found(index, 'computeInvoiceTotal4'), ['m4.ts'], 'the unchanged files are read again');
    assert.deepEqual(await found(index, 'computeInvoiceTotal1'), [], 'the changed one as it is now');
    assert.deepEqual(files('keywords-'), [], 'nothing stored for the new generation');
    const next = make();
    assert.equal(await next.load(), 'loaded');
    assert.deepEqual(await found(next, 'chargeCard'), ['m1.ts'], 'the next load reads the files');
    await next.close();
    // The fold after that stores the whole keyword index again (it no longer needs the lost file).
    for (const i of [3, 4]) {
      writeFileSync(join(root, `m${i}.ts`), `export const refunded${i} = ${i};\n`);
      await index.update([join(root, `m${i}.ts`)]);
    }
    await index.idle();
    assert.equal(errors.length, 1, 'no second failure');
    assert.equal(files('keywords-').length, 1);
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.deepEqual(await found(again, 'chargeCard'), ['m1.ts']);
    assert.deepEqual(await found(again, 'refunded4'), ['m4.ts']);
  });

  it("a streamed first build's worker stores the keywords before the build returns: nothing is left to store in the background", async () => {
    rmSync(store, { recursive: true, force: true });
    const index = make();
    await index.update();
    assert.equal(files('keywords-').length, 1, 'stored by the time the build returned');
    assert.equal(index.size.chunks, 8);
    let idle = false;
    void index.idle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(idle, true, 'no keywords write in the background');
    assert.deepEqual(await found(index, 'computeInvoiceTotal3'), ['m3.ts'], 'answered from the stored keywords');
    writeFileSync(join(root, 'm7.ts'), 'export function captureFunds(id: string): void {}\n');
    await index.update([join(root, 'm7.ts')]);
    assert.deepEqual(await found(index, 'captureFunds'), ['m7.ts']);
    assert.deepEqual(await found(index, 'computeInvoiceTotal7'), []);
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.deepEqual(await found(again, 'computeInvoiceTotal3'), ['m3.ts']);
    assert.deepEqual(await found(again, 'captureFunds'), ['m7.ts']);
  });

  it('a change right after a first build that went the batch way does not wait for its keywords to be stored, and is carried over to them', async () => {
    rmSync(store, { recursive: true, force: true });
    // The stream's worker stopped as it starts: the snapshot is built the batch way, its keywords on the host.
    let workers = 0;
    const index = make({ onSnapshotWorker: (w) => void (workers++ === 0 && w.terminate()) });
    await index.update();
    assert.equal(workers, 2);
    let stored = false;
    void index.idle().then(() => (stored = true));
    writeFileSync(join(root, 'm7.ts'), 'export function captureFunds(id: string): void {}\n');
    await index.update([join(root, 'm7.ts')]);
    assert.equal(stored, false, 'the change returned while the keywords were being written');
    assert.deepEqual(await found(index, 'captureFunds'), ['m7.ts']);
    await index.idle();
    assert.equal(files('keywords-').length, 1);
    assert.deepEqual(await found(index, 'captureFunds'), ['m7.ts'], 'carried over to the stored index');
    assert.deepEqual(await found(index, 'computeInvoiceTotal7'), [], 'its old chunks masked');
    assert.deepEqual(await found(index, 'computeInvoiceTotal6'), ['m6.ts'], 'the others from the file');
    const again = make();
    await again.load();
    assert.deepEqual(await found(again, 'captureFunds'), ['m7.ts']);
    assert.deepEqual(await found(again, 'computeInvoiceTotal7'), []);
  });
});

describe("a stored keyword file's header", () => {
  const header = (files: unknown) => ({
    version: 3,
    generation: 1,
    files,
    totalLength: 0,
    sections: { lengths: [0, 0], postingCounts: [0, 0], definitionCounts: [0, 0], blockAt: [0, 0], terms: [0, 0], termAt: [0, 1] },
  });

  it('names each file with its chunk count, or is refused', () => {
    assert.ok(
      HeaderSchema.safeParse(
        header([
          ['a.ts', 3],
          ['b.ts', 0],
        ]),
      ).success,
    );
    assert.ok(HeaderSchema.safeParse(header([])).success);
    for (const files of [[['a.ts', '3']], [['a.ts']], [['a.ts', 3, 'x']], [[3, 'a.ts']], ['a.ts'], [null], { 'a.ts': 3 }, 'a.ts 3']) {
      assert.equal(HeaderSchema.safeParse(header(files)).success, false, JSON.stringify(files));
    }
  });
});
