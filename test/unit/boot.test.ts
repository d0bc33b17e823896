import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/**
 * One start of the extension host: a fresh process loads the bundle (V8 keeps compiled scripts in
 * memory, so a second load in one process would not read the cache), calls its functions, and
 * writes the cache when the loader offers to.
 */
function start(bundle: string, cache: string): { cacheUsed: boolean; offeredWrite: boolean; answer: number; where: string; self: boolean; wrote?: string } {
  const code = `
    const { loadWithCodeCache } = require(${JSON.stringify(join(__dirname, '..', '..', 'src', 'boot.ts'))});
    const r = loadWithCodeCache(${JSON.stringify(bundle)}, ${JSON.stringify(cache)});
    let wrote;
    try { r.writeCache?.(); } catch (e) { wrote = String(e); }
    console.log(JSON.stringify({ cacheUsed: r.cacheUsed, offeredWrite: !!r.writeCache, answer: r.exports.answer(), where: r.exports.where(), self: r.exports.self(), wrote }));`;
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ReturnType<typeof start>;
}

/** The loader VS Code reaches first: the shell's bundle compiled with a V8 code cache in the extension's storage. */
describe('boot: the bundle compiled with a code cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-boot-'));
  const bundle = join(dir, 'main.js');
  const cache = join(dir, 'storage', 'code-cache');
  after(() => rmSync(dir, { recursive: true, force: true }));

  const source = (answer: number) =>
    `"use strict";\nconst { join } = require('node:path');\nexports.answer = () => ${answer};\nexports.where = () => join(__dirname, 'x');\nexports.self = () => module.exports === exports;\n` +
    'exports.big = () => [' +
    Array.from({ length: 2000 }, (_, i) => `${i}`).join(',') +
    '];\n';

  it('runs the bundle as require would (its own require, __dirname, module), and writes a cache the next start takes', () => {
    writeFileSync(bundle, source(42));
    const first = start(bundle, cache);
    assert.deepEqual({ ...first, wrote: undefined }, { cacheUsed: false, offeredWrite: true, answer: 42, where: join(dir, 'x'), self: true, wrote: undefined });
    assert.equal(readdirSync(cache).filter((f) => f.endsWith('.bin')).length, 1);
    const second = start(bundle, cache);
    assert.equal(second.cacheUsed, true, 'V8 took the cached code');
    assert.equal(second.offeredWrite, false, 'nothing to write again');
    assert.equal(second.answer, 42);
  });

  it('a damaged cache is refused by V8 and the bundle compiles as without one; the cache is then rewritten', () => {
    const [name] = readdirSync(cache);
    writeFileSync(join(cache, name), Buffer.from('not a code cache at all, and longer than a header would be'.repeat(4)));
    const damaged = start(bundle, cache);
    assert.equal(damaged.answer, 42);
    assert.equal(damaged.cacheUsed, false);
    assert.equal(start(bundle, cache).cacheUsed, true, 'rewritten whole');
  });

  it("a new build of the bundle is not run with the old build's cache, and the old cache goes when the new one is written", async () => {
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(bundle, source(7));
    const loaded = start(bundle, cache);
    assert.equal(loaded.answer, 7);
    assert.equal(loaded.cacheUsed, false);
    assert.equal(readdirSync(cache).length, 1, "only the current build's cache is kept");
    assert.equal(start(bundle, cache).cacheUsed, true);
  });

  it('a cache folder that cannot be written costs nothing but the cache', () => {
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'a file where the folder would go');
    const loaded = start(bundle, join(blocked, 'code-cache'));
    assert.equal(loaded.wrote, undefined, 'no error escapes');
    assert.equal(loaded.answer, 7);
    assert.equal(start(bundle, join(blocked, 'code-cache')).cacheUsed, false);
  });
});

/** What VS Code calls: activate() gives the thread back before the shell loads, so VS Code's activation figure holds the boot alone. */
describe('boot: activate() loads the shell in the next turn of the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-boot-activate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('returns before the bundle is loaded, then loads it and resolves with its activation', () => {
    // The boot as esbuild.js ships it, beside a shell that records when it runs.
    buildSync({
      entryPoints: [join(__dirname, '..', '..', 'src', 'boot.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      external: ['vscode'],
      outfile: join(dir, 'extension.js'),
      logLevel: 'silent',
    });
    writeFileSync(
      join(dir, 'main.js'),
      `globalThis.order.push('shell loaded');\nexports.activate = async (context, boot) => { globalThis.order.push('shell activated'); return { boot }; };\n`,
    );
    const code = `
      globalThis.order = [];
      const context = { globalStorageUri: { fsPath: ${JSON.stringify(join(dir, 'storage'))} }, subscriptions: [] };
      const activation = require(${JSON.stringify(join(dir, 'extension.js'))}).activate(context);
      order.push('activate returned');
      activation.then((api) => {
        order.push('activation resolved');
        for (const s of context.subscriptions) s.dispose();
        console.log(JSON.stringify({ order, boot: api.boot }));
      });`;
    const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 0, r.stderr);
    const { order, boot } = JSON.parse(r.stdout.trim()) as { order: string[]; boot: { waitMs: number; loadMs: number; cacheUsed: boolean } };
    assert.deepEqual(order, ['activate returned', 'shell loaded', 'shell activated', 'activation resolved']);
    assert.equal(boot.cacheUsed, false, 'no cache on a first start');
    assert.ok(boot.waitMs >= 0 && boot.loadMs > 0, JSON.stringify(boot));
  });
});
