/**
 * A million chunks' first build as the extension runs it (`SemanticIndex.update`: the scan, the
 * embeddings in waves, the snapshot and the keyword index written by its worker thread while they
 * arrive), in a fresh process whose peak resident memory (`VmHWM`: the process with all its
 * threads) is what the build costs. Embeddings come from a local stand-in (random unit vectors in
 * batches of 128, as a gateway's answers arrive): this measures the index, not the gateway. The
 * workspace is generated first, in this process: files of eight code-like functions
 * (`keywordCorpus.ts`: Zipf-distributed identifiers, as real code's terms are), until the chunker
 * makes `n` chunks.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkText } from '../src/search/core/chunker';
import { keywordCorpus } from './keywordCorpus';

export const FIRST_BUILD_CHUNK_TOKENS = 300;

export interface FirstBuildResult {
  chunks: number;
  files: number;
  dim: number;
  /** Keyword batch size (chunks), or 0: the keyword index held whole. */
  spillChunks: number;
  /** The first batch's size (`FIRST_SPILL_CHUNKS` unless the run set one size for all). */
  firstSpillChunks: number;
  buildSeconds: number;
  chunksPerSecond: number;
  /** The build process's peak resident memory, every thread together (VmHWM), MB. */
  peakMB: number;
  /** Before the build began (the bare process with the index's code loaded), MB. */
  startMB: number;
  /** The most the host thread held meanwhile (heap and buffers), MB. */
  hostPeakMB: number;
  keywordsStored: boolean;
  workspaceSeconds: number;
}

function workspace(root: string, n: number): { files: number; chunks: number } {
  const corpus = keywordCorpus(33);
  let chunks = 0;
  let files = 0;
  while (chunks < n) {
    const dir = join(root, `pkg${Math.floor(files / 1000)}`);
    if (files % 1000 === 0) mkdirSync(dir, { recursive: true });
    const text = `${Array.from({ length: 8 }, () => corpus.next()).join('\n\n')}\n`;
    const name = `module${files}.ts`;
    chunks += chunkText(`${dir.slice(root.length + 1)}/${name}`, text, { maxTokens: FIRST_BUILD_CHUNK_TOKENS }).length;
    writeFileSync(join(dir, name), text);
    files++;
  }
  return { files, chunks };
}

export function runFirstBuildBench(n = 1_000_000, dim = 1024, spillChunks?: number): FirstBuildResult {
  const base = mkdtempSync(join(tmpdir(), 'mg-first-build-'));
  try {
    const root = join(base, 'ws');
    mkdirSync(root);
    const t0 = performance.now();
    const made = workspace(root, n);
    const workspaceSeconds = (performance.now() - t0) / 1000;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(__dirname, 'millionFirstBuildRun.ts'), root, join(base, 'store'), String(dim), String(spillChunks ?? '')],
      { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', process.env.MG_BENCH_TIMELINE ? 'inherit' : 'pipe'] },
    );
    if (child.status !== 0) throw new Error(`the first build failed: ${child.stderr}`);
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Omit<FirstBuildResult, 'files' | 'workspaceSeconds'>;
    return { ...out, files: made.files, workspaceSeconds };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
