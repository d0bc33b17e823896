import * as vscode from 'vscode';
import { closeTabsShowing } from './proposalTabs';
import type { PromptSource, LogSource } from '../../shell/services';
import { PathGuard } from '../../tools/pathGuard';
import { applyRestore, planRestore, type RestoreStep } from '../core/checkpoints';
import { editsOf, type AssistantTurn, type ToolCallRecord } from '../../common/conversation';

const SCHEME = 'model-gateway-restore';

/**
 * Undo of one accepted edit, and "Restore to before this turn", for the chat. Shows what will be
 * restored (a multi-file diff), asks, then writes; files changed since are named in the question.
 */
export class EditRestorer implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  private previews = 0;

  constructor(
    private readonly services: PromptSource & LogSource,
    private readonly guard: () => PathGuard,
  ) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  /** Undoes one tool call's edit; true when the file was put back. */
  undo(call: ToolCallRecord): Promise<boolean> {
    const edits = editsOf(call);
    if (edits.length === 0 || call.undone) return Promise.resolve(false);
    return this.restore(
      [call],
      edits.length === 1 ? vscode.l10n.t('Undo the change to {0}?', edits[0].path) : vscode.l10n.t('Undo the change to {0} files?', edits.length),
      vscode.l10n.t('Undo'),
    );
  }

  /** Restores every file the turn changed to what it was before the turn. */
  restoreTurn(turn: AssistantTurn): Promise<boolean> {
    const calls = turn.steps.flatMap((s) => s.toolCalls).filter((c) => editsOf(c).length > 0 && !c.undone);
    const paths = new Set(calls.flatMap((c) => editsOf(c).map((e) => e.path)));
    return calls.length
      ? this.restore(
          calls,
          paths.size === 1
            ? vscode.l10n.t('Restore {0} to before this turn?', [...paths][0])
            : vscode.l10n.t('Restore {0} files to before this turn?', paths.size),
          vscode.l10n.t('Restore'),
        )
      : Promise.resolve(false);
  }

  private async restore(calls: ToolCallRecord[], question: string, action: string): Promise<boolean> {
    const steps = await planRestore(this.guard(), calls.flatMap(editsOf));
    const preview = await this.preview(steps);
    // The preview tab goes once the person answered, whatever the answer.
    try {
      return await this.confirmAndRestore(calls, steps, question, action);
    } finally {
      await closeTabsShowing(SCHEME, preview.id, preview.title);
    }
  }

  private async confirmAndRestore(calls: ToolCallRecord[], steps: RestoreStep[], question: string, action: string): Promise<boolean> {
    const removed = steps.filter((s) => s.restoreTo === null).map((s) => s.path);
    const changed = steps.filter((s) => s.changedSince).map((s) => s.path);
    const detail = [
      steps.length === 1 ? vscode.l10n.t('1 file: {0}.', steps[0].path) : vscode.l10n.t('{0} files: {1}.', steps.length, steps.map((s) => s.path).join(', ')),
      removed.length ? vscode.l10n.t('Created by this turn, removed: {0}.', removed.join(', ')) : '',
      changed.length ? vscode.l10n.t('Changed since the edit (those changes are lost): {0}.', changed.join(', ')) : '',
    ]
      .filter(Boolean)
      .join('\n');
    if (!(await this.services.prompts.confirm(question, detail, action))) return false;
    await applyRestore(steps);
    for (const c of calls) c.undone = true;
    this.services.log.info(`restored ${steps.length} file(s) to before accepted edits`);
    return true;
  }

  /** The changes a restore makes, as one multi-file diff (now → after the restore). */
  private async preview(steps: readonly RestoreStep[]): Promise<{ id: string; title: string }> {
    const id = String(++this.previews);
    const resources = steps.map((s) => {
      const after = vscode.Uri.from({ scheme: SCHEME, path: `/${id}/restored/${s.path}` });
      this.contents.set(after.path, s.restoreTo ?? '');
      const now = s.current === null ? vscode.Uri.from({ scheme: SCHEME, path: `/${id}/missing/${s.path}` }) : vscode.Uri.file(s.abs);
      return [vscode.Uri.file(s.abs), now, after] as const;
    });
    const title = vscode.l10n.t('Restore: the files as they are → as they will be');
    await vscode.commands.executeCommand('vscode.changes', title, resources).then(undefined, () => undefined);
    return { id, title };
  }

  dispose(): void {
    this.registration.dispose();
  }
}
