import * as vscode from 'vscode';
import { ToolError, type PathGuard, type ResolvedPath } from '../../tools/pathGuard';
import { str, type ProposedEdit } from '../../tools/workspaceTools';
import { partialNote } from '../core/definitions';
import { applyChanges, newNameProblem, RENAME_LIMITS, renameDone } from '../core/rename';
import { VisiblePaths } from './visible';
import type { Navigation } from './navigation';

/** A rename as the person is asked to accept it: every file's edit, and what the tool says once written. */
export interface ProposedRename {
  edits: ProposedEdit[];
  done: string;
  /** Files where the name appears that the server's rename leaves out while its project may not cover them: the person is shown them before accepting. */
  missed?: string[];
}

/**
 * Renames through the language server's rename provider (F2). The whole `WorkspaceEdit` becomes one
 * proposal of whole-file edits; a rename that would touch a file the chat may not change (outside
 * the workspace, ignored, secret), or a file with unsaved changes, is refused whole: nothing is
 * half-renamed.
 */
export class Renamer {
  constructor(
    private readonly navigation: Navigation,
    private readonly guard: () => PathGuard,
  ) {}

  async propose(args: Record<string, unknown>): Promise<ProposedRename> {
    const symbol = str(args, 'symbol')!.trim();
    const newName = str(args, 'new_name')!.trim();
    const bad = newNameProblem(newName);
    if (bad) throw new ToolError(bad);
    if (newName === symbol) throw new ToolError(`new_name is the same as the symbol ("${symbol}"); nothing to rename.`);
    const spot = await this.navigation.locate(args);
    const ask = async () => {
      try {
        return await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>('vscode.executeDocumentRenameProvider', spot.uri, spot.position, newName);
      } catch (err) {
        // The server's own refusal ("You cannot rename this element.") is what the model needs to read.
        throw new ToolError(
          `The language server cannot rename "${symbol}" at ${spot.display}:${spot.position.line + 1}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    };
    // A server still loading its project answers from its open files only (tsserver's partial
    // server). While it gets ready, an answer that reaches a file nobody opened is already whole.
    let ready = false;
    const readied = this.navigation.ready(spot.uri).then(() => (ready = true));
    let edit = await ask();
    while (!ready && !(edit?.entries() ?? []).some(([uri]) => !vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()))) {
      await Promise.race([readied, new Promise((r) => setTimeout(r, 1000))]);
      edit = await ask();
    }
    // Checked against the text: files where the name appears that the server's edit leaves out are
    // opened (the server loads them) and it is asked once more; what it still leaves out while its
    // project may not cover them is named to the person in the proposal and to the model.
    const visible = new VisiblePaths(this.guard());
    const checked = await this.navigation.crossCheck(
      symbol,
      spot.uri,
      ask,
      async (e) => (await Promise.all((e?.entries() ?? []).map(([uri]) => visible.of(uri)))).filter((p): p is string => !!p),
      { answer: edit },
    );
    edit = checked.answer;
    const missed = checked.missed.map((m) => ({ path: m.display, line: m.line, text: m.text }));
    const entries = edit?.entries() ?? [];
    if (entries.length === 0)
      throw new ToolError(`No language server renames "${symbol}" at ${spot.display}:${spot.position.line + 1}. Use replace_in_file for each use instead.`);
    if (entries.length > RENAME_LIMITS.files)
      throw new ToolError(`Renaming "${symbol}" would change ${entries.length} files (more than ${RENAME_LIMITS.files}); nothing was renamed.`);
    const guard = this.guard();
    const refused: string[] = [];
    const planned: { p: ResolvedPath; doc: vscode.TextDocument; changes: vscode.TextEdit[] }[] = [];
    for (const [uri, changes] of entries) {
      const p = uri.scheme === 'file' ? await guard.resolve(uri.fsPath).catch(() => undefined) : undefined;
      if (!p || (await guard.isIgnored(p, false))) {
        refused.push(p?.display ?? 'a file outside the workspace');
        continue;
      }
      const doc = await vscode.workspace.openTextDocument(uri);
      if (doc.isDirty) throw new ToolError(`${p.display} has unsaved changes in the editor; the person should save or revert it first. Nothing was renamed.`);
      planned.push({ p, doc, changes });
    }
    if (refused.length) {
      throw new ToolError(
        `Renaming "${symbol}" would also change ${refused.length} file${refused.length === 1 ? '' : 's'} the chat may not edit (outside the workspace, ignored, or holding secrets); nothing was renamed.`,
      );
    }
    const edits: ProposedEdit[] = [];
    const files: { path: string; changes: number }[] = [];
    for (const { p, doc, changes } of planned) {
      const before = doc.getText();
      let after: string;
      try {
        after = applyChanges(
          before,
          changes.map((c) => ({ start: doc.offsetAt(c.range.start), end: doc.offsetAt(c.range.end), newText: c.newText })),
        );
      } catch (err) {
        throw new ToolError(`The language server's rename of ${p.display} cannot be applied (${(err as Error).message}); nothing was renamed.`);
      }
      if (after === before) continue;
      edits.push({ kind: 'edit', path: p, before, after });
      files.push({ path: p.display, changes: changes.length });
    }
    if (edits.length === 0) throw new ToolError(`Renaming "${symbol}" to "${newName}" changes nothing.`);
    const note = partialNote({ name: symbol, why: checked.why, missed });
    return {
      edits,
      done: [renameDone(symbol, newName, files), note ? `${note}\nThose places were not renamed.` : ''].filter(Boolean).join('\n\n'),
      ...(missed.length ? { missed: [...new Set(missed.map((m) => m.path))] } : {}),
    };
  }
}
