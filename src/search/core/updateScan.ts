import { readFile, stat } from 'node:fs/promises';
import type { PathGuard } from '../../tools/pathGuard';
import { walkWorkspace } from '../../tools/workspaceTools';
import { WAVES_AHEAD, type EmbedWaves } from './embedWaves';
import { chunksFrom, indexable, readLimit, SCAN_CONCURRENCY, type IndexedChunk } from './fileChunks';
import { READ_BATCH, readHere, type FileReader } from './fileReader';
import type { IndexStats, SemanticIndexOptions } from './indexTypes';
import { fileLine } from './snapshot/snapshotJob';
import type { StreamedBuild } from './snapshot/streamedBuild';
import type { StoredFile } from './store/indexStore';

/** Files an update replaces (null: removed), with their chunks' texts (none once a streamed build's worker has them). */
export type ChangedFiles = Map<string, { entry: StoredFile; texts?: string[] } | null>;

/** What an update's scan reads of the index. */
export interface ScannedIndex {
  guard: PathGuard;
  /** The files indexed now, each with its size, time and chunks. */
  files: () => ReadonlyMap<string, StoredFile>;
  /** The display path of an absolute one (undefined outside the workspace). */
  displayOf: (abs: string) => string | undefined;
  o: Pick<SemanticIndexOptions, 'maxFileBytes' | 'chunkTokens'>;
}

/** One update's scan: what it looks at, and where what it finds goes. */
export interface ScanOfUpdate {
  /** Only these files (absolute paths from a file watcher), else the whole workspace. */
  paths: string[] | undefined;
  signal: AbortSignal | undefined;
  onProgress: SemanticIndexOptions['onProgress'];
  /** A full scan reads on a thread of its own (`fileReader.ts`), many files in flight. */
  reader: FileReader | undefined;
  build: StreamedBuild | undefined;
  waves: EmbedWaves;
  changed: ChangedFiles;
  stats: IndexStats;
}

type Outcome = { kind: 'gone' | 'same' | 'skipped' } | { kind: 'chunks'; entry: StoredFile; texts: string[] };

/**
 * Walks the workspace (or reads only `paths`): unchanged files are not read; each changed file's
 * chunks are recorded in `changed`, those that need a vector queued on the waves.
 */
export async function scanChanges(index: ScannedIndex, u: ScanOfUpdate): Promise<void> {
  const { paths, signal, onProgress, reader, build, waves, changed, stats } = u;
  // Reading and chunking a file: no shared state touched, so several run at once.
  const withChunks = (s: { size: number; mtimeMs: number }, chunks: (IndexedChunk & { text: string })[]): Outcome => ({
    kind: 'chunks',
    entry: { size: s.size, mtimeMs: s.mtimeMs, chunks: chunks.map((c) => [c.start, c.end, c.hash]) },
    texts: chunks.map((c) => c.text),
  });
  const inFlightMax = reader ? READ_BATCH : SCAN_CONCURRENCY;
  // A file not indexed yet: opened, its size read from the open file and its bytes read, with no
  // separate stat (a full build's scan was a fifth stat calls).
  const inspectNew = async (f: { rel: string; abs: string; display: string }): Promise<Outcome> => {
    const limit = readLimit(f.rel, index.o.maxFileBytes);
    const got = reader ? await reader.read(f.abs, limit) : await readHere(f.abs, limit);
    if (got === 'gone' || got === 'skipped') return { kind: got };
    const chunks = chunksFrom(f.display, got.bytes, index.o.chunkTokens);
    return chunks ? withChunks(got, chunks) : { kind: 'skipped' };
  };
  const inspect = async (f: { rel: string; abs: string; display: string }): Promise<Outcome> => {
    if (!index.files().has(f.display)) return inspectNew(f);
    const s = await stat(f.abs).catch(() => undefined);
    const prev = index.files().get(f.display);
    if (!s || !s.isFile()) return { kind: 'gone' };
    if (prev && prev.size === s.size && prev.mtimeMs === s.mtimeMs) return { kind: 'same' };
    const chunks = await chunksOf(index, f, s.size);
    return chunks ? withChunks(s, chunks) : { kind: 'skipped' };
  };
  // Outcomes are recorded in the walk's order, whatever order they finish in: the rows' order is stable.
  const record = (display: string, o: Outcome) => {
    const prev = index.files().get(display);
    if (o.kind === 'chunks') {
      waves.need(display, o.entry, o.texts);
      // A streamed build's worker indexes the keywords: the host keeps no texts (a gigabyte at a million chunks).
      changed.set(display, build?.texts(display, o.texts, fileLine(display, o.entry)) ? { entry: o.entry } : { entry: o.entry, texts: o.texts });
      stats.files++;
      stats.chunks += o.entry.chunks.length;
    } else if (o.kind === 'same') {
      stats.files++;
      stats.chunks += prev!.chunks.length;
      stats.reused += prev!.chunks.length;
    } else {
      if (o.kind === 'skipped') stats.skipped++;
      if (prev) changed.set(display, null);
    }
  };
  const inFlight: { display: string; outcome: Promise<Outcome> }[] = [];
  const drain = async (keep: number) => {
    while (inFlight.length > keep) {
      const next = inFlight.shift()!;
      record(next.display, await next.outcome);
      // The keyword thread's queue bounded: a newcomer's store answers faster than it tokenises.
      await build?.room();
    }
  };
  if (paths) {
    for (const abs of paths) {
      const display = index.displayOf(abs);
      if (!display) continue;
      const resolved = await index.guard.resolve(abs).catch(() => undefined);
      if (resolved) record(display, await inspect({ rel: resolved.rel, abs: resolved.abs, display }));
      else if (index.files().has(display)) changed.set(display, null);
    }
  } else {
    const seen = new Set<string>();
    let scanned = 0;
    for await (const f of walkWorkspace(index.guard)) {
      if (signal?.aborted) break;
      const display = index.guard.display(f.folder, f.rel);
      seen.add(display);
      inFlight.push({ display, outcome: inspect({ rel: f.rel, abs: f.abs, display }) });
      await drain(inFlightMax - 1);
      while (waves.ahead.length > WAVES_AHEAD) await waves.ahead[0];
      if (++scanned % 200 === 0) onProgress?.({ phase: 'scan', done: scanned, total: 0 });
    }
    await drain(0);
    await reader?.close();
    if (!signal?.aborted) for (const file of index.files().keys()) if (!seen.has(file)) changed.set(file, null);
  }
}

/** Reads, filters and chunks one file; undefined when it is skipped. */
async function chunksOf(
  index: ScannedIndex,
  f: { rel: string; abs: string; display: string },
  size: number,
): Promise<(IndexedChunk & { text: string })[] | undefined> {
  if (!indexable(f.rel, size, index.o.maxFileBytes)) return undefined;
  return chunksFrom(f.display, await readFile(f.abs), index.o.chunkTokens);
}
