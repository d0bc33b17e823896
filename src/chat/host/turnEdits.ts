import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { objectArgs } from '../../runtime/host/toolCalls';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import { editsRunUnasked } from '../../runtime/core/toolPolicy';
import type { AssistantTurn, ToolCallRecord } from '../../common/conversation';
import { RENAME_SYMBOL } from '../../editor/core/rename';
import type { EditorInsight } from '../../editor/host/feature';
import type { Baseline } from '../../editor/host/problemWatch';
import { ripgrepPath } from '../../shell/ripgrep';
import type { PathGuard } from '../../tools/pathGuard';
import { WorkspaceTools, type ProposedEdit, type ToolResult } from '../../tools/workspaceTools';
import type { DiffApprover } from './approvals';

/** What the edits of a turn need of it. */
export interface TurnEditsOptions {
  guard: PathGuard;
  approver: DiffApprover;
  agent?: AgentToolbox;
  editor?: EditorInsight;
  /** The running turn: accepted edits and their problems are kept on its tool calls. */
  turn: () => AssistantTurn | undefined;
  /** An edit's problems came after its result: its card and result changed (maybe after the turn ended). */
  onLateProblems?: () => void;
  log: (line: string) => void;
}

/**
 * The workspace's files for one turn, and its edits: approved (or written unasked, as the runtime's
 * policy says), written through the editor's copy of an open file, kept on their tool call for Undo
 * and Restore, then checked: an accepted edit waits for the problems it introduced, which go into
 * its result and its card.
 */
export class TurnEdits {
  readonly files: WorkspaceTools;
  private readonly written = new Map<string, { uri: vscode.Uri; content: string }[]>();
  /** What was known of each accepted edit's files right before the write (by call id). */
  private readonly baselines = new Map<string, Baseline>();
  /** Problems that came after their edit's result went back: said with the next tool result of the turn. */
  private readonly lateNotes: string[] = [];

  constructor(private readonly o: TurnEditsOptions) {
    const { agent, approver } = o;
    const unasked = (edits: readonly ProposedEdit[]) => !!agent && editsRunUnasked(edits, agent.consent());
    this.files = new WorkspaceTools(o.guard, {
      // Edits are written without the Accept step only when the person turned that on (each can still be undone).
      // A file that changes how the editor or the machine behaves (.vscode/, CI, hooks, scripts) always asks.
      approver: {
        approve: (edit, signal) => this.decide([edit], () => (unasked([edit]) ? Promise.resolve({ accepted: true }) : approver.approve(edit, signal)), signal),
        approveAll: (edits, title, signal) =>
          this.decide(edits, () => (unasked(edits) ? Promise.resolve({ accepted: true }) : approver.approveAll(edits, title, signal)), signal),
      },
      rgPath: ripgrepPath(),
      writeExisting: writeThroughEditor,
      // An accepted write is kept on its tool call: Undo and Restore put the file back from it.
      onWritten: (edit) => {
        const call = callOf(o.turn(), approver.currentCallId);
        const record = { path: edit.path.display, before: edit.kind === 'create' ? null : edit.before, after: edit.after };
        if (call?.name === RENAME_SYMBOL.name) (call.edits ??= []).push(record);
        else if (call) call.edit = record;
        const id = approver.currentCallId;
        if (id) this.written.set(id, [...(this.written.get(id) ?? []), { uri: vscode.Uri.file(edit.path.abs), content: edit.after }]);
      },
    });
  }

  /**
   * The files' language server loads them while the person reads the diff; once accepted, what it
   * knows of them is taken right before the write.
   */
  private async decide(edits: readonly ProposedEdit[], ask: () => Promise<{ accepted: boolean; note?: string }>, signal: AbortSignal | undefined) {
    const uris = edits.map((e) => vscode.Uri.file(e.path.abs));
    const id = this.o.approver.currentCallId;
    if (this.o.editor && id) this.o.editor.problems.prepare(uris);
    const decision = await ask();
    if (decision.accepted && this.o.editor && id) this.baselines.set(id, await this.o.editor.problems.beforeWrite(uris, signal));
    return decision;
  }

