import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { assetSettings } from '../../shell/config';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type GatewayFeature } from '../../shell/services';
import { assetsFolder, openFile, slug, uniquePath } from './shared';
import { formatDateTime } from '../../common/locale';
import { counted } from '../../shell/listeners';

const STATE_KEY = 'modelGateway.videoJobs';

const JobSchema = z.object({
  id: z.string(),
  model: z.string(),
  prompt: z.string(),
  seconds: z.optional(z.string()),
  size: z.optional(z.string()),
  createdAt: z.number(),
  /** The gateway's status, then ours: downloaded, cancelled. */
  status: z.string(),
  progress: z.optional(z.number()),
  error: z.optional(z.string()),
  file: z.optional(z.string()),
});
export type VideoJob = z.infer<typeof JobSchema>;

const ACTIVE = new Set(['queued', 'in_progress', 'submitted', 'completed']);
const isActive = (j: VideoJob) => ACTIVE.has(j.status) && !j.error;

/** A job's status in words: the gateway's (queued, in_progress, completed, failed) and ours (downloaded, cancelled). */
function videoStatusWords(status: string): string {
  switch (status) {
    case 'queued':
      return vscode.l10n.t('queued');
    case 'in_progress':
      return vscode.l10n.t('in progress');
    case 'completed':
      return vscode.l10n.t('completed');
    case 'failed':
      return vscode.l10n.t('failed');
    case 'downloaded':
      return vscode.l10n.t('downloaded');
    case 'cancelled':
      return vscode.l10n.t('cancelled');
    default:
      return status.replace('_', ' ');
  }
}

function elapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** Polling interval: the spec asks for 15 s; a setting allows less against the emulator. */
function pollMs(): number {
  return assetSettings().videoPollSeconds * 1000;
}

/**
 * Video jobs: created tasks are kept in the workspace state, polled until done (also after a
 * window reload), and completed videos are downloaded into the assets folder. The tree lists them.
 */
