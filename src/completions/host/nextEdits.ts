import * as vscode from 'vscode';
import { runWithFallback } from '../../runtime/core/fallback';
import { completionsChainAfter, recordFallback } from '../../runtime/host/fallbackChain';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import { booleanSetting, stringSetting } from '../../shell/settingsSchema';
import { userValue } from '../../shell/config';
import type { FeatureSpend } from '../../runtime/host/featureSpend';
import { EditHistory, nextEditRequest, parseNextEdit, type NextEdit } from '../core/nextEdit';
import { languageOn, readCompletionSettings } from './settings';

export const ACCEPT_OR_JUMP_COMMAND = 'modelGateway.nextEdit.acceptOrJump';
export const DISMISS_COMMAND = 'modelGateway.nextEdit.dismiss';
export const TRIGGER_COMMAND = 'modelGateway.nextEdit.trigger';
/** Set while a suggestion stands (Tab and Escape are ours then). */
const VISIBLE_KEY = 'modelGateway.nextEdit.visible';
/** Quiet after the last change before the edit is settled and the model asked. */
const PAUSE_MS = 500;

export interface NextEditSettings {
  enabled: boolean;
  model: string;
}

/** On with completions unless turned off; the model is the person's own setting, else the completions model. */
export function readNextEditSettings(): NextEditSettings {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const completions = readCompletionSettings();
  return {
    // A workspace may turn them off, never on against the person's own setting.
    enabled: completions.enabled && booleanSetting('modelGateway.nextEdits.enabled', userValue(c, 'nextEdits.enabled')) && c.get('nextEdits.enabled') !== false,
    model: stringSetting('modelGateway.nextEdits.model', userValue(c, 'nextEdits.model')) || completions.model,
  };
}

interface Shown {
  document: vscode.TextDocument;
  version: number;
  edit: NextEdit;
  range: vscode.Range;
}

/** What happened to the suggestions (the tests and the bench read it). */
export interface NextEditStats {
  requests: number;
  shown: number;
  accepted: number;
  dismissed: number;
  /** Milliseconds of our own work per request (building it, reading the answer), the request itself left out. */
  overheadMs: number[];
}

/**
 * Next-edit suggestions through the gateway: after each pause in editing, the settled edits and
 * the lines around the cursor go to the model, and the one edit it proposes is drawn where it
 * goes: the replaced text struck through, the replacement after it, an arrow in the gutter. Tab
 * jumps there, Tab again accepts, Escape dismisses; typing anything else drops it.
 */
export class NextEditSuggestions implements vscode.Disposable {
  readonly stats: NextEditStats = { requests: 0, shown: 0, accepted: 0, dismissed: 0, overheadMs: [] };
  private readonly histories = new Map<string, EditHistory>();
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: AbortController | undefined;
  private shown: Shown | undefined;
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly added = vscode.window.createTextEditorDecorationType({});

