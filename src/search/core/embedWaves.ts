import { embeddingText } from './chunker';
import type { IndexStats, SemanticIndexOptions, SharedVectors } from './indexTypes';
import type { StoredFile } from './store/indexStore';
import type { FreshVectors, StreamedBuild } from './snapshot/streamedBuild';

/** Chunks sent for embedding at once while the scan goes on. */
const WAVE = 1024;
/** Waves the scan may be ahead of the embeddings and the store (see `SemanticIndex.update`). */
export const WAVES_AHEAD = 4;
/** Waves whose vectors are asked of a team store before the wave being stored is done. */
const TAKE_AHEAD = 2;

type Taken = { got: Awaited<ReturnType<SharedVectors['take']>> } | { err: unknown };

/** What one update's embedding works with. */
export interface WavesOfUpdate {
  /** The vectors that arrived (from the team store or the embed function), by chunk hash. */
  fresh: FreshVectors;
  /** A first build's snapshot written in a worker while the embeddings arrive (`streamedBuild.ts`). */
  build: StreamedBuild | undefined;
  stats: IndexStats;
  signal: AbortSignal | undefined;
  onProgress: SemanticIndexOptions['onProgress'];
  /** The index's row of each hash it holds a vector for (those are reused), as it is now. */
  rowOf: () => ReadonlyMap<string, number>;
}

/**
 * An update's embeddings. Embedding starts while the scan goes on: chunks that need a vector are
 * sent in waves of WAVE, one wave after another (each at the embed function's own concurrency).
 * With a team store, each wave's vectors are asked of it first, and what had to be embedded is
 * given to it; a failure leaves it out of the rest of the run, and is reported once.
 */
export class EmbedWaves {
  /** Each hash that needs a vector, with its embedding text until its wave is sent. */
  readonly todo = new Map<string, string>();
  /**
   * Waves sent and not yet stored: the scan waits while more than WAVES_AHEAD are (each holds its
   * chunks' texts; a scan that ran ahead held a whole workspace's, a gigabyte at a million chunks).
   */
  readonly ahead: Promise<void>[] = [];
  /** The gateway's failure that stopped the embeddings (not a cancel). */
  failure: unknown;
  requests = 0;
  /** When the first wave started embedding. */
  tEmbed: number | undefined;
  private queued: string[] = [];
  private waves = Promise.resolve();
  private stopped = false;
  private sharedFailure: unknown;
  private readonly gifts: Promise<void>[] = [];
  // A wave's vectors are asked of the store up to TAKE_AHEAD waves before it is stored (the store
  // answers while earlier waves are embedded and stored; no further, or the host holds them all).
  private readonly toTake: (() => void)[] = [];
  private takesAhead = 0;

  constructor(
    private readonly o: SemanticIndexOptions,
    private readonly u: WavesOfUpdate,
  ) {}

  private readonly storeFailed = (err: unknown) => {
    if (this.sharedFailure !== undefined) return;
    this.sharedFailure = err;
    this.u.stats.storeFailure = (err as Error)?.message ?? String(err);
    this.o.onSharedFailure?.(err);
  };

  private startTakes(): void {
    while (this.takesAhead < TAKE_AHEAD && this.toTake.length > 0) {
      this.takesAhead++;
      this.toTake.shift()!();
    }
  }

  /** Queues the chunks of a file that need a vector (`texts` are its chunks'); a full wave is sent. */
  need(file: string, entry: StoredFile, texts: string[]): void {
    const todo = this.todo;
    const queued = this.queued;
    const stats = this.u.stats;
    const rowOf = this.u.rowOf();
    entry.chunks.forEach(([, , hash], i) => {
      if (rowOf.has(hash)) stats.reused++;
      else if (!todo.has(hash)) {
        todo.set(hash, embeddingText(file, texts[i]));
        queued.push(hash);
      }
    });
    if (queued.length >= WAVE) this.send();
  }

  /** Sends the last wave and waits for every wave and every gift to the team store. */
  async finish(): Promise<void> {
    this.send();
    await this.waves;
    await Promise.all(this.gifts);
  }

  private send(): void {
    if (this.queued.length === 0) return;
    const { fresh, build, stats, signal, onProgress } = this.u;
    const todo = this.todo;
    let wave = this.queued;
    this.queued = [];
    const shared = this.o.shared;
    let taking: Promise<Taken> | undefined;
    if (shared && this.sharedFailure === undefined) {
      const asked = wave;
      taking = new Promise<Taken>((resolve) =>
        this.toTake.push(() =>
          resolve(
            shared.take(asked).then(
              (got) => ({ got }),
              (err: unknown) => ({ err }),
            ),
          ),
        ),
      );
      this.startTakes();
    }
    this.waves = this.waves.then(async () => {
      if (this.stopped || signal?.aborted) return;
      this.tEmbed ??= Date.now();
      onProgress?.({ phase: 'embed', done: fresh.size, total: todo.size });
      if (shared && taking && this.sharedFailure === undefined) {
        const answer = await taking;
        this.takesAhead--;
        this.startTakes();
        if ('err' in answer) this.storeFailed(answer.err);
        else {
          const got = answer.got;
          if (got.vectors.size > 0) {
            const hits = wave.filter((h) => got.vectors.has(h));
            const vectors = hits.map((h) => got.vectors.get(h)!);
            hits.forEach((h, i) => fresh.set(h, vectors[i]));
            await build?.feedInParts(hits, vectors);
            stats.fromStore += hits.length;
            for (const h of hits) todo.set(h, '');
            wave = wave.filter((h) => !got.vectors.has(h));
            onProgress?.({ phase: 'embed', done: fresh.size, total: todo.size });
          }
        }
      }
      if (wave.length === 0 || this.stopped || signal?.aborted) return;
      const embeddedBefore = fresh.size;
      try {
        const texts = wave.map((h) => todo.get(h)!);
        // The request holds the texts now: the map keeps only that the hash is on its way (a
        // full build would otherwise hold every embedding text, 100 MB at 100,000 chunks).
        for (const h of wave) todo.set(h, '');
        const r = await this.o.embed(texts, signal, (done) => onProgress?.({ phase: 'embed', done: embeddedBefore + done, total: todo.size }));
        this.requests += r.requests;
        r.vectors.forEach((v, i) => v && fresh.set(wave[i], v));
        await build?.feedInParts(wave, r.vectors);
        if (shared && this.sharedFailure === undefined) {
          const kept = r.vectors.flatMap((v, i) => (v ? [[wave[i], v] as const] : []));
          this.gifts.push(
            shared
              .give(
                kept.map(([h]) => h),
                kept.map(([, v]) => v),
              )
              .then((n) => void (stats.toStore += n), this.storeFailed),
          );
        }
      } catch (err) {
        // Cancelled, or the gateway failed: keep the batches that finished either way.
        this.stopped = true;
        if (!signal?.aborted) this.failure = err;
        const partial = (err as { partial?: { vectors: (Float32Array | undefined)[]; requests: number } }).partial;
        partial?.vectors.forEach((v, i) => v && fresh.set(wave[i], v));
        if (partial) await build?.feedInParts(wave, partial.vectors);
        this.requests += partial?.requests ?? 0;
      }
    });
    const thisWave = this.waves;
    const ahead = this.ahead;
    ahead.push(thisWave);
    void thisWave.finally(() => ahead.splice(ahead.indexOf(thisWave), 1));
  }
}
