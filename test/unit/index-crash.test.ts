import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { SemanticIndex } from '../../src/search/core/semanticIndex';
import { GatewayEmulator } from '../emulator/server';
import { fileName, sizesAfter, sizesUpTo, versionText } from './crash/indexStates';
import { useEmulator } from './helpers';

type Mode = 'calm' | 'stormy';

/**
 * How many kills each battery makes: `npm test` a short run (16 calm, 24 stormy: 25 to 35 s) that
 * still fails against the code before each crash fix it found; `npm run bench -- crash` the full
 * one (`MODEL_GATEWAY_CRASH_KILLS=100`, about 4 minutes).
 */
const KILLS = Number(process.env.MODEL_GATEWAY_CRASH_KILLS) || 0;
const CALM_KILLS = KILLS || 16;
const STORMY_KILLS = KILLS || 24;

/**
 * SIGKILL at random moments of index updates (a crash, a power cut): after each, every file is in
 * the index at a version it had (calm: the last acknowledged step's or the next; stormy, with the
 * gateway refusing requests and updates cancelled: any version up to the next step), never missing.
 * Half the kills land on a timer, half on the store folder's N-th change (inside an append).
 */
describe('semantic index: killed mid-update, it loads a state it was in or was going to', function () {
  this.timeout(600_000);
  const ctx = useEmulator();
  const base = mkdtempSync(join(tmpdir(), 'mg-crash-'));
  after(() => rmSync(base, { recursive: true, force: true }));
  // The killed process and its snapshot worker as plain JavaScript, bundled once from the source
  // (as the extension ships them): each of the battery's processes then starts without compiling
  // TypeScript, a second of CPU each.
  const bundles = join(base, 'bundles');
  before(() => {
    buildSync({
      entryPoints: {
        indexWorker: join(__dirname, 'crash', 'indexWorker.ts'),
        searchWorker: join(__dirname, '..', '..', 'src', 'search', 'core', 'snapshot', 'snapshotWorker.ts'),
      },
      outdir: bundles,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'warning',
    });
  });

  function battery(mode: Mode, files: number, kills: number) {
    return async () => {
      const root = mkdtempSync(join(base, `${mode}-`));
      const workspace = join(root, 'ws');
      const store = join(root, 'store');
      const ack = join(root, 'acks');
      if (mode === 'stormy') ctx.emu.inject({ path: '/v1/embeddings', chance: 0.15, fault: { kind: 'status', status: 400, message: 'Injected refusal.' } });
      const lastAck = () => {
        const acks = existsSync(ack) ? readFileSync(ack, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
        return acks.length ? acks[acks.length - 1] : -1;
      };
      const runUntilKilled = (onStoreChange: number, waitMs: number) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [join(bundles, 'indexWorker.js'), workspace, store, ack, ctx.emu.url, GatewayEmulator.demoKey, String(files), mode],
            { stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let err = '';
          let watcher: ReturnType<typeof watch> | undefined;
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          child.stdout.on('data', (d: Buffer) => {
            if (!d.toString().includes('ready')) return;
            if (onStoreChange === 0) setTimeout(() => child.kill('SIGKILL'), waitMs);
            else {
              let seen = 0;
              watcher = watch(store, () => ++seen === onStoreChange && child.kill('SIGKILL'));
            }
          });
          child.on('exit', (code, signal) => {
            watcher?.close();
            if (signal === 'SIGKILL') resolve();
            else reject(new Error(`the worker ended by itself (${code}): ${err}`));
          });
        });
      try {
        mkdirSync(join(workspace, 'src'), { recursive: true });
        for (let i = 0; i < files; i++) writeFileSync(join(workspace, fileName(i)), versionText(i, 0));
        const bad: string[] = [];
        let steps = 0;
        let firstBuild = 0;
        for (let kill = 0; kill < kills; kill++) {
          const before = lastAck();
          const onChange = kill % 2 === 1 ? 1 + Math.floor(Math.random() * 40) : 0;
          await runUntilKilled(onChange, Math.floor(Math.random() * 300));
          const acked = lastAck();
          steps += Math.max(0, acked - before);
          const index = new SemanticIndex({
            folders: [{ name: 'ws', path: workspace }],
            excludes: [],
            storeDir: store,
            model: 'embed-emu-256',
            embed: () => Promise.reject(new Error('no embedding while checking')),
          });
          const loaded = await index.load();
          await index.close();
          const how = onChange ? `on the store's change ${onChange}` : 'on a timer';
          if (acked < 0) {
            firstBuild++;
            if (loaded === 'loaded' && index.size.files !== files)
              bad.push(`kill ${kill} (${how}): a first build loaded with ${index.size.files} of ${files} files`);
            continue;
          }
          if (loaded !== 'loaded') {
            bad.push(`kill ${kill} (${how}): after step ${acked} the index is ${loaded}`);
            continue;
          }
          const held = index.indexedFiles();
          const wrong: string[] = [];
          for (let i = 0; i < files; i++) {
            const size = held.get(fileName(i));
            const ok =
              mode === 'calm'
                ? size === sizesAfter(acked, files).get(fileName(i)) || size === sizesAfter(acked + 1, files).get(fileName(i))
                : size !== undefined && sizesUpTo(i, acked + 1, files).has(size);
            if (!ok) wrong.push(`${fileName(i)} ${size === undefined ? 'missing' : `at ${size} bytes`}`);
          }
          if (held.size !== files || wrong.length > 0)
            bad.push(`kill ${kill} (${how}): after step ${acked} the index holds ${held.size} of ${files} files; ${wrong.join(', ')}`);
        }
        console.log(`      ${mode}, ${files} files: ${kills} kills (${firstBuild} during the first build), ${steps} acknowledged steps`);
        assert.deepEqual(bad, []);
        assert.ok(steps > kills, 'the kills landed while updates were running');
      } finally {
        ctx.emu.faults.clear();
      }
    };
  }

  it(`calm: 60 files, ${CALM_KILLS} kills, each load at the acknowledged step or the next`, battery('calm', 60, CALM_KILLS));
  it(
    `stormy (the gateway refuses 15% of requests, a quarter of the updates cancelled): 12 files, ${STORMY_KILLS} kills, every file at a version it had`,
    battery('stormy', 12, STORMY_KILLS),
  );
});
