import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { assetSettings } from '../../shell/config';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type GatewayFeature } from '../../shell/services';
import { assetsFolder, slug, uniquePath } from './shared';
import { formatDateTime } from '../../common/locale';
import { counted } from '../../shell/listeners';

const STATE_KEY = 'modelGateway.taskJobs';

const JobSchema = z.object({
  kind: z.enum(['music', 'midjourney']),
  id: z.string(),
  prompt: z.string(),
  /** Music: the song's title; Midjourney: the action (IMAGINE, UPSCALE, VARIATION, REROLL) and its label (U2…). */
  title: z.optional(z.string()),
  action: z.optional(z.string()),
  label: z.optional(z.string()),
  createdAt: z.number(),
  /** The gateway's status (SUBMITTED, IN_PROGRESS, SUCCESS, FAILURE…), then ours: downloaded. */
  status: z.string(),
  progress: z.optional(z.number()),
  error: z.optional(z.string()),
  files: z.array(z.string()),
  /** Midjourney: what can follow the finished task (U1–U4, V1–V4, re-roll). */
  buttons: z.optional(z.array(z.object({ customId: z.string(), label: z.string() }))),
});
export type TaskJob = z.infer<typeof JobSchema>;

const ENDED = new Set(['downloaded', 'FAILURE', 'CANCEL']);
const isActive = (j: TaskJob) => !ENDED.has(j.status) && !j.error;

function statusWords(job: TaskJob): string {
  if (job.error) return job.status === 'SUCCESS' ? vscode.l10n.t('download failed') : vscode.l10n.t('failed');
  switch (job.status) {
    case 'NOT_START':
    case 'SUBMITTED':
    case 'QUEUED':
    case 'MODAL':
      return vscode.l10n.t('queued');
    case 'IN_PROGRESS':
      return job.progress !== undefined ? vscode.l10n.t('generating {0}%', job.progress) : vscode.l10n.t('generating');
    case 'SUCCESS':
      return vscode.l10n.t('downloading');
    case 'downloaded':
      return vscode.l10n.t('downloaded');
    case 'FAILURE':
    case 'CANCEL':
      return vscode.l10n.t('failed');
    default:
      return job.status.toLowerCase().replace('_', ' ');
  }
}

/** A task the gateway no longer knows: new-api's `task_not_exist` (Suno) or `task_no_found` (Midjourney). */
function isUnknownTask(err: unknown): boolean {
  const gw = loadGateway();
  return err instanceof gw.NotFoundError || (err instanceof gw.BadRequestError && (err.code === 'task_not_exist' || /task_no_found/.test(err.message)));
}

/**
 * Music (Suno) and Midjourney jobs: tasks are kept in the workspace state, polled until they end
 * (also after a window reload), and their files are downloaded into the assets folder: a song's
 * clips as MP3s, a Midjourney grid or upscale as a PNG. The tree lists them; a finished grid offers
 * its U/V follow-ups.
 */
