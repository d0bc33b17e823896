import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SemanticIndex } from '../../src/search/core/semanticIndex';
import { GatewayEmulator } from '../emulator/server';
import { FILES, fileName, sizesAfter, versionText } from './crash/indexStates';
import { useEmulator } from './helpers';

const KILLS = 20;

/**
 * SIGKILL at random moments of index updates (a crash, a power cut): after each, the index that
 * loads is the last acknowledged state or the one being written, never a mixture.
 */
describe('semantic index: killed mid-update, it loads the acknowledged state or the next', function () {
  this.timeout(180_000);
  const ctx = useEmulator();
  const base = mkdtempSync(join(tmpdir(), 'mg-crash-'));
  const workspace = join(base, 'ws');
  const store = join(base, 'store');
  const ack = join(base, 'acks');
  after(() => rmSync(base, { recursive: true, force: true }));

  function runUntilKilled(waitMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'crash', 'indexWorker.ts'), workspace, store, ack, ctx.emu.url, GatewayEmulator.demoKey], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) setTimeout(() => child.kill('SIGKILL'), waitMs);
      });
      child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`the worker ended by itself (${code}): ${err}`))));
    });
  }

  const lastAck = () => {
    const acks = existsSync(ack) ? readFileSync(ack, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
    return acks.length ? acks[acks.length - 1] : -1;
  };

  it(`${KILLS} kills: every reload is whole (${FILES} files, each at the acknowledged step or the next)`, async () => {
    mkdirSync(join(workspace, 'src'), { recursive: true });
    for (let i = 0; i < FILES; i++) writeFileSync(join(workspace, fileName(i)), versionText(i, 0));
    const verdicts: string[] = [];
    const bad: string[] = [];
    let steps = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const before = lastAck();
      await runUntilKilled(Math.floor(Math.random() * 300));
      const acked = lastAck();
      steps += acked - before;
      const index = new SemanticIndex({ folders: [{ name: 'ws', path: workspace }], excludes: [], storeDir: store, model: 'embed-emu-256', embed: () => Promise.reject(new Error('no embedding while checking')) });
      const loaded = await index.load();
      await index.close();
      if (acked < 0) {
        verdicts.push(`kill ${kill}: during the first build: ${loaded}`);
        if (loaded === 'loaded') assert.equal(index.size.files, FILES, 'a first build is whole or absent');
        continue;
      }
      assert.equal(loaded, 'loaded', `kill ${kill}: the index loads`);
      const files = index.indexedFiles();
      const matches = (k: number) => [...sizesAfter(k)].every(([f, size]) => files.get(f) === size) && files.size === FILES;
      const state = matches(acked) ? 'acknowledged' : matches(acked + 1) ? 'next' : undefined;
      verdicts.push(`kill ${kill}: acked step ${acked}, loaded ${files.size} files: ${state ?? 'IN BETWEEN'}`);
      if (!state) bad.push(`kill ${kill}: after step ${acked} the index has ${files.size} files and matches neither step ${acked} nor ${acked + 1}`);
    }
    console.log(`      ${verdicts.join('\n      ')}\n      ${steps} acknowledged steps in all`);
    assert.deepEqual(bad, []);
    assert.ok(steps > KILLS, 'the kills landed while updates were running');
  });
});
