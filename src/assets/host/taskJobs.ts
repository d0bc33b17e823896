import * as vscode from 'vscode';
import { assetSettings } from '../../shell/config';
import { tell } from '../../shell/errors';
import { loadGateway, type GatewayFeature } from '../../shell/services';
import { formatDateTime } from '../../common/locale';
import { taskJobRules, type TaskJob } from '../core/jobs';
import { JobsView } from './jobsView';

export type { TaskJob } from '../core/jobs';

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

/**
 * Music (Suno) and Midjourney jobs: tasks are kept in the workspace state, polled until they end
 * (also after a window reload), and their files are downloaded into the assets folder: a song's
 * clips as MP3s, a Midjourney grid or upscale as a PNG. The tree lists them; a finished grid offers
 * its U/V follow-ups.
 */
export class TaskJobs extends JobsView<TaskJob> {
  constructor(
    services: GatewayFeature,
    state: vscode.Memento,
    /** What to offer when a job's files are ready (play the song, follow up on the grid). */
    onReady: (job: TaskJob) => void,
  ) {
    super(
      services,
      state,
      taskJobRules(
        () => services.client(),
        loadGateway,
        () => assetSettings().downloadLimit,
      ),
      {
        view: 'taskJobs',
        title: (job) =>
          job.kind === 'music'
            ? vscode.l10n.t('Music “{0}”', (job.title ?? job.prompt).slice(0, 40))
            : vscode.l10n.t('Midjourney “{0}”', `${job.label ? `${job.label} · ` : ''}${job.prompt.slice(0, 40)}`),
        // Neither Suno nor Midjourney can be cancelled through the gateway: closing stops watching here only.
        cancelled: (job) => this.store.stop(job.id),
        describe: statusWords,
        noFolder: vscode.l10n.t('No workspace folder is open to save the files into.'),
        failed: (job) => void tell(services, 'error', `${job.error ?? vscode.l10n.t('The task failed.')} (“${job.prompt.slice(0, 60)}”)`),
        downloaded: onReady,
        downloadFailed: vscode.l10n.t('Could not download the result'),
      },
    );
  }

  /** Stops watching a job and forgets it (the gateway has no way to cancel these tasks). */
  remove(id: string): Promise<void> {
    return this.store.forget(id);
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
    item.iconPath = new vscode.ThemeIcon(
      job.error || job.status === 'FAILURE' ? 'error' : done ? (job.kind === 'music' ? 'music' : 'file-media') : 'loading~spin',
    );
    item.contextValue = `taskJob.${job.error && job.status === 'SUCCESS' ? 'retry' : this.isActive(job) ? 'active' : done ? (job.kind === 'midjourney' && job.buttons?.length ? 'grid' : 'done') : 'ended'}`;
    if (job.files[0]) item.command = { command: 'modelGateway.taskJobs.open', title: vscode.l10n.t('Open'), arguments: [job.id] };
    return item;
  }
}
