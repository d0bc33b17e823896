import { join } from 'node:path';
import { askWithFallback } from '../../runtime/host/fallbackChain';
import { fallbackLine } from '../../runtime/core/fallback';
import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import { formatCount } from '../../common/locale';
import type { ProjectRules } from '../../runtime/host/projectRules';
import { showGatewayError } from '../../shell/errors';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import { askBeforeSending } from '../core/caller';
import { commitChange, recentMessages } from '../core/changes';
import { cleanCommitMessage, COMMIT_DIFF_TOKENS, commitRequest, subjectsOf } from '../core/commitMessage';
import { boundedDiff } from '../core/diff';
import { scmStart } from './settings';
import { calledFromOwnUi, changeVerdict, confirmSpend } from './sendable';
import type { FeatureSpend } from '../../runtime/host/featureSpend';

/** Tokens a commit-message request adds to its diff (instructions, recent subjects) and may answer with. */
const COMMIT_OVERHEAD_TOKENS = 400;
const COMMIT_OUTPUT_TOKENS = 400;

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

  /**
   * The command: `args` are what it was called with (the Source Control box passes its repository's
   * root; another caller is asked about first). Returns the message written.
   */
  async write(...args: unknown[]): Promise<string | undefined> {
    // A second click while one is written stops it.
    if (this.running) {
      this.running.abort();
      return undefined;
    }
    const start = await scmStart(this.services, args[0]);
    if (!start) return undefined;
    const { model, repo, place } = start;
    const change = await commitChange(place, changeVerdict(repo.rootUri.fsPath)).catch((err: unknown) => {
      void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
      return undefined;
    });
    if (!change) return undefined;
    const { staged, files } = change;
    if (!files.length) {
      void vscode.window.showInformationMessage(vscode.l10n.t('There are no changes to describe (new files count once they are staged).'));
      return undefined;
    }
    const diff = boundedDiff(files, COMMIT_DIFF_TOKENS);
    const ask = askBeforeSending(calledFromOwnUi(args), diff.tokens);
    if (ask && !(await confirmSpend(this.spend, ask, { model, tokens: diff.tokens + COMMIT_OVERHEAD_TOKENS, outputTokens: COMMIT_OUTPUT_TOKENS })))
      return undefined;
    const subjects = subjectsOf(await recentMessages(place, 10));
    const { section } = await this.rules.forTurn(diff.shown.map((p) => join(repo.rootUri.fsPath, p)));
    const request = commitRequest({ model, diff: diff.text, staged, recentSubjects: subjects, rules: section });
    const box = repo.inputBox;
    const draft = box.value;
    const abort = new AbortController();
    this.running = abort;
    let text = '';
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.SourceControl, title: vscode.l10n.t('Writing a commit message…') },
        async () => {
          // A busy model hands the message to the next of its chain, never once text is in the box.
          const asked = await askWithFallback(this.services, 'commit message', model, {
            signal: abort.signal,
            shown: () => text.length > 0,
            attempt: async (a) => {
              const stream = this.services.client().chat.completions.stream({ ...request, model: a.model }, { signal: a.signal, retry: a.retry });
              for await (const chunk of stream) {
                const delta = chunk.choices[0]?.delta?.content;
                if (typeof delta !== 'string' || !delta) continue;
                a.heard();
                text += delta;
                box.value = cleanCommitMessage(text);
              }
              return stream.finalCompletion();
            },
          });
          const final = asked.value;
          const answeredBy = asked.model;
          const message = cleanCommitMessage(text);
          if (!message) throw new Error(vscode.l10n.t('The model answered with an empty message.'));
          box.value = message;
          const input = final.usage?.prompt_tokens ?? 0;
          const output = final.usage?.completion_tokens ?? 0;
          const { dollars } = await this.spend.add(answeredBy, { input, output });
          const cut = diff.cut.length + diff.left.filter((l) => l.why === 'budget').length;
          const note =
            vscode.l10n.t('Commit message by {0}: {1} tokens, {2}', answeredBy, formatCount(input + output), formatCost(dollars)) +
            (asked.fallbacks.length ? ` (${fallbackLine(asked.fallbacks, answeredBy)})` : '') +
            (cut ? vscode.l10n.t(' ({0} files cut to fit)', cut) : '');
          this.services.log.info(note);
          vscode.window.setStatusBarMessage(`$(git-commit) ${note}`, 15_000);
          return message;
        },
      );
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
