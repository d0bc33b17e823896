import * as vscode from 'vscode';
import { closeTabsShowing } from './proposalTabs';
import { sensitiveReasonOf } from '../../tools/sensitiveFiles';
import type { Approver, ProposedEdit } from '../../tools/workspaceTools';
import type { ActionApprover, ActionDecision, ActionRequest } from '../../runtime/core/approval';
import { inlinePreview, lineDelta, type DiffLine } from '../core/lineDiff';
import { counted } from '../../shell/listeners';

const SCHEME = 'model-gateway-proposal';

type Pending = (
  | { edit: ProposedEdit; action?: undefined; edits?: undefined }
  | { edits: readonly ProposedEdit[]; title: string; edit?: undefined; action?: undefined }
  | { action: ActionRequest; edit?: undefined; edits?: undefined }
) & { resolve: (d: ActionDecision) => void };

/** A pending edit as the chat shows it: which file, what kind, how many lines in and out. */
export interface ApprovalInfo {
  callId: string;
  path: string;
  kind: 'create' | 'edit' | 'command' | 'tool' | 'sampling';
  added: number;
  removed: number;
  /** For a small change: the changed lines with one line of context, shown in the chat itself. */
  preview?: { startLine: number; lines: DiffLine[] };
  /** A file that changes how the editor or the machine behaves: why to look closely (no inline preview then). */
  warning?: string;
  action?: string;
  args?: string;
  price?: string;
  reason?: string;
  always?: string;
  place?: 'sandbox' | 'outside';
  network?: string[];
  /** Edits of several files accepted together (a rename): the files, as tools show them. */
  files?: string[];
}

function actionInfo(callId: string, a: ActionRequest): ApprovalInfo {
  return {
    callId,
    kind: a.kind,
    path: a.where,
    added: 0,
    removed: 0,
    action: a.action,
    reason: a.reason,
    ...(a.args !== undefined ? { args: a.args } : {}),
    ...(a.price ? { price: a.price } : {}),
    ...(a.always ? { always: a.always } : {}),
    ...(a.place ? { place: a.place } : {}),
    ...(a.network?.length ? { network: a.network } : {}),
  };
}

function infoOf(callId: string, edit: ProposedEdit, inlineMax: number): ApprovalInfo {
  const warning = sensitiveReasonOf(edit);
  // A sensitive file is always read in the full diff, whatever its size.
  const preview = warning ? undefined : inlinePreview(edit.before, edit.after, inlineMax);
  return {
    callId,
    path: edit.path.display,
    kind: edit.kind,
    ...lineDelta(edit.before, edit.after),
    ...(preview ? { preview } : {}),
    ...(warning ? { warning } : {}),
  };
}

function changesInfo(callId: string, edits: readonly ProposedEdit[], title: string): ApprovalInfo {
  const warning = edits.map((e) => sensitiveReasonOf(e)).find(Boolean);
  const delta = edits
    .map((e) => lineDelta(e.before, e.after))
    .reduce((a, b) => ({ added: a.added + b.added, removed: a.removed + b.removed }), { added: 0, removed: 0 });
  return { callId, path: title, kind: 'edit', ...delta, files: edits.map((e) => e.path.display), ...(warning ? { warning } : {}) };
}

/**
 * Shows each proposed edit as a diff (`vscode.diff`: the file as it is, against the proposal) and
 * waits for Accept or Reject from the chat panel. Stopping the turn, or closing the panel, counts
 * as a rejection: nothing is written without a yes. Commands and tool calls that need a yes wait
 * here too (`approveAction`), shown in the same bar.
 */
