import * as vscode from 'vscode';
import type { Services } from './services';

export type CommandHandler = (...args: unknown[]) => unknown;

/**
 * What a feature is given when it is activated: the platform's services, the extension's context,
 * and a place to register what it contributes. Everything registered here is disposed with the
 * extension. The platform knows no feature: each feature's `host/feature.ts` activates itself
 * against this, and `extension.ts` lists them in order.
 */
export class FeatureHost {
  private readonly deferred: (() => unknown)[] = [];

  constructor(
    readonly services: Services,
    readonly context: vscode.ExtensionContext,
  ) {}

  /** Registers a command for the life of the extension. */
  command(id: string, fn: CommandHandler): void {
    this.context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  }

  /** Disposed with the extension; returns what it was given. */
  own<T extends vscode.Disposable>(disposable: T): T {
    this.context.subscriptions.push(disposable);
    return disposable;
  }

  /** Work that waits until activation has returned (first checks, loading caches), so that activation stays fast. */
  afterActivation(task: () => unknown): void {
    this.deferred.push(task);
  }

  /** Starts the deferred work, once activation is done; a failing task is logged, the others still run. */
  startDeferred(): void {
    const tasks = this.deferred.splice(0);
    setTimeout(() => {
      for (const task of tasks) {
        try {
          void Promise.resolve(task()).catch((err: unknown) => this.services.log.error('a deferred start-up task failed', err));
        } catch (err) {
          this.services.log.error('a deferred start-up task failed', err);
        }
      }
    }, 0);
  }
}
