import * as vscode from 'vscode';
import { assetSettings } from '../../shell/config';
import { showGatewayError, tell } from '../../shell/errors';
import { loadGateway, type GatewayFeature } from '../../shell/services';
import { openFile } from './shared';
import { formatDateTime } from '../../common/locale';
import { videoJobRules, type VideoJob } from '../core/jobs';
import { JobsView } from './jobsView';

export type { VideoJob } from '../core/jobs';

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

/**
 * Video jobs: created tasks are kept in the workspace state, polled until done (also after a
 * window reload), and completed videos are downloaded into the assets folder. The tree lists them.
 */
export class VideoJobs extends JobsView<VideoJob> {
  constructor(services: GatewayFeature, state: vscode.Memento) {
    super(
      services,
      state,
      videoJobRules(
        () => services.client(),
        loadGateway,
        () => assetSettings().downloadLimit,
      ),
      {
        view: 'videoJobs',
        title: (job) => vscode.l10n.t('Video “{0}”', job.prompt.slice(0, 40)),
        // Cancelling the notification cancels the job.
        cancelled: (job) => void this.cancel(job.id),
        describe: (job) => `${videoStatusWords(job.status)}${job.progress !== undefined ? ` ${job.progress}%` : ''} · ${elapsed(Date.now() - job.createdAt)}`,
        noFolder: vscode.l10n.t('No workspace folder is open to download the video into.'),
        failed: (job) => void tell(services, 'error', `${job.error} (“${job.prompt.slice(0, 60)}”)`),
        downloaded: (job) => {
          const file = job.file!;
          void tell(services, 'info', vscode.l10n.t('Video ready: {0}', vscode.workspace.asRelativePath(file)), vscode.l10n.t('Open')).then((c) =>
            c ? openFile(file) : undefined,
          );
        },
        downloadFailed: vscode.l10n.t('Could not download the video'),
      },
    );
  }

  /** Cancels a job: stops polling and deletes the task on the gateway. */
  async cancel(id: string): Promise<void> {
    const job = this.get(id);
    if (!job) return;
    this.store.stop(id);
    try {
      await this.services.client().videos.delete(id);
    } catch (err) {
      if (!(err instanceof loadGateway().NotFoundError)) showGatewayError(this.services, vscode.l10n.t('Could not delete the video task'), err);
    }
    await this.store.save({ ...job, status: 'cancelled', error: undefined });
  }

  async remove(id: string): Promise<void> {
    const job = this.get(id);
    if (job && this.isActive(job)) await this.cancel(id);
    await this.store.forget(id);
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
    item.tooltip = new vscode.MarkdownString(
      vscode.l10n.t(
        '**{0}**\n\n{1}\n\nStarted {2}\n\n{3}{4}',
        job.prompt.replace(/[\\`*_[\]]/g, '\\$&'),
        shape,
        when,
        job.error ?? '',
        job.file ? `\n\n${vscode.workspace.asRelativePath(job.file)}` : '',
      ),
    );
    item.iconPath = new vscode.ThemeIcon(
      job.error || job.status === 'failed'
        ? 'error'
        : job.status === 'downloaded'
          ? 'device-camera-video'
          : job.status === 'cancelled'
            ? 'circle-slash'
            : 'loading~spin',
    );
    item.contextValue = `videoJob.${job.error && job.status === 'completed' ? 'retry' : this.isActive(job) ? 'active' : job.status === 'downloaded' ? 'done' : 'ended'}`;
    if (job.file) item.command = { command: 'vscode.open', title: vscode.l10n.t('Open'), arguments: [vscode.Uri.file(job.file)] };
    return item;
  }
}