  /** The late problems not said yet, appended to a result (and then forgotten). */
  withLateNotes(result: ToolResult): ToolResult {
    if (this.lateNotes.length === 0) return result;
    return { ...result, content: `${result.content}\n\n${this.lateNotes.splice(0).join('\n\n')}` };
  }

  /** A write tool's call (`write` makes the edit through the editor's features), with the problems it introduced after it. */
  async write(
    name: string,
    args: string,
    signal: AbortSignal | undefined,
    callId: string | undefined,
    write: (editor: EditorInsight) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const { approver, editor } = this.o;
    approver.currentCallId = callId;
    if (!editor || !callId) return this.files.run(name, args, signal);
    // Problems after the edit: what was known before the write (taken once accepted), then the edited files' once they settle.
    const result = await write(editor);
    const files = this.written.get(callId);
    const before = this.baselines.get(callId);
    this.baselines.delete(callId);
    if (result.isError || !files || !before) return result;
    const call = callOf(this.o.turn(), callId);
    try {
      let said = '';
      const { report, text } = await editor.problems.afterWrite(files, before, signal, (late) => {
        // The server's first report came after the result went back: the card, the kept result and the model learn it.
        this.o.log(
          `chat: problems after ${name}, reported late: ${late.report.introduced.length + late.report.more} new, ${late.report.fixed} fixed (${late.report.lateMs ?? 0} ms after the write)`,
        );
        if (!call || call.undone) return;
        call.problems = late.report;
        if (call.result && said) call.result = call.result.replace(said, late.text);
        said = late.text;
        if (this.o.turn()) this.lateNotes.push(`Note on your earlier ${name} call (${callId}), now checked: ${late.text}`);
        this.o.onLateProblems?.();
      });
      said = text;
      if (call) call.problems = report;
      this.o.log(
        `chat: problems after ${name}: ${report.introduced.length + report.more} new, ${report.fixed} fixed (${report.settled}${report.unchecked ? `, not checked: ${report.unchecked.length} file(s)` : ''}, ${report.waitedMs} ms)`,
      );
      return { content: `${result.content}\n\n${text}`, isError: false };
    } catch (err) {
      this.o.log(`chat: the problems after ${name} could not be read: ${err instanceof Error ? err.message : String(err)}`);
      return result;
    }
  }
}

/** The tool call of the turn with this id. */
export function callOf(turn: AssistantTurn | undefined, callId: string | undefined): ToolCallRecord | undefined {
  return callId ? turn?.steps.flatMap((s) => s.toolCalls).find((c) => c.id === callId) : undefined;
}

/**
 * An accepted edit of a file open in the editor goes through its copy and is saved: the editor
 * (and its language servers) see it at once, not when a file watcher notices. A copy with unsaved
 * changes of the person's is left alone (the file is written on disk, as for closed files).
 */
async function writeThroughEditor(abs: string, content: string): Promise<boolean> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === abs);
  // Only a copy in a plain editor tab: a diff's side (the approval's, closing as it is decided) is not one.
  const inTab = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === abs));
  if (!doc || doc.isDirty || !inTab) return false;
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end), content);
  if (!(await vscode.workspace.applyEdit(edit)) || !(await doc.save())) return false;
  // Saved means on disk; anything else is written there by the caller.
  return (await readFile(abs, 'utf8').catch(() => undefined)) === content;
}

/** A rename: the language server's edit, proposed as one change of every file it touches. */
export async function renameSymbol(editor: EditorInsight, files: WorkspaceTools, rawArgs: string, signal: AbortSignal | undefined): Promise<ToolResult> {
  try {
    const args = objectArgs(rawArgs);
    if (!args) return { content: `Error: the arguments are not a JSON object: ${rawArgs.slice(0, 200)}`, isError: true };
    const { edits, done, missed } = await editor.renamer.propose(args);
    // The files the language server left out are in the proposal's title: the person accepts knowing them.
    const title = missed?.length
      ? vscode.l10n.t(
          "Rename {0} to {1} (not in the language server's rename, left unchanged: {2})",
          String(args.symbol),
          String(args.new_name),
          missed.join(', '),
        )
      : vscode.l10n.t('Rename {0} to {1}', String(args.symbol), String(args.new_name));
    return await files.applyAllIfApproved(edits, title, signal, done);
  } catch (err) {
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
