import { readFile, stat } from 'node:fs/promises';
import * as vscode from 'vscode';
import { chatSettings } from '../../shell/config';
import { fileVerdict } from '../../shell/workspaceGuard';
import { isSecretPath, SecretFileError, type PathGuard } from '../../tools/pathGuard';
import { isBinary, walkWorkspace } from '../../tools/workspaceTools';
import type { ContextAttachment } from '../../common/conversation';
import { rankPaths } from '../core/fuzzy';
import type { ActiveEditorInfo, FileItem, ToWebview } from '../../common/chatProtocol';
import { formatCount } from '../../common/locale';

/** Larger than this, the active file is offered only by its selection. */
const ACTIVE_EDITOR_MAX_CHARS = 100_000;
/** Larger than this, a file is not attached (select the part you need). */
const ATTACH_MAX_CHARS = 200_000;
/** The file list for mentions is walked again after this long, or when files come and go. */
const FILE_LIST_TTL_MS = 30_000;
const FILE_LIST_MAX = 20_000;

/**
 * What the editor adds to a question: the active editor's file or selection (a chip the person
 * can remove), files named with `@`/`#` in the input, and *Add Selection to Chat*. Every path
 * goes through the path guard, as the tools' do.
 */
export class EditorContext implements vscode.Disposable {
  /** The last text editor on a file: focus in the chat view does not make it go away. */
  private last: vscode.TextEditor | undefined;
  private files: { at: number; paths: string[] } | undefined;
  private announceTimer: NodeJS.Timeout | undefined;
  /** The path guard's verdict on the last editor's file (checked when it becomes active). */
  private verdict: { uri: string; withheld?: 'secret' | 'excluded' } | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly post: (m: ToWebview) => void,
    private readonly guard: () => PathGuard,
    /** Asks the person whether a file that may hold secrets is sent anyway (a modal no caller answers). */
    private readonly confirmSecret: (display: string) => Promise<boolean>,
  ) {
    this.track(vscode.window.activeTextEditor);
    const watcher = vscode.workspace.createFileSystemWatcher('**/*', false, true, false);
    this.disposables.push(
      watcher,
      watcher.onDidCreate(() => (this.files = undefined)),
      watcher.onDidDelete(() => (this.files = undefined)),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        this.track(e);
        this.announce();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor === this.last) this.announceSoon();
      }),
      // A closed tab does not close its document at once: the chip follows what is on screen.
      vscode.window.onDidChangeVisibleTextEditors((visible) => {
        if (this.last && !visible.some((e) => e.document === this.last?.document)) {
          this.last = undefined;
          this.announce();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.last?.document === doc) {
          this.last = undefined;
          this.announce();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('modelGateway.chat') || e.affectsConfiguration('files.exclude') || e.affectsConfiguration('search.exclude')) {
          this.verdict = undefined;
          void this.check(this.last);
        }
      }),
    );
  }

  /** The last text editor on a file (the chat's focus does not clear it). */
  get lastEditor(): vscode.TextEditor | undefined {
    return this.last && !this.last.document.isClosed ? this.last : undefined;
  }

  private track(editor: vscode.TextEditor | undefined): void {
    if (editor?.document.uri.scheme === 'file') {
      this.last = editor;
      void this.check(editor);
    }
  }

  /**
   * Whether the path guard lets the file go with questions: in a workspace folder, every rule the
   * tools obey (secrets, .gitignore, excludes, links); elsewhere (a file opened from outside the
   * workspace), the secret-file list.
   */
  private verdictFor(uri: vscode.Uri): Promise<'secret' | 'excluded' | undefined> {
    return fileVerdict(uri, () => this.guard());
  }

  private async check(editor: vscode.TextEditor | undefined): Promise<void> {
    if (!editor) return;
    const uri = editor.document.uri;
    const withheld = await this.verdictFor(uri);
    this.verdict = { uri: uri.toString(), withheld };
    if (editor === this.last) this.announce();
  }

  private announceSoon(): void {
    clearTimeout(this.announceTimer);
    this.announceTimer = setTimeout(() => this.announce(), 150);
  }

  /** Tells the views which file the automatic context chip stands for now. */
  announce(): void {
    this.post({ type: 'active-editor', editor: this.activeInfo() });
  }

  private activeInfo(): ActiveEditorInfo | null {
    const editor = this.last;
    if (!editor || editor.document.isClosed || !chatSettings().attachActiveEditor) return null;
    const doc = editor.document;
    const path = vscode.workspace.asRelativePath(doc.uri);
    const sel = editor.selection;
    const label = sel.isEmpty ? path : `${path}:${sel.start.line + 1}-${sel.end.line + 1}`;
    const length = sel.isEmpty ? doc.getText().length : doc.getText(sel).length;
    // Until the guard has answered for this file, only the secret list (checked at once) decides.
    const verdict =
      this.verdict?.uri === doc.uri.toString() ? this.verdict.withheld : isSecretPath(doc.uri.fsPath, chatSettings().secretFiles) ? 'secret' : undefined;
    return { path, label, tooLarge: length > ACTIVE_EDITOR_MAX_CHARS, ...(verdict ? { withheld: verdict } : {}) };
  }

  /** The active editor's file or selection as the question's context (when its chip was kept and the guard allows it, checked again now). */
  async activeContext(): Promise<ContextAttachment | undefined> {
    const info = this.activeInfo();
    const editor = this.last;
    if (!info || info.tooLarge || info.withheld || !editor) return undefined;
    if (await this.verdictFor(editor.document.uri)) return undefined;
    const sel = editor.selection;
    return { label: info.label, text: sel.isEmpty ? editor.document.getText() : editor.document.getText(sel), language: editor.document.languageId };
  }

  /** *Add Selection to Chat*: the selection, or the whole active file, as an explicit chip (a secret file after a confirmation). */
  async selectionAttachment(): Promise<{ context: ContextAttachment } | { problem: string }> {
    const editor = vscode.window.activeTextEditor ?? this.last;
    if (!editor) return { problem: vscode.l10n.t('Open a file (and select lines) to add it as context.') };
    const doc = editor.document;
    const sel = editor.selection;
    const path = vscode.workspace.asRelativePath(doc.uri);
    if (doc.uri.scheme === 'file' && (await this.verdictFor(doc.uri)) === 'secret' && !(await this.confirmSecret(path)))
      return { problem: vscode.l10n.t('{0} was not attached.', path) };
    const text = sel.isEmpty ? doc.getText() : doc.getText(sel);
    if (text.length > ATTACH_MAX_CHARS) return { problem: vscode.l10n.t('{0} is too large to attach whole; select the part you need.', path) };
    return { context: { label: sel.isEmpty ? path : `${path}:${sel.start.line + 1}-${sel.end.line + 1}`, text, language: doc.languageId } };
  }

  /** A file picked from the `@` list, read through the path guard (a secret file after a confirmation); a reason when it cannot be. */
  async fileAttachment(path: string): Promise<{ context: ContextAttachment } | { problem: string }> {
    try {
      const resolved = await this.guard()
        .resolve(path)
        .catch(async (err: unknown) => {
          if (!(err instanceof SecretFileError) || !(await this.confirmSecret(path))) throw err;
          return this.guard().resolve(path, { allowSecret: true });
        });
      const info = await stat(resolved.abs);
      if (!info.isFile()) return { problem: vscode.l10n.t('{0} is not a file.', resolved.display) };
      if (await isBinary(resolved.abs)) return { problem: vscode.l10n.t('{0} is a binary file; only text files can be attached.', resolved.display) };
      const text = await readFile(resolved.abs, 'utf8');
      if (text.length > ATTACH_MAX_CHARS)
        return {
          problem: vscode.l10n.t(
            '{0} is too large to attach whole ({1} characters; the limit is 200,000). Open it and add a selection instead.',
            resolved.display,
            formatCount(text.length),
          ),
        };
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === resolved.abs);
      return { context: { label: resolved.display, text: doc?.getText() ?? text, language: doc?.languageId } };
    } catch (err) {
      return { problem: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Workspace files for a mention, best match first (the guard's rules decide what is listed). */
  async findFiles(query: string): Promise<FileItem[]> {
    if (!this.files || Date.now() - this.files.at > FILE_LIST_TTL_MS) {
      const paths: string[] = [];
      let guard: PathGuard;
      try {
        guard = this.guard();
      } catch {
        return [];
      }
      for await (const f of walkWorkspace(guard)) {
        paths.push(guard.display(f.folder, f.rel));
        if (paths.length >= FILE_LIST_MAX) break;
      }
      this.files = { at: Date.now(), paths };
    }
    return rankPaths(query, this.files.paths, 20).map((path) => ({ path, name: path.slice(path.lastIndexOf('/') + 1) }));
  }

  dispose(): void {
    clearTimeout(this.announceTimer);
    for (const d of this.disposables) d.dispose();
  }
}