  constructor(
    private readonly services: GatewayFeature & PriceSource,
    extensionUri: vscode.Uri,
    private readonly spend: FeatureSpend,
    /** Why a file gets no suggestions (secret, ignored), if it gets none. */
    private readonly withheld: (uri: vscode.Uri) => Promise<string | undefined>,
    /** Dollars inline completions spent today (the cap is theirs and these share it). */
    private readonly completionsToday: () => number,
  ) {
    this.removed = vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
      textDecoration: 'line-through',
      gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media', 'next-edit.svg'),
      gutterIconSize: 'contain',
    });
    for (const editor of vscode.window.visibleTextEditors) this.track(editor.document);
    this.disposables.push(
      this.removed,
      this.added,
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        this.clear();
        if (editor) this.track(editor.document);
      }),
      vscode.workspace.onDidOpenTextDocument((d) => this.track(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.histories.delete(d.uri.toString())),
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
    );
  }

  /** The suggestion on screen, if any (the tests read it). */
  get current(): { line: number; text: string } | undefined {
    return this.shown && { line: this.shown.edit.line, text: this.shown.edit.text };
  }

  private track(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    if (this.histories.has(key) || (document.uri.scheme !== 'file' && document.uri.scheme !== 'untitled')) return;
    // A file too large for completions gets no suggestions: its text is not kept a second time.
    const text = document.getText();
    if (text.length <= readCompletionSettings().maxFileChars) this.histories.set(key, new EditHistory(text));
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    if (!e.contentChanges.length || !this.histories.has(e.document.uri.toString())) return;
    if (this.shown?.document === e.document) this.clear();
    clearTimeout(this.timer);
    this.inFlight?.abort();
    if (vscode.window.activeTextEditor?.document !== e.document) return;
    this.timer = setTimeout(() => void this.predict(e.document), PAUSE_MS);
  }

  /**
   * Settles the latest edit and asks for the next one (nothing when off, over the cap, or in a
   * withheld file). After a pause only when the text changed; asked for (`explicit`), from the
   * recent edits as they stand.
   */
  async predict(document: vscode.TextDocument, explicit = false): Promise<NextEdit | undefined> {
    const history = this.histories.get(document.uri.toString());
    if (!history) return undefined;
    const text = document.getText();
    const edit = history.settle(text);
    const s = readNextEditSettings();
    const completions = readCompletionSettings();
    if (!(edit || (explicit && history.recent.length)) || !s.enabled || !s.model || !this.services.isConfigured()) return undefined;
    if (!languageOn(completions.languages, document.languageId) || text.length > completions.maxFileChars) return undefined;
    if (await this.withheld(document.uri)) return undefined;
    if (this.completionsToday() + this.spend.today().dollars >= completions.capDollars) return undefined;
    const editor = vscode.window.activeTextEditor;
    if (editor?.document !== document) return undefined;
    const version = document.version;
    const cursorLine = editor.selection.active.line;
    const began = performance.now();
    const request = nextEditRequest({
      model: s.model,
      path: vscode.workspace.asRelativePath(document.uri),
      language: document.languageId,
      text,
      cursorLine,
      edits: history.recent,
    });
    const abort = new AbortController();
    this.inFlight = abort;
    this.stats.requests++;
    try {
      const sent = performance.now();
      // A busy model hands the suggestion to the next of the completions' chain (all chat models here).
      const asked = await runWithFallback({
        models: [s.model, ...completionsChainAfter(s.model)],
        settings: { rateLimitWaitMs: 0, firstTokenMs: 0 },
        signal: abort.signal,
        onFallback: (f) => recordFallback(this.services, 'next edits', f),
        attempt: (a) => this.services.client().chat.completions.create({ ...request, model: a.model }, { signal: a.signal, retry: a.retry }),
      });
      const reply = asked.value;
      const answered = performance.now();
      void this.spend.add(asked.model, { input: reply.usage?.prompt_tokens ?? 0, output: reply.usage?.completion_tokens ?? 0 });
      const content = reply.choices[0]?.message.content;
      const next = parseNextEdit(typeof content === 'string' ? content : '', text, cursorLine, history.recent);
      this.stats.overheadMs.push(sent - began + (performance.now() - answered));
      if (!next || document.version !== version || abort.signal.aborted) return undefined;
      this.show(document, version, next);
      return next;
    } catch (err) {
      if (!abort.signal.aborted) this.services.log.warn(`next edit: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    } finally {
      if (this.inFlight === abort) this.inFlight = undefined;
    }
  }

  private show(document: vscode.TextDocument, version: number, edit: NextEdit): void {
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === document);
    if (!editor) return;
    const range = new vscode.Range(document.positionAt(edit.start), document.positionAt(edit.end));
    this.shown = { document, version, edit, range };
    this.stats.shown++;
    const hover = new vscode.MarkdownString();
    hover.appendText(vscode.l10n.t('Next edit (Model Gateway): Tab to go there, Tab again to accept, Escape to dismiss.'));
    hover.appendCodeblock(edit.text, document.languageId);
    const firstLine = edit.text.split('\n')[0];
    const more = edit.text.includes('\n') ? ' …' : '';
    editor.setDecorations(this.removed, [{ range, hoverMessage: hover }]);
    editor.setDecorations(this.added, [
      {
        range: new vscode.Range(range.end, range.end),
        hoverMessage: hover,
        renderOptions: {
          after: {
            contentText: ` ${firstLine}${more}`,
            color: new vscode.ThemeColor('editorGhostText.foreground'),
            backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
            margin: '0 0 0 0.5em',
          },
        },
      },
    ]);
    void vscode.commands.executeCommand('setContext', VISIBLE_KEY, true);
  }

  /** The command: a suggestion now, from the edits so far in the active editor. */
  async trigger(): Promise<NextEdit | undefined> {
    const document = vscode.window.activeTextEditor?.document;
    if (!document) return undefined;
    this.track(document);
    clearTimeout(this.timer);
    this.clear();
    return this.predict(document, true);
  }

  /** Tab: to the suggestion when the cursor is elsewhere, else the edit made. */
  async acceptOrJump(): Promise<'jumped' | 'accepted' | undefined> {
    const shown = this.shown;
    const editor = vscode.window.activeTextEditor;
    if (!shown || editor?.document !== shown.document || shown.document.version !== shown.version) {
      this.clear();
      return undefined;
    }
    if (editor.selection.active.line !== shown.range.start.line) {
      editor.selection = new vscode.Selection(shown.range.start, shown.range.start);
      editor.revealRange(shown.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return 'jumped';
    }
    this.clear();
    const done = await editor.edit((b) => b.replace(shown.range, shown.edit.text));
    if (done) {
      this.stats.accepted++;
      const end = shown.document.positionAt(shown.edit.start + shown.edit.text.length);
      editor.selection = new vscode.Selection(end, end);
    }
    return done ? 'accepted' : undefined;
  }

  dismiss(): void {
    if (this.shown) this.stats.dismissed++;
    // Escape means not now: a pause timer or a request on its way would draw another one.
    clearTimeout(this.timer);
    this.inFlight?.abort();
    this.clear();
  }

  private clear(): void {
    if (!this.shown) return;
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document !== this.shown.document) continue;
      editor.setDecorations(this.removed, []);
      editor.setDecorations(this.added, []);
    }
    this.shown = undefined;
    void vscode.commands.executeCommand('setContext', VISIBLE_KEY, false);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.inFlight?.abort();
    this.clear();
    for (const d of this.disposables) d.dispose();
  }
}
