/**
 * Indexing a generated 5,000-file workspace against the emulator (in its own process): files/s,
 * chunks/s, embedding requests; then one file changes and only it is embedded again; and the
 * memory per indexed chunk.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayClient } from '../src/gateway';
import { SemanticIndex } from '../src/search/core/semanticIndex';
import { withStalls, type Stalls } from './stalls';
import { searchWorkerBundle } from './workerBundle';

export interface IndexingBenchResult {
  files: number;
  chunks: number;
  requests: number;
  ms: number;
  filesPerSecond: number;
  chunksPerSecond: number;
  reindexOne: { embedded: number; requests: number; ms: number };
  restart: { loadMs: number; embedded: number };
  bytesPerChunk: number;
  /** Where the full build's time went (ms): walking and chunking, waiting for embeddings, storing, keywords. */
  phases: { scanMs: number; embedMs: number; persistMs: number; keywordsMs: number };
  /** This process's CPU time per chunk during the build (µs): everything local, the HTTP client's included. */
  cpuUsPerChunk: number;
  /** The emulator's CPU during the build (ms; it stands for a gateway on another machine, here it shares the cores), when the system shows it. */
  emulatorCpuMs?: number;
  /** How long the event loop (the extension host's, in the extension) was busy during the build, ms: the rest was free for other work. */
  loopBusyMs: number;
  stalls: Stalls;
}

function workspace(files: number): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-index-bench-'));
  const words = 'request response stream token cache index vector retry timeout error client server parse merge chunk'.split(' ');
  for (let i = 0; i < files; i++) {
    const dir = join(root, 'src', `pkg${i % 50}`);
    mkdirSync(dir, { recursive: true });
    const fns = Array.from({ length: 6 }, (_, f) => {
      const w = words[(i * 7 + f) % words.length];
      return `/** Handles the ${w} for module ${i}, part ${f}. */\nexport function ${w}${i}_${f}(input: string): string {\n  const value = input.trim();\n  if (!value) throw new Error('empty ${w}');\n  return value + '-${w}-${i}-${f}';\n}\n`;
    });
    writeFileSync(join(dir, `m${i}.ts`), fns.join('\n'));
  }
  return root;
}

/** A process's user and system CPU so far (ms), from Linux's `/proc/<pid>/stat`; undefined elsewhere. */
export function processCpuMs(pid: number | undefined): number | undefined {
  try {
    // Fields 14 and 15 (utime, stime) in clock ticks, after the command name in parentheses.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Linux's `USER_HZ` (100 on every architecture Node runs on). */
const CLOCK_TICKS = 100;

export async function runIndexingBench(): Promise<IndexingBenchResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'test', 'emulator', 'cli.ts'), '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve(m[1]);
    });
  });
  const root = workspace(5000);
  const store = mkdtempSync(join(tmpdir(), 'mg-index-bench-store-'));
  const client = new GatewayClient({ baseUrl: url, apiKey: 'sk-emulator-demo-key-0000000000000000' });
  const make = () =>
    new SemanticIndex({
      folders: [{ name: 'bench', path: root }],
      excludes: [],
      storeDir: store,
      model: 'text-embedding-3-small',
      snapshotWorkerFile: searchWorkerBundle(),
      embed: (texts, signal, onDone) =>
        client.embeddings.createBatched('text-embedding-3-small', texts, { batchSize: 64, concurrency: 4, signal, onProgress: (d) => onDone?.(d) }),
    });
  try {
    const index = make();
    const cpu0 = process.cpuUsage();
    const emulator0 = processCpuMs(child.pid);
    const loop0 = performance.eventLoopUtilization();
    const { result: full, stalls } = await withStalls(() => index.update());
    const loop = performance.eventLoopUtilization(loop0);
    const cpu = process.cpuUsage(cpu0);
    const emulator1 = processCpuMs(child.pid);
    const changed = join(root, 'src', 'pkg7', 'm7.ts');
    writeFileSync(changed, `${'// edited\n'}export const edited = true;\n`);
    const one = await index.update([changed]);
    const t0 = performance.now();
    const restarted = make();
    await restarted.load();
    const loadMs = performance.now() - t0;
    const again = await restarted.update();
    await Promise.all([index.close(), restarted.close()]);
    return {
      files: full.files,
      chunks: full.chunks,
      requests: full.requests,
      ms: full.ms,
      filesPerSecond: (full.files / full.ms) * 1000,
      chunksPerSecond: (full.chunks / full.ms) * 1000,
      reindexOne: { embedded: one.embedded, requests: one.requests, ms: one.ms },
      restart: { loadMs, embedded: again.embedded },
      bytesPerChunk: index.bytesPerChunk,
      phases: { scanMs: full.scanMs, embedMs: full.embedMs, persistMs: full.persistMs, keywordsMs: full.keywordsMs },
      cpuUsPerChunk: (cpu.user + cpu.system) / full.chunks,
      ...(emulator0 !== undefined && emulator1 !== undefined ? { emulatorCpuMs: emulator1 - emulator0 } : {}),
      loopBusyMs: loop.active,
      stalls,
    };
  } finally {
    await client.close();
    child.kill();
    rmSync(root, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
  }
}
