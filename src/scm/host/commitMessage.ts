import { join } from 'node:path';
import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import { formatCount } from '../../common/locale';
import type { ProjectRules } from '../../chat/host/projectRules';
import { showGatewayError } from '../../shell/errors';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import { fileVerdict } from '../../shell/workspaceGuard';
import { cleanCommitMessage, COMMIT_DIFF_TOKENS, commitRequest, subjectsOf } from '../core/commitMessage';
import { boundedDiff, splitDiff, type BoundedDiff } from '../core/diff';
import type { GitRepository } from './git';
import { scmStart } from './settings';
import type { FeatureSpend } from '../../usage/host/featureSpend';

/** The diff of a repository as the model may read it: secret, ignored and excluded files named only. */
export async function readableDiff(repo: GitRepository, raw: string, maxTokens: number): Promise<BoundedDiff> {
  const files = splitDiff(raw);
  const verdicts = new Map<string, 'secret' | 'excluded' | undefined>();
  for (const f of files) verdicts.set(f.path, await fileVerdict(vscode.Uri.file(join(repo.rootUri.fsPath, f.path))));
  return boundedDiff(files, maxTokens, (path) => verdicts.get(path));
}

/**
 * Writes a commit message into the Source Control box from the staged changes (all changes when
 * nothing is staged), streamed as it comes, in the repository's style. What was in the box comes
 * back if the request fails or is cancelled.
 */
export class CommitMessageWriter {
  private running: AbortController | undefined;

  constructor(
    private readonly services: GatewayFeature & PriceSource,
    private readonly rules: ProjectRules,
    private readonly spend: FeatureSpend,
  ) {}

  /** The command: `arg` is the Source Control view's repository when run from its box. Returns the message written. */
  async write(arg?: unknown): Promise<string | undefined> {
    // A second click while one is written stops it.
    if (this.running) {
      this.running.abort();
      return undefined;
    }
    const start = await scmStart(this.services, arg);
    if (!start) return undefined;
    const { model, repo } = start;
    const staged = repo.state.indexChanges.length > 0;
    const raw = await repo.diff(staged);
    if (!raw.trim()) {
      void vscode.window.showInformationMessage(vscode.l10n.t('There are no changes to describe (new files count once they are staged).'));
      return undefined;
    }
    const diff = await readableDiff(repo, raw, COMMIT_DIFF_TOKENS);
    const subjects = subjectsOf((await repo.log({ maxEntries: 10 }).catch(() => [])).map((c) => c.message));
    const { section } = await this.rules.forTurn(diff.shown.map((p) => join(repo.rootUri.fsPath, p)));
    const request = commitRequest({ model, diff: diff.text, staged, recentSubjects: subjects, rules: section });
    const box = repo.inputBox;
    const draft = box.value;
    const abort = new AbortController();
    this.running = abort;
    let text = '';
    try {
      return await vscode.window.withProgress({ location: vscode.ProgressLocation.SourceControl, title: vscode.l10n.t('Writing a commit message…') }, async () => {
        const stream = this.services.client().chat.completions.stream(request, { signal: abort.signal });
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta?.content;
          if (typeof delta !== 'string' || !delta) continue;
          text += delta;
          box.value = cleanCommitMessage(text);
        }
        const final = await stream.finalCompletion();
        const message = cleanCommitMessage(text);
        if (!message) throw new Error(vscode.l10n.t('The model answered with an empty message.'));
        box.value = message;
        const input = final.usage?.prompt_tokens ?? 0;
        const output = final.usage?.completion_tokens ?? 0;
        const { dollars } = await this.spend.add(model, { input, output });
        const cut = diff.cut.length + diff.left.filter((l) => l.why === 'budget').length;
        const note = vscode.l10n.t('Commit message by {0}: {1} tokens, {2}', model, formatCount(input + output), formatCost(dollars)) + (cut ? vscode.l10n.t(' ({0} files cut to fit)', cut) : '');
        this.services.log.info(note);
        vscode.window.setStatusBarMessage(`$(git-commit) ${note}`, 15_000);
        return message;
      });
    } catch (err) {
      // Nothing lost: the box gets back what the person had typed.
      box.value = draft;
      if (!abort.signal.aborted) showGatewayError(this.services, vscode.l10n.t('Could not write a commit message'), err);
      return undefined;
    } finally {
      this.running = undefined;
    }
  }

  dispose(): void {
    this.running?.abort();
  }
}
