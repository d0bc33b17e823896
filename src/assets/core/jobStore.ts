import * as l10n from '@vscode/l10n';
import type * as z from 'zod/mini';

/** Where jobs are kept across sessions: VS Code's workspace state (a `Memento`) has this shape. */
export interface JobMemento {
  get<T>(key: string, defaultValue: T): T;
  update(key: string, value: unknown): PromiseLike<void>;
}

/** What every kind of job holds. */
export interface StoredJob {
  id: string;
  createdAt: number;
  /** The gateway's status, then ours (downloaded…). */
  status: string;
  progress?: number;
  error?: string;
}

/** What differs between kinds of job (videos; music and Midjourney): the gateway's words and the host's ways of showing them. */
export interface JobKind<J extends StoredJob> {
  /** The state key the jobs are kept under. */
  key: string;
  /** A stored entry that does not parse is dropped, never fatal. */
  schema: z.ZodMiniType<J>;
  /** Names the job in the log (`task`, `video`). */
  what: string;
  /** Still to be polled or downloaded. */
  isActive(job: J): boolean;
  /** The gateway has the result: it is downloaded next. */
  isReady(job: J): boolean;
  /** The gateway says the task failed: polling ends. */
  isFailed(job: J): boolean;
  /** An error that means the gateway no longer knows the task. */
  isUnknownTask(err: unknown): boolean;
  /** The status of a job whose task the gateway no longer knows. */
  failedStatus: string;
  /** Asks the gateway; the job as it is now (the store saves it). */
  refresh(job: J, signal: AbortSignal): Promise<J>;
  /** The job's progress in words, after each status check. */
  describe(job: J): string;
  /** Saves a ready job's files into `dir`; the finished job (the store saves it). */
  download(job: J, dir: string, signal: AbortSignal): Promise<J>;
  /** The folder to save into (undefined when no folder is open; an error when it is refused). */
  assetsFolder(): Promise<string | undefined>;
  /** Why nothing is saved when no folder is open. */
  noFolder: string;
  isConfigured(): boolean;
  pollMs(): number;
  warn(message: string): void;
  /** The list changed. */
  changed(): void;
  /** Shows a job being watched (a progress notification) for as long as `poll` runs. */
  show(job: J, poll: (report: (message: string) => void) => Promise<void>): void;
  /** The task failed at the gateway (the job, with its error, is saved). */
  failed(job: J): void;
  /** The files are saved (the finished job is saved). */
  downloaded(job: J): void;
  /** The download failed (the job keeps the error and can be retried). */
  downloadFailed(err: unknown): void;
}

/**
 * The jobs of one kind: kept in the workspace state, polled until they end (also after a window
 * reload), and their files downloaded into the assets folder. One store for videos and for music
 * and Midjourney; what differs is the `JobKind`.
 */
export class JobStore<J extends StoredJob> {
  private readonly pollers = new Map<string, AbortController>();
  private disposed = false;

  constructor(
    private readonly state: JobMemento,
    private readonly kind: JobKind<J>,
  ) {}

  /** Every job, newest first; a stored entry that does not parse is dropped, never fatal. */
  list(): J[] {
    const raw = this.state.get<unknown[]>(this.kind.key, []);
    return (Array.isArray(raw) ? raw : [])
      .flatMap((j) => {
        const parsed = this.kind.schema.safeParse(j);
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  get(id: string): J | undefined {
    return this.list().find((j) => j.id === id);
  }

  async save(job: J): Promise<void> {
    await this.state.update(this.kind.key, [job, ...this.list().filter((j) => j.id !== job.id)]);
    this.kind.changed();
  }

  /** At activation: polls the unfinished jobs of the last session. */
  resumeAll(): void {
    for (const job of this.list()) if (this.kind.isActive(job)) this.watch(job);
  }

  async add(job: J): Promise<void> {
    await this.save(job);
    this.watch(job);
  }

  /** Tries a failed download again. */
  retry(id: string): void {
    const job = this.get(id);
    if (!job || !this.kind.isReady(job)) return;
    const again = { ...job, error: undefined };
    void this.save(again).then(() => this.watch(again));
  }

  /** Stops watching a job (its task goes on at the gateway). */
  stop(id: string): void {
    this.pollers.get(id)?.abort();
  }

  /** Stops watching a job and forgets it. */
  async forget(id: string): Promise<void> {
    this.stop(id);
    await this.state.update(
      this.kind.key,
      this.list().filter((j) => j.id !== id),
    );
    this.kind.changed();
  }

  /** Stops polling; the tasks go on at the gateway and are picked up at the next activation. */
  dispose(): void {
    this.disposed = true;
    for (const stop of this.pollers.values()) stop.abort();
  }

  private watch(job: J): void {
    if (this.pollers.has(job.id) || this.disposed) return;
    const stop = new AbortController();
    this.pollers.set(job.id, stop);
    this.kind.show(job, (report) => this.poll(job.id, stop.signal, report));
  }

  private async poll(id: string, signal: AbortSignal, report: (message: string) => void): Promise<void> {
    const kind = this.kind;
    try {
      while (!signal.aborted) {
        let job = this.get(id);
        if (!job || !kind.isActive(job)) break;
        // While no gateway is configured, the job just waits.
        if (kind.isConfigured()) {
          if (!kind.isReady(job)) {
            try {
              job = await kind.refresh(job, signal);
              await this.save(job);
              report(kind.describe(job));
              if (kind.isFailed(job)) {
                kind.failed(job);
                break;
              }
            } catch (err) {
              if (signal.aborted) break;
              if (kind.isUnknownTask(err)) {
                await this.save({ ...job, status: kind.failedStatus, error: l10n.t('The gateway no longer knows this task (deleted or expired).') });
                break;
              }
              // Offline, or a 503 after retries: the job stays and is asked about again next time.
              kind.warn(`${kind.what} ${id}: status check failed, will retry: ${err instanceof Error ? err.message : String(err)}`);
            }
          }
          if (kind.isReady(job)) {
            report(l10n.t('downloading'));
            await this.download(job, signal);
            break;
          }
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, kind.pollMs());
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
      }
    } finally {
      this.pollers.delete(id);
    }
  }

  private async download(job: J, signal: AbortSignal): Promise<void> {
    let dir: string | undefined;
    try {
      dir = await this.kind.assetsFolder();
    } catch (err) {
      await this.save({ ...job, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (!dir) {
      await this.save({ ...job, error: this.kind.noFolder });
      return;
    }
    try {
      const done = await this.kind.download(job, dir, signal);
      await this.save(done);
      this.kind.downloaded(done);
    } catch (err) {
      if (signal.aborted) return;
      await this.save({ ...job, error: l10n.t('Download failed: {0}', err instanceof Error ? err.message : String(err)) });
      this.kind.downloadFailed(err);
    }
  }
}
