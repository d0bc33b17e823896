import * as vscode from 'vscode';
import type { PathGuard } from '../../tools/pathGuard';
import { WorkspaceTools } from '../../tools/workspaceTools';
import type { DiffApprover } from './approvals';
import { newId } from '../../common/conversation';
import type { EditorContext } from './editorContext';
import type { ToWebview } from '../../common/chatProtocol';

export type CodeAction = 'copy' | 'insert' | 'save' | 'apply';

interface Deps {
  approver: DiffApprover;
  guard: () => PathGuard;
  editors: EditorContext;
  post: (m: ToWebview) => void;
  /** Whether a reply runs now (its edits and an apply would share the approval). */
  busy: () => boolean;
}

/** The buttons on a code block in an answer: copy, insert at the cursor, save as a file, apply to a file. */
export async function runCodeAction(action: CodeAction, code: string, language: string | undefined, deps: Deps): Promise<void> {
  switch (action) {
    case 'copy':
      await vscode.env.clipboard.writeText(code);
      deps.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Copied.') });
      return;
    case 'insert': {
      const editor = vscode.window.activeTextEditor ?? deps.editors.lastEditor ?? vscode.window.visibleTextEditors[0];
      if (!editor) {
        const doc = await vscode.workspace.openTextDocument({ content: code, language });
        await vscode.window.showTextDocument(doc);
        return;
      }
      await editor.edit((b) => {
        for (const s of editor.selections) b.replace(s, code);
      });
      return;
    }
    case 'save': {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const target = await vscode.window.showSaveDialog({
        defaultUri: folder ? vscode.Uri.joinPath(folder, `snippet.${language || 'txt'}`) : undefined,
        title: vscode.l10n.t('Save code as a new file'),
      });
      if (!target) return;
      await vscode.workspace.fs.writeFile(target, Buffer.from(code, 'utf8'));
      await vscode.window.showTextDocument(target);
      return;
    }
    case 'apply':
      return applyToFile(code, deps);
  }
}

/**
 * *Apply to file*: the code replaces the selection of the file in the editor (or the whole file
 * when nothing is selected), shown as a diff and written only when accepted, through the same
 * approval and path guard as the model's edits.
 */
async function applyToFile(code: string, deps: Deps): Promise<void> {
  const say = (text: string, level: 'info' | 'error' = 'error') => deps.post({ type: 'notice', level, text });
  if (deps.busy()) return say(vscode.l10n.t('Wait for the reply to end (or stop it) before applying code.'), 'info');
  // The file in the editor: a diff or an output view in front of it (not a file) does not hide it.
  const active = vscode.window.activeTextEditor;
  let editor = active?.document.uri.scheme === 'file' ? active : deps.editors.lastEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    const files = await deps.editors.findFiles('');
    const pick = await vscode.window.showQuickPick(
      files.map((f) => f.path),
      { title: vscode.l10n.t('Apply the code to which file?'), placeHolder: vscode.l10n.t('Type to filter the workspace files') },
    );
    if (!pick) return;
    const abs = (await deps.guard().resolve(pick)).abs;
    editor = await vscode.window.showTextDocument(vscode.Uri.file(abs), { preview: true, preserveFocus: true });
  }
  const doc = editor.document;
  const path = vscode.workspace.asRelativePath(doc.uri);
  if (doc.isDirty) return say(vscode.l10n.t('{0} has unsaved changes: save it first, then apply the code.', path));
  const sel = editor.selection;
  const before = doc.getText();
  let after: string;
  // A code block ends with a line break of its own; the file keeps its own ending.
  const block = code.replace(/\n+$/, '');
  if (sel.isEmpty) after = before.endsWith('\n') ? `${block}\n` : block;
  else after = before.slice(0, doc.offsetAt(sel.start)) + block + before.slice(doc.offsetAt(sel.end));
  const tools = new WorkspaceTools(deps.guard(), { approver: deps.approver });
  deps.approver.currentCallId = newId('apply');
  try {
    const result = await tools.proposeContent(path, after);
    say(
      result.content.startsWith('The person rejected') ? vscode.l10n.t('Not applied: {0} is unchanged.', path) : result.content,
      result.isError && !result.content.startsWith('The person rejected') ? 'error' : 'info',
    );
  } finally {
    deps.approver.currentCallId = undefined;
  }
}
