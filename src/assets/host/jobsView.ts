import * as vscode from 'vscode';
import { assetSettings } from '../../shell/config';
import { showGatewayError } from '../../shell/errors';
import type { GatewayFeature } from '../../shell/services';
import { counted } from '../../shell/listeners';
import { JobStore, type StoredJob } from '../core/jobStore';
import type { JobRules } from '../core/jobs';
import { assetsFolder } from './shared';

/** How a kind of job shows in VS Code. */
export interface JobPresentation<J> {
  /** The view's name, for the listener counts (`taskJobs`, `videoJobs`). */
  view: string;
  /** The progress notification's title while a job is watched. */
  title(job: J): string;
  /** The person closed the notification. */
  cancelled(job: J): void;
  /** The job's progress in words, after each status check. */
  describe(job: J): string;
  noFolder: string;
  failed(job: J): void;
  /** The files are saved (the spend is already announced). */
  downloaded(job: J): void;
  /** The title of the error shown when a download fails. */
  downloadFailed: string;
}

/**
 * A tree of jobs over a `JobStore`: each job watched with a progress notification, its files saved
 * into the assets folder; the Video Jobs and the Music and Midjourney views.
 */
export abstract class JobsView<J extends StoredJob> implements vscode.TreeDataProvider<J>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<J | undefined>();
  readonly onDidChangeTreeData: vscode.Event<J | undefined>;
  protected readonly store: JobStore<J>;
  protected readonly isActive: (job: J) => boolean;

  constructor(
    protected readonly services: GatewayFeature,
    state: vscode.Memento,
    rules: JobRules<J>,
    shown: JobPresentation<J>,
  ) {
    this.onDidChangeTreeData = counted(`${shown.view}.onDidChangeTreeData`, this.changed.event);
    this.isActive = rules.isActive;
    this.store = new JobStore<J>(state, {
      ...rules,
      describe: (job) => shown.describe(job),
      assetsFolder,
      noFolder: shown.noFolder,
      isConfigured: () => services.isConfigured(),
      // The spec asks for 15 s for videos; a setting allows less against the emulator.
      pollMs: () => assetSettings().videoPollSeconds * 1000,
      warn: (message) => services.log.warn(message),
      changed: () => this.changed.fire(undefined),
      show: (job, poll) =>
        void vscode.window
          .withProgress({ location: vscode.ProgressLocation.Notification, title: shown.title(job), cancellable: true }, async (progress, token) => {
            token.onCancellationRequested(() => shown.cancelled(job));
            await poll((message) => progress.report({ message }));
          })
          .then(undefined, (err) => services.log.error(`${rules.what} job`, err)),
      failed: (job) => shown.failed(job),
      downloaded: (job) => {
        services.notifySpend();
        shown.downloaded(job);
      },
      downloadFailed: (err) => showGatewayError(services, shown.downloadFailed, err),
    });
  }

  /** Every job, newest first; a stored entry that does not parse is dropped, never fatal. */
  list(): J[] {
    return this.store.list();
  }

  get(id: string): J | undefined {
    return this.store.get(id);
  }

  /** At activation: polls the unfinished jobs of the last session. */
  resumeAll(): void {
    this.store.resumeAll();
  }

  add(job: J): Promise<void> {
    return this.store.add(job);
  }

  /** Tries a failed download again. */
  retry(id: string): void {
    this.store.retry(id);
  }

  abstract getTreeItem(job: J): vscode.TreeItem;

  getChildren(element?: J): J[] {
    return element ? [] : this.list();
  }

  /** Stops polling; the tasks go on at the gateway and are picked up at the next activation. */
  dispose(): void {
    this.store.dispose();
    this.changed.dispose();
  }
}