export class TaskJobs implements vscode.TreeDataProvider<TaskJob>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TaskJob | undefined>();
  readonly onDidChangeTreeData = counted('taskJobs.onDidChangeTreeData', this.changed.event);
  private readonly pollers = new Map<string, AbortController>();
  private disposed = false;

  constructor(
    private readonly services: GatewayFeature,
    private readonly state: vscode.Memento,
    /** What to offer when a job's files are ready (play the song, follow up on the grid). */
    private readonly onReady: (job: TaskJob) => void,
  ) {}

  /** Every job, newest first; a stored entry that does not parse is dropped, never fatal. */
  list(): TaskJob[] {
    const raw = this.state.get<unknown[]>(STATE_KEY, []);
    return (Array.isArray(raw) ? raw : [])
      .flatMap((j) => {
        const parsed = JobSchema.safeParse(j);
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  get(id: string): TaskJob | undefined {
    return this.list().find((j) => j.id === id);
  }

  private async save(job: TaskJob): Promise<void> {
    await this.state.update(STATE_KEY, [job, ...this.list().filter((j) => j.id !== job.id)]);
    this.changed.fire(undefined);
  }

  /** At activation: polls the unfinished jobs of the last session. */
  resumeAll(): void {
    for (const job of this.list()) if (isActive(job)) this.watch(job);
  }

  async add(job: TaskJob): Promise<void> {
    await this.save(job);
    this.watch(job);
  }

  private watch(job: TaskJob): void {
    if (this.pollers.has(job.id) || this.disposed) return;
    const stop = new AbortController();
    this.pollers.set(job.id, stop);
    const title = job.kind === 'music' ? vscode.l10n.t('Music “{0}”', (job.title ?? job.prompt).slice(0, 40)) : vscode.l10n.t('Midjourney “{0}”', `${job.label ? `${job.label} · ` : ''}${job.prompt.slice(0, 40)}`);
    void vscode.window
      .withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
        // Neither Suno nor Midjourney can be cancelled through the gateway: closing stops watching here only.
        token.onCancellationRequested(() => stop.abort());
        await this.poll(job.id, stop.signal, (message) => progress.report({ message }));
      })
      .then(undefined, (err) => this.services.log.error('task job', err));
  }

  private async poll(id: string, signal: AbortSignal, report: (message: string) => void): Promise<void> {
    try {
      while (!signal.aborted) {
        let job = this.get(id);
        if (!job || !isActive(job)) break;
        if (this.services.isConfigured()) {
          if (job.status !== 'SUCCESS') {
            try {
              job = await this.refresh(job, signal);
              report(statusWords(job));
              if (job.status === 'FAILURE' || job.status === 'CANCEL') {
                void tell(this.services, 'error', `${job.error ?? vscode.l10n.t('The task failed.')} (“${job.prompt.slice(0, 60)}”)`);
                break;
              }
            } catch (err) {
              if (signal.aborted) break;
              if (isUnknownTask(err)) {
                await this.save({ ...job, status: 'FAILURE', error: vscode.l10n.t('The gateway no longer knows this task (deleted or expired).') });
                break;
              }
              // Offline, or a 503 after retries: the job stays and is asked about again next time.
              this.services.log.warn(`task ${id}: status check failed, will retry: ${err instanceof Error ? err.message : String(err)}`);
            }
          }
          if (job.status === 'SUCCESS') {
            report(vscode.l10n.t('downloading'));
            await this.download(job, signal);
            break;
          }
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, assetSettings().videoPollSeconds * 1000);
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
      }
    } finally {
      this.pollers.delete(id);
    }
  }

  /** Asks the gateway for the task and saves what it says. */
  private async refresh(job: TaskJob, signal: AbortSignal): Promise<TaskJob> {
    const client = this.services.client();
    let next: TaskJob;
    if (job.kind === 'music') {
      const t = await client.suno.fetch(job.id, { signal });
      next = { ...job, status: t.status, progress: t.progress ?? job.progress, error: t.status === 'FAILURE' ? new (loadGateway().SunoFailedError)(t).message : undefined };
    } else {
      const t = await client.midjourney.fetch(job.id, { signal });
      const buttons = t.buttons.map((b) => ({ customId: b.customId, label: loadGateway().buttonLabel(b) }));
      next = { ...job, status: t.status, progress: t.progress ?? job.progress, buttons, error: t.status === 'FAILURE' || t.status === 'CANCEL' ? new (loadGateway().MidjourneyFailedError)(t).message : undefined };
    }
    await this.save(next);
    return next;
  }

  private async download(job: TaskJob, signal: AbortSignal): Promise<void> {
    let dir: string | undefined;
    try {
      dir = await assetsFolder();
    } catch (err) {
      await this.save({ ...job, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (!dir) {
      await this.save({ ...job, error: vscode.l10n.t('No workspace folder is open to save the files into.') });
      return;
    }
    const client = this.services.client();
    try {
      const files: string[] = [];
      if (job.kind === 'music') {
        const task = await client.suno.fetch(job.id, { signal });
        const clips = task.songs.filter((s) => s.audio_url);
        if (clips.length === 0) throw new Error(vscode.l10n.t('the gateway reported the song done but sent no audio'));
        for (const [i, clip] of clips.entries()) {
          const file = uniquePath(dir, `music-${slug(clip.title || job.title || job.prompt, 32)}-${i + 1}`, '.mp3');
          await (await client.suno.download(clip.audio_url!, { signal })).toFile(file);
          files.push(file);
        }
      } else {
        const task = await client.midjourney.fetch(job.id, { signal });
        if (!task.imageUrl) throw new Error(vscode.l10n.t('the gateway reported the image done but sent no image URL'));
        const file = uniquePath(dir, `mj-${slug(job.prompt, 32)}${job.label ? `-${job.label.toLowerCase()}` : ''}`, '.png');
        await (await client.midjourney.image(task.imageUrl, { signal })).toFile(file);
        files.push(file);
      }
      const done: TaskJob = { ...job, status: 'downloaded', progress: 100, files, error: undefined };
      await this.save(done);
      this.services.notifySpend();
      this.onReady(done);
    } catch (err) {
      if (signal.aborted) return;
      await this.save({ ...job, error: vscode.l10n.t('Download failed: {0}', err instanceof Error ? err.message : String(err)) });
      showGatewayError(this.services, vscode.l10n.t('Could not download the result'), err);
    }
  }

  /** Tries a failed download again. */
  retry(id: string): void {
    const job = this.get(id);
    if (!job || job.status !== 'SUCCESS') return;
    const again = { ...job, error: undefined };
    void this.save(again).then(() => this.watch(again));
  }

  /** Stops watching a job and forgets it (the gateway has no way to cancel these tasks). */
  async remove(id: string): Promise<void> {
    this.pollers.get(id)?.abort();
    await this.state.update(
      STATE_KEY,
      this.list().filter((j) => j.id !== id),
    );
    this.changed.fire(undefined);
  }

  getTreeItem(job: TaskJob): vscode.TreeItem {
    const name = job.kind === 'music' ? (job.title ?? job.prompt) : `${job.label ? `${job.label} · ` : ''}${job.prompt}`;
    const item = new vscode.TreeItem(name.length > 48 ? `${name.slice(0, 47)}…` : name);
    item.id = job.id;
    item.description = statusWords(job);
    const files = job.files.map((f) => vscode.workspace.asRelativePath(f)).join('\n\n');
    item.tooltip = new vscode.MarkdownString(
      `**${(job.kind === 'music' ? vscode.l10n.t('Music') : 'Midjourney').replace(/[\\`*_[\]]/g, '\\$&')}** · ${formatDateTime(job.createdAt)}\n\n${job.prompt.replace(/[\\`*_[\]]/g, '\\$&')}${job.error ? `\n\n${job.error}` : ''}${files ? `\n\n${files}` : ''}`,
    );
    const done = job.status === 'downloaded';
    item.iconPath = new vscode.ThemeIcon(job.error || job.status === 'FAILURE' ? 'error' : done ? (job.kind === 'music' ? 'music' : 'file-media') : 'loading~spin');
    item.contextValue = `taskJob.${job.error && job.status === 'SUCCESS' ? 'retry' : isActive(job) ? 'active' : done ? (job.kind === 'midjourney' && job.buttons?.length ? 'grid' : 'done') : 'ended'}`;
    if (job.files[0]) item.command = { command: 'modelGateway.taskJobs.open', title: vscode.l10n.t('Open'), arguments: [job.id] };
    return item;
  }

  getChildren(element?: TaskJob): TaskJob[] {
    return element ? [] : this.list();
  }

  /** Stops polling; the tasks go on at the gateway and are picked up at the next activation. */
  dispose(): void {
    this.disposed = true;
    for (const stop of this.pollers.values()) stop.abort();
    this.changed.dispose();
  }
}
