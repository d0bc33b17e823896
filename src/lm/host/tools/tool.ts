import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { SearchService } from '../../../search/host/searchService';
import { describeError } from '../../../shell/errors';
import type { CredentialFeature } from '../../../shell/services';
import type { PathGuard } from '../../../tools/pathGuard';
import type { LmToolName } from '../../core/toolNames';
import type { LmAccess } from '../access';

export interface ToolDeps {
  services: CredentialFeature;
  /** The daily cap and the rate limits for callers outside our own chat. */
  access: LmAccess;
  search?: SearchService;
  guard: () => PathGuard;
}

/** A text field of a tool's input: trimmed, and empty when missing or not a string (the tool says what it needs). */
export const textField = z.catch(z.string().check(z.trim()), '');

/** What the model reads back: one text part. */
export function textResult(s: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(s)]);
}

export function workspaceRelative(path: string): string {
  return vscode.workspace.asRelativePath(path);
}

/**
 * One of the gateway's abilities as a tool any agent in VS Code can call. The input is checked
 * with the tool's schema; cancellation becomes an abort signal; a failure reaches the model as
 * what went wrong and what fixes it, never a secret.
 */
export abstract class GatewayTool<I> implements vscode.LanguageModelTool<unknown> {
  abstract readonly name: LmToolName;
  protected abstract readonly input: z.ZodMiniType<I>;

  constructor(protected readonly deps: ToolDeps) {}

  /** What VS Code shows while the tool runs, and for a paid tool the question with the price. */
  protected abstract prepare(input: I): vscode.PreparedToolInvocation;
  /** The answer for the model; throws on a gateway failure. */
  protected abstract run(input: I, signal: AbortSignal): Promise<string>;
  /** How a failure starts: "could not speak the text". */
  protected abstract failure(input: I): string;

  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<unknown>): vscode.PreparedToolInvocation {
    return this.prepare(this.parse(options.input));
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<unknown>, token: vscode.CancellationToken): Promise<vscode.LanguageModelToolResult> {
    const input = this.parse(options.input);
    const abort = new AbortController();
    const cancelled = token.onCancellationRequested(() => abort.abort());
    try {
      return textResult(await this.run(input, abort.signal));
    } catch (err) {
      const { message, actions } = describeError(this.deps.services, err);
      return textResult(
        `Error: ${this.failure(input)}: ${message}${actions.length ? ` (the person can fix it with: ${actions.map((a) => a.title).join(', ')})` : ''}`,
      );
    } finally {
      cancelled.dispose();
    }
  }

  private parse(raw: unknown): I {
    return this.input.parse(raw && typeof raw === 'object' ? raw : {});
  }
}