export class VideoJobs implements vscode.TreeDataProvider<VideoJob>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<VideoJob | undefined>();
  readonly onDidChangeTreeData = counted('videoJobs.onDidChangeTreeData', this.changed.event);
  private readonly pollers = new Map<string, AbortController>();
  private disposed = false;

  constructor(
    private readonly services: GatewayFeature,
    private readonly state: vscode.Memento,
  ) {}

  /** Every job, newest first. A stored entry that does not parse is dropped, never fatal. */
  list(): VideoJob[] {
    const raw = this.state.get<unknown[]>(STATE_KEY, []);
    const jobs = (Array.isArray(raw) ? raw : []).flatMap((j) => {
      const parsed = JobSchema.safeParse(j);
      return parsed.success ? [parsed.data] : [];
    });
    return jobs.sort((a, b) => b.createdAt - a.createdAt);
  }

  get(id: string): VideoJob | undefined {
    return this.list().find((j) => j.id === id);
  }

  private async save(job: VideoJob): Promise<void> {
    const others = this.list().filter((j) => j.id !== job.id);
    await this.state.update(STATE_KEY, [job, ...others]);
    this.changed.fire(undefined);
  }

  /** Starts polling every unfinished job (at activation: the jobs of the last session). */
  resumeAll(): void {
    for (const job of this.list()) if (isActive(job)) this.watch(job);
  }

  async add(job: VideoJob): Promise<void> {
    await this.save(job);
    this.watch(job);
  }

  /** Polls one job with a progress notification; cancelling the notification cancels the job. */
  private watch(job: VideoJob): void {
    if (this.pollers.has(job.id) || this.disposed) return;
    const stop = new AbortController();
    this.pollers.set(job.id, stop);
    void vscode.window
      .withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Video “{0}”', job.prompt.slice(0, 40)), cancellable: true }, async (progress, token) => {
        token.onCancellationRequested(() => void this.cancel(job.id));
        await this.poll(job.id, stop.signal, (message) => progress.report({ message }));
      })
      .then(undefined, (err) => this.services.log.error('video job', err));
  }

  private async poll(id: string, signal: AbortSignal, report: (message: string) => void): Promise<void> {
    const gw = loadGateway();
    try {
      while (!signal.aborted) {
        let job = this.get(id);
        if (!job || !isActive(job)) break;
        if (job.status !== 'completed' && this.services.isConfigured()) {
          try {
            const task = await this.services.client().videos.retrieve(id, { signal });
            const error = task.status === 'failed' ? new gw.VideoFailedError(task).message : undefined;
            job = { ...job, status: task.status, progress: task.progress ?? job.progress, error };
            await this.save(job);
            report(`${videoStatusWords(task.status)}${task.progress !== undefined ? ` ${task.progress}%` : ''} · ${elapsed(Date.now() - job.createdAt)}`);
            if (task.status === 'failed') {
              void tell(this.services, 'error', `${error} (“${job.prompt.slice(0, 60)}”)`);
              break;
            }
          } catch (err) {
            if (signal.aborted) break;
            if (err instanceof gw.NotFoundError) {
              await this.save({ ...job, status: 'failed', error: vscode.l10n.t('The gateway no longer knows this task (deleted or expired).') });
              break;
            }
            // A transient failure (offline, 503 after retries): keep the job and try again next time.
            // (While no gateway is configured, the job just waits.)
            this.services.log.warn(`video ${id}: status check failed, will retry: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        if (job.status === 'completed' && this.services.isConfigured()) {
          report('downloading');
          await this.download(job, signal);
          break;
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pollMs());
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
      }
    } finally {
      this.pollers.delete(id);
    }
  }

  private async download(job: VideoJob, signal: AbortSignal): Promise<void> {
    let dir: string | undefined;
    try {
      dir = await assetsFolder();
    } catch (err) {
      await this.save({ ...job, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (!dir) {
      await this.save({ ...job, error: vscode.l10n.t('No workspace folder is open to download the video into.') });
      return;
    }
    try {
      const file = uniquePath(dir, `video-${slug(job.prompt, 32)}`, '.mp4');
      await (await this.services.client().videos.content(job.id, { signal })).toFile(file);
      await this.save({ ...job, status: 'downloaded', progress: 100, file, error: undefined });
      this.services.notifySpend();
      void tell(this.services, 'info', vscode.l10n.t('Video ready: {0}', vscode.workspace.asRelativePath(file)), vscode.l10n.t('Open')).then((c) => (c ? openFile(file) : undefined));
    } catch (err) {
      if (signal.aborted) return;
      await this.save({ ...job, error: vscode.l10n.t('Download failed: {0}', err instanceof Error ? err.message : String(err)) });
      showGatewayError(this.services, vscode.l10n.t('Could not download the video'), err);
    }
  }

  /** Cancels a job: stops polling and deletes the task on the gateway. */
  async cancel(id: string): Promise<void> {
    const job = this.get(id);
    if (!job) return;
    this.pollers.get(id)?.abort();
    try {
      await this.services.client().videos.delete(id);
    } catch (err) {
      if (!(err instanceof loadGateway().NotFoundError)) showGatewayError(this.services, vscode.l10n.t('Could not delete the video task'), err);
    }
    await this.save({ ...job, status: 'cancelled', error: undefined });
  }

  /** Retries the download of a completed job whose download failed. */
  retry(id: string): void {
    const job = this.get(id);
    if (!job || job.status !== 'completed') return;
    void this.save({ ...job, error: undefined }).then(() => this.watch({ ...job, error: undefined }));
  }

  async remove(id: string): Promise<void> {
    const job = this.get(id);
    if (job && isActive(job)) await this.cancel(id);
    await this.state.update(
      STATE_KEY,
      this.list().filter((j) => j.id !== id),
    );
    this.changed.fire(undefined);
  }

  getTreeItem(job: VideoJob): vscode.TreeItem {
    const item = new vscode.TreeItem(job.prompt.length > 48 ? `${job.prompt.slice(0, 47)}…` : job.prompt);
    item.id = job.id;
    const when = formatDateTime(job.createdAt);
    const shape = [job.model, job.seconds && `${job.seconds}s`, job.size].filter(Boolean).join(' · ');
    const state = job.error
      ? job.status === 'completed'
        ? vscode.l10n.t('download failed')
        : vscode.l10n.t('failed')
      : job.status === 'in_progress'
        ? job.progress !== undefined
          ? vscode.l10n.t('generating {0}%', job.progress)
          : vscode.l10n.t('generating')
        : videoStatusWords(job.status);
    item.description = state;
    item.tooltip = new vscode.MarkdownString(vscode.l10n.t('**{0}**\n\n{1}\n\nStarted {2}\n\n{3}{4}', job.prompt.replace(/[\\`*_[\]]/g, '\\$&'), shape, when, job.error ?? '', job.file ? `\n\n${vscode.workspace.asRelativePath(job.file)}` : ''));
    item.iconPath = new vscode.ThemeIcon(
      job.error || job.status === 'failed' ? 'error' : job.status === 'downloaded' ? 'device-camera-video' : job.status === 'cancelled' ? 'circle-slash' : 'loading~spin',
    );
    item.contextValue = `videoJob.${job.error && job.status === 'completed' ? 'retry' : isActive(job) ? 'active' : job.status === 'downloaded' ? 'done' : 'ended'}`;
    if (job.file) item.command = { command: 'vscode.open', title: vscode.l10n.t('Open'), arguments: [vscode.Uri.file(job.file)] };
    return item;
  }

  getChildren(element?: VideoJob): VideoJob[] {
    return element ? [] : this.list();
  }

  /** Stops polling (the tasks keep running on the gateway and resume at the next activation). */
  dispose(): void {
    this.disposed = true;
    for (const stop of this.pollers.values()) stop.abort();
    this.changed.dispose();
  }
}

