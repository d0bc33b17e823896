import type { Worker } from 'node:worker_threads';
import * as l10n from '@vscode/l10n';
import { formatCount } from '../../common/locale';
import type { WorkspaceFolderPath } from '../../tools/pathGuard';

// What the semantic index (`semanticIndex.ts`) is given and gives back: its options, the embed
// function and the team store's side, an update's figures and the errors it ends with.

export interface IndexStats {
  files: number;
  chunks: number;
  /** Chunks sent to the embedding model in this run. */
  embedded: number;
  /** Of the chunks that needed a vector: taken from the team store instead of embedded. */
  fromStore: number;
  /** Vectors this run added to the team store. */
  toStore: number;
  /** Why the team store was left out of this run (it went on locally), if it was. */
  storeFailure?: string;
  /** Chunks whose stored embedding was reused. */
  reused: number;
  requests: number;
  skipped: number;
  ms: number;
  /** Of which: walking, reading and chunking the files. */
  scanMs: number;
  /** Of which: waiting for the embeddings (from the first request to the last answer). */
  embedMs: number;
  /** Of which: applying and storing the update (after the embeddings came back). */
  persistMs: number;
  /** Of which: updating the keyword index. */
  keywordsMs: number;
}

/**
 * Vectors shared with a team (`teamStore.ts`): asked for by content hash before anything is
 * embedded, given what had to be embedded. A failure leaves the store out of the rest of the run.
 */
export interface SharedVectors {
  take(hashes: readonly string[]): Promise<{ vectors: Map<string, Float32Array>; unusable: number }>;
  give(hashes: readonly string[], vectors: readonly Float32Array[]): Promise<number>;
}

export type EmbedFn = (texts: string[], signal?: AbortSignal, onDone?: (done: number) => void) => Promise<{ vectors: Float32Array[]; requests: number }>;

export interface SemanticIndexOptions {
  folders: WorkspaceFolderPath[];
  excludes: string[];
  /** Globs of files that hold secrets, besides the built-in list: never read, never embedded. */
  secretFiles?: string[];
  storeDir: string;
  model: string;
  embed: EmbedFn;
  /** A team store to take vectors from and give them to (optional: the index works the same without). */
  shared?: SharedVectors;
  /** The team store failed during a run (that run went on without it). */
  onSharedFailure?: (err: unknown) => void;
  maxFileBytes?: number;
  chunkTokens?: number;
  /** A streamed first build's keyword batch, in chunks, the first one's too (`FIRST_SPILL_CHUNKS`, then `SPILL_CHUNKS`, unless set: tests set it small). */
  keywordSpillChunks?: number;
  onProgress?: (p: { phase: 'scan' | 'embed'; done: number; total: number }) => void;
  /** Vectors up to this many bytes stay in memory; a larger index reads them from its file (default 512 MB). */
  inMemoryBytes?: number;
  /** Where new snapshots are encoded and written: a worker thread (the default) or this thread. */
  snapshots?: 'worker' | 'inline';
  /** The snapshot worker's bundle, when it is not beside this module's (benchmarks run from source). */
  snapshotWorkerFile?: string;
  /** The log is folded into a new snapshot after this many entries (default 1,000), or once a quarter of the rows are dead. */
  maxLogEntries?: number;
  /** A background fold that failed (the index goes on with the current snapshot). */
  onBackgroundError?: (err: unknown) => void;
  /** Called with each snapshot worker as it starts (tests stop one mid-fold). */
  onSnapshotWorker?: (worker: Worker) => void;
  /** Called with a streamed first build's keyword worker as it starts (tests stop it mid-build). */
  onKeywordWorker?: (worker: Worker) => void;
}

export class IndexModelChanged extends Error {}

/** Indexing stopped on a gateway error; what was embedded before it is saved (the next run resumes). */
export class IndexingStopped extends Error {
  constructor(
    override readonly cause: unknown,
    readonly embedded: number,
    readonly total: number,
  ) {
    super(l10n.t('Indexing stopped after {0} of {1} chunks: {2}', formatCount(embedded), formatCount(total), (cause as Error)?.message ?? String(cause)));
    this.name = 'IndexingStopped';
  }
}

/** An update's figures before it starts. */
export function emptyStats(): IndexStats {
  return {
    files: 0,
    chunks: 0,
    embedded: 0,
    fromStore: 0,
    toStore: 0,
    reused: 0,
    requests: 0,
    skipped: 0,
    ms: 0,
    scanMs: 0,
    embedMs: 0,
    persistMs: 0,
    keywordsMs: 0,
  };
}
