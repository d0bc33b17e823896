import * as vscode from 'vscode';
import { redact } from './redact';

/** The "Model Gateway" output channel; every line passes through redaction. */
export class Log implements vscode.Disposable {
  private readonly channel = vscode.window.createOutputChannel('Model Gateway', { log: true });

  private clean(message: string): string {
    return redact(message);
  }

  info(message: string): void {
    this.channel.info(this.clean(message));
  }

  warn(message: string): void {
    this.channel.warn(this.clean(message));
  }

  error(message: string, err?: unknown): void {
    const detail = err instanceof Error ? `${err.name}: ${err.message}` : err === undefined ? '' : typeof err === 'string' ? err : JSON.stringify(err);
    this.channel.error(this.clean(detail ? `${message}: ${detail}` : message));
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
