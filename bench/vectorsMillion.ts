/**
 * A monorepo's index on one machine: 1,000,000 rows x 1,024 of the hard shape, built block by
 * block straight to files (float32 rows, then codes and scales), then loaded and queried in a
 * fresh process whose resident memory is what the index costs: codes in memory, the float32 rows
 * read from the file for the last pass. Recall against exact search over all rows. Beside them the
 * keyword index of a million code-like chunks, stored as the extension stores it (postings on
 * disk), and hybrid queries over both.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MillionBenchResult {
  n: number;
  dim: number;
  shape: string;
  buildSeconds: number;
  fileMB: { vectors: number; codes: number };
  loadMs: number;
  residentMB: number;
  /** Before the keyword index is opened. */
  vectorsResidentMB: number;
  residentBeforeMB: number;
  keywords: { indexSeconds: number; storeSeconds: number; terms: number; postings: number; fileMB: number };
  hybrid: {
    queries: number;
    keywordLoadMs: number;
    terms: number;
    medianMs: number;
    p95Ms: number;
    keywordMedianMs: number;
    keywordP95Ms: number;
    recall: number;
    keywordRecall: number;
  };
  runs: { candidates: number; widen: number; medianMs: number; p95Ms: number; recall: number }[];
}

export function runMillionBench(n = 1_000_000, dim = 1024, shape: 'hard' | 'hard-rotated' = 'hard', queries = 30): MillionBenchResult {
  const dir = mkdtempSync(join(tmpdir(), 'mg-million-'));
  // Build and queries each in a fresh process: the query side's memory and time are the index's
  // alone (a builder that just churned through gigabytes would still be collecting garbage).
  const run = (script: string, ...args: string[]) => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, script), dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (child.status !== 0) throw new Error(`${script} failed: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as unknown;
  };
  try {
    const { buildSeconds } = run('vectorsMillionBuild.ts', String(n), String(dim), shape, String(queries)) as { buildSeconds: number };
    const keywords = run('keywordsMillionBuild.ts', String(n), String(queries)) as Omit<MillionBenchResult['keywords'], 'fileMB'>;
    const out = run('vectorsMillionQuery.ts') as Pick<
      MillionBenchResult,
      'loadMs' | 'residentMB' | 'vectorsResidentMB' | 'residentBeforeMB' | 'runs' | 'hybrid'
    >;
    const size = (f: string) => statSync(join(dir, f)).size / 1e6;
    return {
      n,
      dim,
      shape,
      buildSeconds,
      fileMB: { vectors: size('vectors.f32'), codes: size('codes.bin') + size('alphas.f32') },
      keywords: { ...keywords, fileMB: size('keywords-1.bin') },
      ...out,
    };
  } finally {
    if (!process.env.MG_KEEP_MILLION) rmSync(dir, { recursive: true, force: true });
    else console.error(`kept ${dir}`);
  }
}