export class DiffApprover implements Approver, ActionApprover, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly pending = new Map<string, Pending>();
  private readonly contents = new Map<string, string>();
  private readonly changesTabs = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private readonly changed = new vscode.EventEmitter<ApprovalInfo | undefined>();
  /** Fires when an approval is requested (with it) or settled (undefined). */
  readonly onDidChangeApprovals = counted('approvals.onDidChangeApprovals', this.changed.event);
  /** The tool call currently being approved; set by the engine's runner before each write. */
  currentCallId: string | undefined;

  /** `inlineMax`: changes of at most this many lines are shown in the chat, not in a diff tab (0: always the tab). */
  constructor(private readonly inlineMax: () => number = () => 0) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(contentKey(uri)) ?? '';
  }

  list(): ApprovalInfo[] {
    return [...this.pending.entries()].map(([callId, p]) =>
      p.edit ? infoOf(callId, p.edit, this.inlineMax()) : p.edits ? changesInfo(callId, p.edits, p.title) : actionInfo(callId, p.action),
    );
  }

  async approve(edit: ProposedEdit, signal?: AbortSignal): Promise<{ accepted: boolean }> {
    const callId = this.currentCallId ?? `edit-${Date.now()}`;
    const decided = new Promise<ActionDecision>((resolve) => {
      this.pending.set(callId, { edit, resolve });
      signal?.addEventListener('abort', () => this.settle(callId, false), { once: true });
    });
    const info = infoOf(callId, edit, this.inlineMax());
    this.changed.fire(info);
    // A small change is read in the chat (Show diff opens the tab); a larger one opens the diff at once.
    if (!info.preview) await this.showDiff(callId).catch(() => undefined);
    return { accepted: (await decided).accepted };
  }

  /** Edits of several files that belong together, shown as one multi-file diff, accepted or rejected as one. */
  async approveAll(edits: readonly ProposedEdit[], title: string, signal?: AbortSignal): Promise<{ accepted: boolean }> {
    const callId = this.currentCallId ?? `edits-${Date.now()}`;
    const decided = new Promise<ActionDecision>((resolve) => {
      this.pending.set(callId, { edits, title, resolve });
      signal?.addEventListener('abort', () => this.settle(callId, false), { once: true });
    });
    this.changed.fire(changesInfo(callId, edits, title));
    await this.showDiff(callId).catch(() => undefined);
    return { accepted: (await decided).accepted };
  }

  approveAction(request: ActionRequest, callId: string | undefined, signal?: AbortSignal): Promise<ActionDecision> {
    const id = callId ?? `action-${Date.now()}`;
    if (signal?.aborted) return Promise.resolve({ accepted: false, always: false });
    const decided = new Promise<ActionDecision>((resolve) => {
      this.pending.set(id, { action: request, resolve });
      signal?.addEventListener('abort', () => this.settle(id, false), { once: true });
    });
    this.changed.fire(actionInfo(id, request));
    return decided;
  }

  async showDiff(callId: string): Promise<void> {
    const p = this.pending.get(callId);
    if (p?.edits) return this.showChanges(callId, p.edits, p.title);
    if (!p?.edit) return;
    const name = p.edit.path.display;
    const proposed = vscode.Uri.from({ scheme: SCHEME, path: `/${callId}/proposed/${name}` });
    this.contents.set(proposed.path, p.edit.after);
    let original: vscode.Uri;
    if (p.edit.kind === 'edit') original = vscode.Uri.file(p.edit.path.abs);
    else {
      original = vscode.Uri.from({ scheme: SCHEME, path: `/${callId}/empty/${name}` });
      this.contents.set(original.path, '');
    }
    // Opened at the first changed line, so the change is on screen without scrolling.
    const firstChange = p.edit.before.split('\n').findIndex((line, i) => line !== p.edit.after.split('\n')[i]);
    const line = Math.max(0, firstChange === -1 ? 0 : firstChange);
    const proposal =
      p.edit.kind === 'create'
        ? vscode.l10n.t('{0}: proposed new file (Accept or Reject: title bar or chat)', name)
        : vscode.l10n.t('{0}: proposed change (Accept or Reject: title bar or chat)', name);
    const title = sensitiveReasonOf(p.edit) ? vscode.l10n.t('⚠ Careful: {0}', proposal) : proposal;
    await vscode.commands.executeCommand('vscode.diff', original, proposed, title, { preview: true, selection: new vscode.Range(line, 0, line, 0) });
  }

  private async showChanges(callId: string, edits: readonly ProposedEdit[], title: string): Promise<void> {
    const resources = edits.map((e) => {
      // The file's own path (the call in the query), so each file of the diff is headed by its name and folder.
      const proposed = vscode.Uri.from({ scheme: SCHEME, path: vscode.Uri.file(e.path.abs).path, query: callId });
      this.contents.set(contentKey(proposed), e.after);
      const file = vscode.Uri.file(e.path.abs);
      return [file, file, proposed] as const;
    });
    const proposal = vscode.l10n.t('{0}: proposed change to {1} files (Accept or Reject in the chat)', title, edits.length);
    const tabTitle = edits.some((e) => sensitiveReasonOf(e)) ? vscode.l10n.t('⚠ Careful: {0}', proposal) : proposal;
    this.changesTabs.set(callId, tabTitle);
    await vscode.commands.executeCommand('vscode.changes', tabTitle, resources);
  }

  /** The pending edit whose proposal a document shows (the diff editor's right side), if any. */
  callIdOf(uri: vscode.Uri | undefined): string | undefined {
    if (!uri || uri.scheme !== SCHEME) return undefined;
    const id = uri.path.split('/')[1];
    return id && this.pending.has(id) ? id : undefined;
  }

  /** `always`: for a command or tool call that offered it, allow its kind from now on (implies accepted). */
  settle(callId: string, accepted: boolean, always = false): boolean {
    const p = this.pending.get(callId);
    if (!p) return false;
    this.pending.delete(callId);
    for (const key of [...this.contents.keys()]) if (key.startsWith(`/${callId}/`) || key.endsWith(`?${callId}`)) this.contents.delete(key);
    const alwaysOffered = always && !!p.action?.always;
    p.resolve({ accepted: accepted || alwaysOffered, always: alwaysOffered });
    this.changed.fire(undefined);
    if (p.edit || p.edits) void this.closeDiff(callId);
    return true;
  }

  /** Closes the proposal's diff tab once the decision is made. */
  private async closeDiff(callId: string): Promise<void> {
    // A multi-file diff's tab is known by its title only.
    const changesTab = this.changesTabs.get(callId);
    this.changesTabs.delete(callId);
    await closeTabsShowing(SCHEME, callId, changesTab);
  }

  rejectAll(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, false);
  }

  dispose(): void {
    this.rejectAll();
    this.registration.dispose();
    this.changed.dispose();
  }
}

function contentKey(uri: vscode.Uri): string {
  return uri.query ? `${uri.path}?${uri.query}` : uri.path;
}
