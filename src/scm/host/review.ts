import { join } from 'node:path';
import { askWithFallback } from '../../runtime/host/fallbackChain';
import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import type { ProjectRules } from '../../runtime/host/projectRules';
import { showGatewayError } from '../../shell/errors';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import type { GitPlace } from '../../tools/git';
import { askBeforeSending } from '../core/caller';
import { mergeBase, readChange } from '../core/changes';
import { boundedDiff, type FileDiff } from '../core/diff';
import { CONFIRM_TOKENS, fixPreview, parseFindings, placeFix, REVIEW_DIFF_TOKENS, reviewRequest, type Finding } from '../core/review';
import type { GitRepository } from './git';
import { scmStart } from './settings';
import { calledFromOwnUi, changeVerdict, confirmSpend } from './sendable';
import type { FeatureSpend } from '../../runtime/host/featureSpend';

export const REVIEW_CONTROLLER = 'modelGateway.review';
export const REVIEW_SOURCE = 'Model Gateway review';
export const APPLY_FIX_COMMAND = 'modelGateway.review.applyFix';
export const DISMISS_COMMAND = 'modelGateway.review.dismiss';

const SEVERITY: Record<Finding['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

interface Posted {
  uri: vscode.Uri;
  finding: Finding;
  thread: vscode.CommentThread;
  diagnostic: vscode.Diagnostic;
}

/** What a review found and where it was put. */
export interface ReviewResult {
  findings: Finding[];
  scope: string;
  dollars: number;
}

/**
 * Reviews a change through the gateway and puts each finding on its line: a comment thread
 * (severity, the message, *Apply Fix* when the model proposed one, *Dismiss*) and a problem of the
 * source "Model Gateway review". A new review replaces the last one's findings.
 */
export class ChangeReviewer implements vscode.Disposable {
  private readonly controller = vscode.comments.createCommentController(REVIEW_CONTROLLER, REVIEW_SOURCE);
  private readonly problems = vscode.languages.createDiagnosticCollection(REVIEW_SOURCE);
  private readonly posted = new Map<vscode.CommentThread, Posted>();

  constructor(
    private readonly services: GatewayFeature & PriceSource,
    private readonly rules: ProjectRules,
    private readonly spend: FeatureSpend,
  ) {
    this.controller.options = { prompt: '', placeHolder: '' };
  }

  /** The findings on screen (the tests read them). */
  get current(): readonly Posted[] {
    return [...this.posted.values()];
  }

  /**
   * The command: `args` are what it was called with (the Source Control title bar passes its
   * repository, the palette nothing). `args[1]`, the scope: 'working-tree' or `branch:<base>`
   * (asked when absent). Another caller, or one naming the scope, is asked about first.
   */
  async review(...args: unknown[]): Promise<ReviewResult | undefined> {
    const [arg, what] = args;
    const start = await scmStart(this.services, arg);
    if (!start) return undefined;
    const { model, repo, place } = start;
    const scope = typeof what === 'string' ? what : await this.askScope(repo);
    if (!scope) return undefined;
    const read = await this.readChange(repo, place, scope);
    if (!read) return undefined;
    const diff = boundedDiff(read.files, REVIEW_DIFF_TOKENS);
    if (!diff.shown.length) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Nothing to review: the changed files are secret, ignored, generated or binary.'));
      return undefined;
    }
    // Another caller, or a large change: the model and the cost first.
    const ask = askBeforeSending(calledFromOwnUi(args), diff.tokens, CONFIRM_TOKENS);
    if (ask && !(await confirmSpend(this.spend, ask, { model, tokens: diff.tokens + 600, outputTokens: 2_000, review: read.label }))) return undefined;
    const { section } = await this.rules.forTurn(diff.shown.map((p) => join(repo.rootUri.fsPath, p)));
    const request = reviewRequest({ model, diff: diff.text, scope: read.label, rules: section });
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Reviewing {0}…', read.label), cancellable: true },
        async (_progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          try {
            // A busy model hands the review to the next of its chain (modelGateway.fallbackModels).
            const asked = await askWithFallback(this.services, 'review', model, {
              signal: abort.signal,
              attempt: (a) => this.services.client().chat.completions.create({ ...request, model: a.model }, { signal: a.signal, retry: a.retry }),
            });
            const reply = asked.value;
            const content = reply.choices[0]?.message.content;
            const { dollars } = await this.spend.add(asked.model, { input: reply.usage?.prompt_tokens ?? 0, output: reply.usage?.completion_tokens ?? 0 });
            const findings = parseFindings(typeof content === 'string' ? content : '', diff.shown);
            if (!findings)
              throw new Error(
                vscode.l10n.t('The model did not answer with findings the review can read. Try again or choose another model (modelGateway.scm.model).'),
              );
            await this.post(repo.rootUri, findings);
            const note =
              findings.length === 1
                ? vscode.l10n.t('Review of {0}: 1 finding ({1}). It is on its line and in the Problems view.', read.label, formatCost(dollars))
                : findings.length
                  ? vscode.l10n.t(
                      'Review of {0}: {1} findings ({2}). They are on their lines and in the Problems view.',
                      read.label,
                      findings.length,
                      formatCost(dollars),
                    )
                  : vscode.l10n.t('Review of {0}: nothing to report ({1}).', read.label, formatCost(dollars));
            this.services.log.info(note);
            void vscode.window.showInformationMessage(note);
            return { findings, scope: read.label, dollars };
          } finally {
            sub.dispose();
          }
        },
      );
    } catch (err) {
      showGatewayError(this.services, vscode.l10n.t('Could not review the changes'), err);
      return undefined;
    }
  }

  private async askScope(repo: GitRepository): Promise<string | undefined> {
    const items = [
      { label: vscode.l10n.t('$(diff) Working Tree'), description: vscode.l10n.t('staged and unstaged changes against HEAD'), scope: 'working-tree' },
      ...['main', 'master', 'develop']
        .filter((b) => b !== repo.state.HEAD?.name)
        .map((b) => ({
          label: vscode.l10n.t('$(git-branch) This Branch against {0}', b),
          description: vscode.l10n.t('the commits since it branched off'),
          scope: `branch:${b}`,
        })),
    ];
    return (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Review which changes?') }))?.scope;
  }

  /** The change in scope, asked of git (`changes.ts`): withheld files named only. */
  private async readChange(repo: GitRepository, place: GitPlace, scope: string): Promise<{ files: FileDiff[]; label: string } | undefined> {
    const verdict = changeVerdict(repo.rootUri.fsPath);
    try {
      if (scope.startsWith('branch:')) {
        const base = scope.slice('branch:'.length);
        const from = await mergeBase(place, base);
        if (!from) throw new Error(vscode.l10n.t('The branch {0} was not found in this repository.', base));
        // The commits since this branch left `base`.
        return this.nonEmpty(await readChange(place, [from, 'HEAD'], verdict), vscode.l10n.t('{0} against {1}', repo.state.HEAD?.name ?? 'HEAD', base));
      }
      return this.nonEmpty(await readChange(place, ['HEAD'], verdict), vscode.l10n.t('the working tree'));
    } catch (err) {
      void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  private nonEmpty(files: FileDiff[], label: string): { files: FileDiff[]; label: string } | undefined {
    if (files.length) return { files, label };
    void vscode.window.showInformationMessage(vscode.l10n.t('There are no changes in {0} to review.', label));
    return undefined;
  }

  private clear(): void {
    for (const p of this.posted.values()) p.thread.dispose();
    this.posted.clear();
    this.problems.clear();
  }

  private async post(root: vscode.Uri, findings: readonly Finding[]): Promise<void> {
    this.clear();
    for (const finding of findings) {
      const uri = vscode.Uri.file(join(root.fsPath, finding.path));
      const document = await vscode.workspace.openTextDocument(uri).then(
        (d) => d,
        () => undefined,
      );
      if (!document) continue;
      const line = Math.min(finding.line, document.lineCount) - 1;
      const range = document.lineAt(line).range;
      const body = new vscode.MarkdownString();
      body.appendText(finding.message);
      if (finding.fix) {
        // The old text and the new, as a diff: what *Apply Fix* replaces is on screen before it does.
        body.appendMarkdown(`\n\n${vscode.l10n.t('Proposed fix:')}\n`);
        body.appendCodeblock(fixPreview(finding.fix), 'diff');
      }
      const severityName = { error: vscode.l10n.t('Error'), warning: vscode.l10n.t('Warning'), info: vscode.l10n.t('Note') }[finding.severity];
      const comment: vscode.Comment = { body, mode: vscode.CommentMode.Preview, author: { name: `${REVIEW_SOURCE} · ${severityName}` } };
      const thread = this.controller.createCommentThread(uri, range, [comment]);
      thread.canReply = false;
      thread.label = severityName;
      thread.contextValue = finding.fix ? 'fixable' : 'finding';
      thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      const diagnostic = new vscode.Diagnostic(range, finding.message, SEVERITY[finding.severity]);
      diagnostic.source = REVIEW_SOURCE;
      this.posted.set(thread, { uri, finding, thread, diagnostic });
    }
    this.refreshProblems();
  }

  private refreshProblems(): void {
    const byFile = new Map<string, { uri: vscode.Uri; list: vscode.Diagnostic[] }>();
    for (const p of this.posted.values()) {
      const entry = byFile.get(p.uri.toString()) ?? { uri: p.uri, list: [] };
      entry.list.push(p.diagnostic);
      byFile.set(p.uri.toString(), entry);
    }
    this.problems.clear();
    for (const { uri, list } of byFile.values()) this.problems.set(uri, list);
  }

  /**
   * *Apply Fix* on a thread: the replacement made at the finding's place only (its lines; never
   * the same text elsewhere in the file), the file saved, the finding closed. When the old text is
   * no longer there, or is there twice, nothing is changed and the person is told why.
   */
  async applyFix(thread: unknown): Promise<boolean> {
    const posted = this.posted.get(thread as vscode.CommentThread);
    if (!posted?.finding.fix) return false;
    const document = await vscode.workspace.openTextDocument(posted.uri);
    // The finding's line, where its thread was put.
    const line = (posted.thread.range?.start.line ?? posted.finding.line - 1) + 1;
    const at = placeFix(document.getText(), line, posted.finding.fix);
    if ('refused' in at) {
      void vscode.window.showWarningMessage(
        at.refused === 'moved'
          ? vscode.l10n.t('The fix no longer fits: the text it replaces is not on line {0} any more. Nothing was changed.', line)
          : vscode.l10n.t('The fix is not clear: the text it replaces is there more than once at line {0}. Nothing was changed.', line),
      );
      return false;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(posted.uri, new vscode.Range(document.positionAt(at.start), document.positionAt(at.end)), at.text);
    if (!(await vscode.workspace.applyEdit(edit))) return false;
    await document.save();
    this.dismiss(thread);
    return true;
  }

  /** *Dismiss*: the thread and its problem go. */
  dismiss(thread: unknown): void {
    const posted = this.posted.get(thread as vscode.CommentThread);
    if (!posted) return;
    posted.thread.dispose();
    this.posted.delete(posted.thread);
    this.refreshProblems();
  }

  dispose(): void {
    this.clear();
    this.controller.dispose();
    this.problems.dispose();
  }
}
