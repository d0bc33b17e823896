import { strict as assert } from 'node:assert';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexingStopped, SemanticIndex, type EmbedFn } from '../../src/search/core/semanticIndex';
import { clientFor, useEmulator } from './helpers';

/** Folders the tests made, removed once they are done. */
const made: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

function fixture(): string {
  const root = tempDir('mg-index-');
  const w = (p: string, t: string | Buffer) => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), t);
  };
  w('src/greet.ts', 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n');
  w(
    'src/math.ts',
    'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function multiply(a: number, b: number): number {\n  return a * b;\n}\n',
  );
  w('src/stream.ts', 'export async function* parseStream(body: AsyncIterable<string>) {\n  for await (const chunk of body) yield chunk.split("\\n\\n");\n}\n');
  for (let i = 0; i < 12; i++) w(`src/feature${i}.ts`, `// feature ${i} handles topic number ${i}\nexport const feature${i} = ${i};\n`);
  w('README.md', '# Demo project\n\nGreets people and adds numbers.\n');
  w('.gitignore', 'dist/\n');
  w('dist/bundle.js', 'function greet(){return "Hello"}');
  w('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  w('vendor/lib.min.js', `var a=${'1,'.repeat(5000)}1;`);
  w('data.bin', Buffer.from([1, 2, 0, 3]));
  return root;
}

describe('semantic index against the emulator', () => {
  const ctx = useEmulator();
  const root = fixture();
  const store = tempDir('mg-index-store-');
  // Every index a test made lets go of its files afterwards (its stored index stays).
  const opened: SemanticIndex[] = [];
  const track = (index: SemanticIndex) => (opened.push(index), index);
  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
  });
  after(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function make(model = 'embed-emu-256', batchSize = 8, concurrency = 2) {
    const { client } = clientFor(ctx.emu);
    const embed: EmbedFn = (texts, signal, onDone) =>
      client.embeddings.createBatched(model, texts, { batchSize, concurrency, signal, onProgress: (d) => onDone?.(d) });
    const index = track(new SemanticIndex({ folders: [{ name: 'demo', path: root }], excludes: ['**/vendor/**'], storeDir: store, model, embed }));
    return { index, client };
  }
  const query = async (index: SemanticIndex, client: ReturnType<typeof make>['client'], text: string, model = 'embed-emu-256') =>
    index.search((await client.embeddings.create({ model, input: text })).data[0].embedding, 5);

  it('builds the index, skipping ignored, binary and generated files, and answers queries', async () => {
    const { index, client } = make();
    assert.equal(await index.load(), 'empty');
    const before = ctx.emu.stats.embeddingRequests;
    const stats = await index.update();
    // 15 source files, README.md and .gitignore; dist/ (gitignored) and vendor/ (excluded) are not
    // walked; the PNG and the .bin are skipped as binary.
    assert.equal(stats.files, 17);
    assert.equal(stats.skipped, 2);
    assert.equal(stats.embedded, stats.chunks);
    assert.equal(stats.requests, ctx.emu.stats.embeddingRequests - before);
    assert.equal(stats.requests, Math.ceil(stats.embedded / 8));
    const hits = await query(index, client, 'greet a person by name hello');
    assert.equal(hits[0].chunk.file, 'src/greet.ts');
    assert.match(await index.chunkText(hits[0].chunk), /return `Hello, \$\{name\}!`/);
    const mathHits = await query(index, client, 'function multiply a b number');
    assert.equal(mathHits[0].chunk.file, 'src/math.ts');
    assert.ok(!(await query(index, client, 'bundle greet')).some((h) => h.chunk.file.startsWith('dist/') || h.chunk.file.startsWith('vendor/')));
  });

  it('after a restart, loads the stored index and embeds nothing again', async () => {
    const { index } = make();
    assert.equal(await index.load(), 'loaded');
    const before = ctx.emu.stats.embeddingRequests;
    const stats = await index.update();
    assert.equal(stats.embedded, 0);
    assert.equal(stats.requests, 0);
    assert.equal(ctx.emu.stats.embeddingRequests, before);
    assert.ok(index.size.chunks > 15);
    assert.ok(index.bytesPerChunk > 256 * 4);
  });

  it('re-embeds only the changed file, and drops a deleted one', async () => {
    const { index, client } = make();
    await index.load();
    writeFileSync(
      join(root, 'src', 'math.ts'),
      'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function divide(a: number, b: number): number {\n  return a / b;\n}\n',
    );
    const before = ctx.emu.stats.embeddedInputs;
    const stats = await index.update([join(root, 'src', 'math.ts')]);
    assert.equal(stats.embedded, 1, 'only the changed chunk of the changed file');
    assert.equal(ctx.emu.stats.embeddedInputs - before, 1);
    assert.equal((await query(index, client, 'function divide a b number'))[0].chunk.file, 'src/math.ts');
    rmSync(join(root, 'src', 'stream.ts'));
    await index.update([join(root, 'src', 'stream.ts')]);
    assert.ok(!(await query(index, client, 'parse stream chunks body')).some((h) => h.chunk.file === 'src/stream.ts'));
    // A full scan after the changes embeds nothing more.
    const fresh = make();
    await fresh.index.load();
    assert.equal((await fresh.index.update()).embedded, 0);
  });

  it('keeps a keyword index in step: built with the index, read back after a restart, updated per file', async () => {
    const { index } = make();
    await index.load();
    await index.keywordsReady;
    assert.deepEqual(
      index.keywordSearch('multiply', 3).map((h) => h.item.file),
      [],
      'multiply was edited away above',
    );
    assert.deepEqual(
      index.keywordSearch('divide', 3).map((h) => [h.item.file, h.defines]),
      [['src/math.ts', undefined]],
    );
    assert.equal(index.keywordSearch('kangarooFactory', 3).length, 0);
    writeFileSync(
      join(root, 'src', 'math.ts'),
      'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function invoiceTotal(lines: number[]): number {\n  return lines.reduce((s, x) => s + x, 0);\n}\n',
    );
    await index.update([join(root, 'src', 'math.ts')]);
    const hit = index.keywordSearch('invoiceTotal', 3)[0];
    assert.equal(hit.item.file, 'src/math.ts');
    assert.equal(hit.defines, 'invoicetotal');
    assert.equal(index.keywordSearch('divide', 3).length, 0, 'the old text is gone from the keywords');
  });

  it('a gateway failure mid-run keeps the finished batches and says how far it got', async () => {
    const extra = join(root, 'src', 'many');
    mkdirSync(extra, { recursive: true });
    for (let i = 0; i < 40; i++) writeFileSync(join(extra, `part${i}.ts`), `export const part${i} = "piece number ${i} of the many parts";\n`);
    const { index } = make('embed-emu-256', 4, 1);
    await index.load();
    ctx.emu.inject({ path: '/v1/embeddings', fault: { kind: 'status', status: 400, message: 'The model is not available.' }, after: 3, times: 100 });
    let stopped: IndexingStopped | undefined;
    try {
      await index.update();
    } catch (err) {
      stopped = err as IndexingStopped;
    }
    ctx.emu.faults.clear();
    assert.ok(stopped instanceof IndexingStopped, String(stopped));
    assert.equal(stopped.embedded, 12, 'three batches of four finished');
    assert.equal(stopped.total, 40);
    assert.match(stopped.message, /^Indexing stopped after 12 of 40 chunks: .*not available/);
    const resumed = await index.update();
    assert.equal(resumed.embedded, 28, 'the next run embeds only the rest');
    rmSync(extra, { recursive: true, force: true });
    await index.update();
  });

  it('a changed file whose embedding the gateway refuses stays at its previous version, in memory and on disk, until a later run', async () => {
    const { index, client } = make();
    await index.load();
    await index.update();
    const file = join(root, 'src', 'feature3.ts');
    const before = index.indexedFiles().get('src/feature3.ts');
    assert.ok(before, 'indexed before');
    writeFileSync(file, '// feature 3 now computes the lunar calendar\nexport const feature3 = "moon";\n');
    ctx.emu.inject({ path: '/v1/embeddings', fault: { kind: 'status', status: 400, message: 'The model is not available.' }, times: 10 });
    await assert.rejects(index.update([file]), IndexingStopped);
    ctx.emu.faults.clear();
    assert.equal(index.indexedFiles().get('src/feature3.ts'), before, 'the old version is kept, not dropped');
    // One index per store, as in the extension: this one lets go (its background work too) before the restart.
    await index.close();
    const reloaded = make();
    assert.equal(await reloaded.index.load(), 'loaded');
    assert.equal(reloaded.index.indexedFiles().get('src/feature3.ts'), before, 'and that is what was stored');
    const stats = await reloaded.index.update([file]);
    assert.equal(stats.embedded, 1, 'the next run takes the new version');
    assert.equal((await query(reloaded.index, client, 'lunar calendar moon'))[0].chunk.file, 'src/feature3.ts');
    // Back to its first text, whose row no file holds any more; a fold of the log is under way
    // (a quarter of the rows are dead) and drops that row when it is taken over, before the
    // change applies: the chunk is embedded again rather than the file left behind.
    writeFileSync(file, '// feature 3 handles topic number 3\nexport const feature3 = 3;\n');
    await reloaded.index.update([file]);
    assert.equal(reloaded.index.indexedFiles().get('src/feature3.ts'), statSync(file).size, 'the file is at its restored text');
  });

  it('a changed file is appended to the log: the snapshot and the other rows are not written again', async () => {
    const { index, client } = make();
    await index.load();
    const metaBefore = statSync(join(store, 'meta.json')).mtimeMs;
    const vectorsFile = readdirSync(store).find((f) => /^vectors-\d+\.f32$/.test(f))!;
    const sizeBefore = statSync(join(store, vectorsFile)).size;
    const logFile = vectorsFile.replace('vectors', 'log').replace('.f32', '.jsonl');
    const linesBefore = readFileSync(join(store, logFile), 'utf8').split('\n').filter(Boolean).length;
    writeFileSync(join(root, 'src', 'greet.ts'), 'export function greet(name: string): string {\n  return `Good morning, ${name}!`;\n}\n');
    const stats = await index.update([join(root, 'src', 'greet.ts')]);
    assert.equal(stats.embedded, 1);
    assert.equal(statSync(join(store, 'meta.json')).mtimeMs, metaBefore, 'the snapshot is untouched');
    assert.equal(statSync(join(store, vectorsFile)).size, sizeBefore + 256 * 4, 'one row appended');
    assert.equal(readFileSync(join(store, logFile), 'utf8').split('\n').filter(Boolean).length, linesBefore + 1);
    assert.equal((await query(index, client, 'good morning greet name'))[0].chunk.file, 'src/greet.ts');
    // A restart reads the snapshot and the log back to the same index.
    const again = make();
    assert.equal(await again.index.load(), 'loaded');
    assert.equal((await again.index.update()).embedded, 0);
    assert.equal((await query(again.index, again.client, 'good morning greet name'))[0].chunk.file, 'src/greet.ts');
  });

  it('a crash in the middle of an append leaves the last committed index, and the next append cuts the torn tail off', async () => {
    const vectorsFile = readdirSync(store).find((f) => /^vectors-\d+\.f32$/.test(f))!;
    const logFile = vectorsFile.replace('vectors', 'log').replace('.f32', '.jsonl');
    const codesFile = vectorsFile.replace('vectors', 'codes').replace('.f32', '.bin');
    const committed = statSync(join(store, vectorsFile)).size;
    // What a crash can leave: rows written but not named by a log line, and half a line.
    appendFileSync(join(store, vectorsFile), Buffer.alloc(256 * 4 * 3, 7));
    appendFileSync(join(store, codesFile), Buffer.alloc(32 * 3, 7));
    appendFileSync(join(store, logFile), '0badc0de {"rows":99,"add":["x"],"fi');
    const { index, client } = make();
    assert.equal(await index.load(), 'loaded');
    assert.equal((await query(index, client, 'good morning greet name'))[0].chunk.file, 'src/greet.ts');
    writeFileSync(join(root, 'src', 'greet.ts'), 'export function greet(name: string): string {\n  return `Good evening, ${name}!`;\n}\n');
    await index.update([join(root, 'src', 'greet.ts')]);
    assert.equal(statSync(join(store, vectorsFile)).size, committed + 256 * 4, 'the torn rows were cut off before the new one');
    const reloaded = make();
    assert.equal(await reloaded.index.load(), 'loaded');
    assert.equal((await query(reloaded.index, reloaded.client, 'good evening greet name'))[0].chunk.file, 'src/greet.ts');
    assert.equal((await reloaded.index.update()).embedded, 0);
  });

  it('folds the log into a new snapshot once a quarter of the rows are dead', async () => {
    const { index } = make();
    await index.load();
    const generation = () => Number(/^vectors-(\d+)\.f32$/.exec(readdirSync(store).find((f) => /^vectors-\d+\.f32$/.test(f))!)![1]);
    const before = generation();
    for (let i = 0; i < 12; i++) rmSync(join(root, 'src', `feature${i}.ts`));
    await index.update(Array.from({ length: 12 }, (_, i) => join(root, 'src', `feature${i}.ts`)));
    // The fold runs in a worker thread after the update returned.
    await index.idle();
    assert.equal(generation(), before + 1, 'a new generation');
    assert.equal(readFileSync(join(store, `log-${before + 1}.jsonl`), 'utf8'), '', 'with an empty log');
    assert.equal(readdirSync(store).filter((f) => f.startsWith('vectors-')).length, 1, 'the old generation is gone');
    const again = make();
    assert.equal(await again.index.load(), 'loaded');
    assert.equal(again.index.size.files, index.size.files);
    assert.equal((await again.index.update()).embedded, 0);
    for (let i = 0; i < 12; i++)
      writeFileSync(join(root, 'src', `feature${i}.ts`), `// feature ${i} handles topic number ${i}\nexport const feature${i} = ${i};\n`);
  });

  it('a model (and dimension) change is detected, and a clean rebuild follows', async () => {
    const { index, client } = make('text-embedding-3-small');
    assert.equal(await index.load(), 'model-changed');
    await index.clear();
    const stats = await index.update();
    assert.equal(stats.embedded, stats.chunks);
    assert.equal(index.size.dim, 1536);
    assert.equal((await query(index, client, 'greet a person by name hello', 'text-embedding-3-small'))[0].chunk.file, 'src/greet.ts');
  });

  it('a damaged or missing vectors file is reported, never a crash; the previous generation is cleaned up', async () => {
    const { index } = make('text-embedding-3-small');
    assert.equal(await index.load(), 'loaded');
    assert.deepEqual(readdirSync(store).filter((f) => /^vectors-\d+\.f32$/.test(f)).length, 1, 'one generation on disk');
    const vectors = readdirSync(store).find((f) => /^vectors-\d+\.f32$/.test(f))!;
    writeFileSync(join(store, vectors), Buffer.alloc(12));
    assert.equal(await make('text-embedding-3-small').index.load(), 'damaged');
  });

  it('cancelling keeps what was finished; the next run embeds only the rest', async () => {
    const { index } = make('embed-emu-256', 2, 1);
    await index.clear();
    const controller = new AbortController();
    ctx.emu.inject({ path: '/v1/embeddings', fault: { kind: 'slowFirstByte', ms: 150 }, times: 100 });
    // Cancelled while the second request waits (one at a time: the first was answered), not on a
    // clock: a busy machine can be slower than any fixed delay.
    const before = ctx.emu.requestsTo('/v1/embeddings').length;
    const watch = setInterval(() => {
      if (ctx.emu.requestsTo('/v1/embeddings').length >= before + 2) {
        clearInterval(watch);
        controller.abort();
      }
    }, 5);
    const partial = await index.update(undefined, controller.signal).finally(() => clearInterval(watch));
    ctx.emu.faults.clear();
    assert.ok(partial.embedded > 0 && partial.embedded < partial.chunks, `cancelled: ${partial.embedded} of ${partial.chunks}`);
    assert.ok(index.size.files > 0, 'the files finished before the cancel are indexed');
    const rest = await index.update();
    assert.equal(rest.embedded + partial.embedded >= rest.chunks, true);
    assert.ok(rest.embedded <= rest.chunks - partial.embedded + 2);
    assert.equal((await index.update()).embedded, 0);
  });

  it('reads an index stored in the previous format (one rewritten vectors file) without embedding again', async () => {
    const old = mkdtempSync(join(tmpdir(), 'mg-index-v1-'));
    const dim = 4;
    writeFileSync(join(old, 'vectors-3.f32'), new Uint8Array(Float32Array.from([1, 0, 0, 0, 0, 1, 0, 0]).buffer));
    writeFileSync(
      join(old, 'meta.json'),
      JSON.stringify({
        version: 1,
        model: 'm',
        dim,
        generation: 3,
        rows: ['h1', 'h2'],
        chunks: [
          { file: 'a.ts', start: 1, end: 2, hash: 'h1' },
          { file: 'b.ts', start: 1, end: 4, hash: 'h2' },
        ],
        files: { 'a.ts': { size: 10, mtimeMs: 1, hashes: ['h1'] }, 'b.ts': { size: 20, mtimeMs: 2, hashes: ['h2'] } },
      }),
    );
    let embedded = 0;
    const index = track(
      new SemanticIndex({
        folders: [{ name: 'demo', path: root }],
        excludes: [],
        storeDir: old,
        model: 'm',
        embed: (texts) => ((embedded += texts.length), Promise.resolve({ vectors: [], requests: 0 })),
      }),
    );
    assert.equal(await index.load(), 'loaded');
    assert.deepEqual(index.size, { chunks: 2, files: 2, dim });
    assert.deepEqual(
      index.search(Float32Array.from([0, 1, 0, 0]), 1).map((h) => h.chunk.file),
      ['b.ts'],
    );
    assert.equal(embedded, 0);
    assert.ok(readdirSync(old).includes('log-4.jsonl') && !readdirSync(old).includes('vectors-3.f32'), 'stored anew as generation 4');
    rmSync(old, { recursive: true, force: true });
  });

  it('a large index reads its vectors from the file: build, append, restart and compaction all still answer', async () => {
    const big = fixture();
    const fileStore = mkdtempSync(join(tmpdir(), 'mg-index-file-'));
    const { client } = clientFor(ctx.emu);
    const embed: EmbedFn = (texts, signal) => client.embeddings.createBatched('embed-emu-256', texts, { batchSize: 8, signal });
    // Every index counts as large here: its vectors stay in their file.
    const make = () =>
      track(
        new SemanticIndex({
          folders: [{ name: 'demo', path: big }],
          excludes: ['**/vendor/**'],
          storeDir: fileStore,
          model: 'embed-emu-256',
          embed,
          inMemoryBytes: 1,
        }),
      );
    const ask = async (index: SemanticIndex, text: string) =>
      index.search((await client.embeddings.create({ model: 'embed-emu-256', input: text })).data[0].embedding, 3)[0]?.chunk.file;
    const index = make();
    await index.update();
    assert.ok(index.bytesPerChunk < 256 * 4, `no float32 rows in memory (${index.bytesPerChunk} bytes a chunk)`);
    assert.equal(await ask(index, 'greet a person by name hello'), 'src/greet.ts');
    writeFileSync(join(big, 'src', 'math.ts'), 'export function divide(a: number, b: number): number {\n  return a / b;\n}\n');
    await index.update([join(big, 'src', 'math.ts')]);
    assert.equal(await ask(index, 'function divide a b number'), 'src/math.ts', 'an appended row is read from the file');
    const again = make();
    assert.equal(await again.load(), 'loaded');
    assert.equal(await ask(again, 'function divide a b number'), 'src/math.ts');
    for (let i = 0; i < 12; i++) rmSync(join(big, 'src', `feature${i}.ts`));
    await again.update();
    assert.equal(await ask(again, 'greet a person by name hello'), 'src/greet.ts', 'after a compaction written block by block');
    const third = make();
    assert.equal(await third.load(), 'loaded');
    assert.equal(await ask(third, 'function divide a b number'), 'src/math.ts');
    await third.clear();
    rmSync(big, { recursive: true, force: true });
  });

  it('indexes several workspace folders, each result naming its folder', async () => {
    const a = fixture();
    const b = tempDir('mg-index-b-');
    writeFileSync(join(b, 'billing.ts'), 'export function invoiceTotal(lines: number[]): number {\n  return lines.reduce((s, x) => s + x, 0);\n}\n');
    const { client } = clientFor(ctx.emu);
    const index = track(
      new SemanticIndex({
        folders: [
          { name: 'app', path: a },
          { name: 'billing', path: b },
        ],
        excludes: [],
        storeDir: tempDir('mg-index-multi-'),
        model: 'embed-emu-256',
        embed: (texts, signal) => client.embeddings.createBatched('embed-emu-256', texts, { batchSize: 16, signal }),
      }),
    );
    await index.update();
    const hits = index.search((await client.embeddings.create({ model: 'embed-emu-256', input: 'invoice total lines reduce' })).data[0].embedding, 3);
    assert.equal(hits[0].chunk.file, 'billing/billing.ts');
    assert.ok((await index.absolutePath('billing/billing.ts'))?.startsWith(b));
    assert.match(await index.chunkText(hits[0].chunk), /invoiceTotal/);
  });
});
