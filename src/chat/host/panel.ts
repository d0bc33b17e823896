import * as vscode from 'vscode';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { EditorInsight } from '../../editor/host/feature';
import type { ApprovalInfo } from './approvals';
import { receiveChecked, webviewHtml } from '../../shell/webviewPage';
import { describeError } from '../../shell/errors';
import type { PricedFeature } from '../../shell/services';
import type { SearchService } from '../../search/host/searchService';
import { runCodeAction } from './codeActions';
import type { ContextAttachment } from '../../common/conversation';
import { EditorContext } from './editorContext';
import { fromWebviewSchema, type FromWebview, type ToWebview } from '../../common/chatProtocol';
import { ChatSession } from './session';

/**
 * The chat's views: the side-bar webview and, on request, an editor tab showing the same
 * conversation. Every message from a view is checked against the protocol, logged by its type
 * (never its content) and handed to the session; what the session says goes to every view.
 */
export class ChatController implements vscode.WebviewViewProvider, vscode.Disposable {
  private readonly webviews = new Set<vscode.Webview>();
  private editorPanel: vscode.WebviewPanel | undefined;
  private readonly session: ChatSession;
  private readonly editors: EditorContext;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly services: PricedFeature,
    private readonly context: vscode.ExtensionContext,
    search?: SearchService,
    private readonly agent?: AgentToolbox,
    editor?: EditorInsight,
  ) {
    const post = (m: ToWebview) => this.post(m);
    this.session = new ChatSession(services, context, post, search, agent, editor);
    this.editors = new EditorContext(
      post,
      () => this.session.guard(),
      (display) =>
        services.prompts.confirm(
          vscode.l10n.t('{0} may hold credentials or keys. Send it to the gateway with your question?', display),
          vscode.l10n.t(
            'Files such as .env, private keys and credential files are never read by the chat on its own. Attach this one only if the gateway and the model may see what it holds.',
          ),
          vscode.l10n.t('Attach Anyway'),
        ),
    );
    this.disposables.push(this.session, this.editors);
  }

  // ---------- the session, for commands and tests ----------

  get current() {
    return this.session.current;
  }

  newConversation(): Promise<void> {
    return this.session.newConversation();
  }

  send(text: string, images: Parameters<ChatSession['send']>[1], context: ContextAttachment[], options?: Parameters<ChatSession['send']>[3]): Promise<void> {
    return this.session.send(text, images, context, options);
  }

  retry(): Promise<void> {
    return this.session.retry();
  }

  stop(): void {
    this.session.stop();
  }

  /** What waits for the person's decision now (edits, commands, tool calls). */
  pendingApprovals(): ApprovalInfo[] {
    return this.session.approver.list();
  }

  /** A decision as the view's buttons send it (Accept/Run, Reject, Always allow). */
  decide(callId: string, accepted: boolean, always = false): boolean {
    const settled = this.session.approver.settle(callId, accepted, always);
    // Said even when it was settled already (a stale button): the view stops waiting for it.
    this.post({ type: 'approval-done', callId });
    return settled;
  }

  /** Condense from the command palette: why not, if it could not, as a notification. */
  /** Model Gateway: Edit Memory. */
  editMemory(): Promise<void> {
    return this.session.memory.edit();
  }

  async condense(): Promise<void> {
    const why = await this.session.condenseNow();
    if (why) void vscode.window.showWarningMessage(why);
  }

  /** Condense, answering why not (tests and the view's button). */
  condenseNow(): Promise<string | undefined> {
    return this.session.condenseNow();
  }

  /** Opens a saved conversation, as the history list does. */
  open(id: string): Promise<boolean> {
    return this.session.open(id);
  }

  /** The chat mode (Agent, Ask, Plan), as the picker sets it. */
  setMode(mode: string): Promise<void> {
    return this.session.setMode(mode);
  }

  get mode(): string {
    return this.session.currentMode();
  }

  /** Approve a Plan-mode answer's plan, as its button does. */
  approvePlan(turnId: string): Promise<void> {
    return this.session.approvePlan(turnId);
  }

  /** Undo one accepted change (every file of a rename), as the card's Undo does. */
  undoEdit(turnId: string, callId: string): Promise<void> {
    return this.session.restoreEdits({ type: 'undo-edit', turnId, callId });
  }

  pickModel(): Promise<void> {
    return this.session.pickModel();
  }

  decideActiveProposal(accepted: boolean): boolean {
    return this.session.decideActiveProposal(accepted);
  }

  /** *Add Selection to Chat*: the selection or the active file as a chip, and the chat in view. */
  async addContext(): Promise<void> {
    const got = await this.editors.selectionAttachment();
    if ('problem' in got) {
      this.post({ type: 'notice', level: 'info', text: got.problem });
      return;
    }
    this.post({ type: 'attach', images: [], context: [got.context] });
    if (!this.editorPanel?.visible) await vscode.commands.executeCommand('modelGateway.chat.focus');
  }

  // ---------- views ----------

  resolveWebviewView(view: vscode.WebviewView): void {
    this.attach(view.webview, view);
  }

  /** Opens the same conversation in an editor tab (room to read and work; both stay in step). */
  openInEditor(): void {
    if (this.editorPanel) {
      this.editorPanel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel('modelGateway.chatEditor', vscode.l10n.t('Model Gateway Chat'), vscode.ViewColumn.Active, {
      retainContextWhenHidden: true,
    });
    panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'media', 'chat.svg');
    this.editorPanel = panel;
    this.attach(panel.webview, panel);
    panel.onDidDispose(() => (this.editorPanel = undefined));
  }

  private attach(webview: vscode.Webview, owner: { onDidDispose: vscode.Event<void> }): void {
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    webview.options = { enableScripts: true, localResourceRoots: [dist] };
    webview.html = this.html(webview, owner === this.editorPanel ? 'editor' : 'view');
    this.webviews.add(webview);
    const subscription = receiveChecked(webview, fromWebviewSchema(), 'chat view', this.services.log, (m) => this.receive(m));
    this.disposables.push(
      subscription,
      owner.onDidDispose(() => {
        this.webviews.delete(webview);
        subscription.dispose();
      }),
    );
  }

  /** `place`: the side-bar view has New Chat in its title bar; the editor tab shows its own. */
  private html(webview: vscode.Webview, place: 'view' | 'editor'): string {
    return webviewHtml(webview, this.context.extensionUri, {
      title: vscode.l10n.t('Model Gateway Chat'),
      stylesheets: [
        ['dist', 'codicons', 'codicon.css'],
        ['dist', 'chat.css'],
      ],
      allow: { img: ['data:'] },
      bodyAttributes: { 'data-place': place },
      body: '<div id="app"></div>',
      scripts: [['dist', 'webview.js']],
    });
  }

  private post(m: ToWebview): void {
    for (const w of this.webviews) void w.postMessage(m);
  }

  private async receive(m: FromWebview): Promise<void> {
    // The type only, never the content: a trace of what the person did, for support and tests.
    this.services.log.info(`chat view: ${m.type}`);
    try {
      await this.handle(m);
    } catch (err) {
      this.services.log.error(`chat: ${m.type} failed`, err);
      const message = describeError(this.services, err).message;
      if ('requestId' in m) this.post({ type: 'result', requestId: m.requestId, ok: false, message });
      this.post({ type: 'notice', level: 'error', text: message });
    }
  }

  private async handle(m: FromWebview): Promise<void> {
    const s = this.session;
    switch (m.type) {
      case 'ready':
        await s.pushState();
        return this.editors.announce();
      case 'send': {
        const at = m.replaces ? (s.current?.turns.findIndex((t) => t.id === m.replaces && t.role === 'user') ?? -1) : -1;
        if (m.replaces && at === -1)
          return this.post({ type: 'notice', level: 'error', text: vscode.l10n.t('That question is no longer in this conversation.') });
        const active = m.activeEditor ? await this.editors.activeContext() : undefined;
        const context = active && !m.context.some((c) => c.label === active.label) ? [active, ...m.context] : m.context;
        return s.send(m.text, m.images, context, at >= 0 ? { replacesFrom: at } : {});
      }
      case 'queued':
        return s.queued(m.action, m.id);
      case 'fork':
        return s.fork(m.turnId);
      case 'background':
        // The Agent Sessions feature's command (the chat does not depend on it).
        await vscode.commands.executeCommand('modelGateway.agentSessions.start', m.text);
        return;
      case 'condense': {
        const why = await s.condenseNow();
        return this.post({ type: 'result', requestId: m.requestId, ok: !why, ...(why ? { message: why } : {}) });
      }
      case 'stop':
        return s.stop();
      case 'retry':
        return s.retry();
      case 'continue-with':
        return s.continueWith(m.turnId, m.model);
      case 'new-conversation':
        return s.newConversation();
      case 'open-conversation': {
        const ok = await s.open(m.id);
        return this.post({ type: 'result', requestId: m.requestId, ok, ...(ok ? {} : { message: vscode.l10n.t('That conversation could not be read.') }) });
      }
      case 'rename-conversation':
        await s.rename(m.id, m.title);
        return this.post({ type: 'result', requestId: m.requestId, ok: true });
      case 'delete-conversation':
        await s.delete(m.id);
        return this.post({ type: 'result', requestId: m.requestId, ok: true });
      case 'set-model':
        return s.setModel(m.model);
      case 'set-format':
        return s.setFormat(m.format);
      case 'set-mode':
        return s.setMode(m.mode);
      case 'approve-plan':
        return s.approvePlan(m.turnId);
      case 'add-context':
        return this.addContext();
      case 'find-files': {
        // MCP resources join the files, after them (attached the same way).
        const resources = this.agent?.contextSource?.resourceItems(m.query) ?? [];
        return this.post({ type: 'files', requestId: m.requestId, items: [...(await this.editors.findFiles(m.query)), ...resources] });
      }
      case 'find-prompts':
        return this.post({
          type: 'files',
          requestId: m.requestId,
          items: [...(this.agent?.customizations?.promptItems(m.query) ?? []), ...(this.agent?.contextSource?.promptItems(m.query) ?? [])],
        });
      case 'use-prompt':
        return this.usePrompt(m.id);
      case 'attach-file': {
        if (m.path.startsWith('mcp:') && this.agent?.contextSource) {
          const got = await this.agent.contextSource
            .readResource(m.path)
            .catch((err: unknown) => ({ problem: err instanceof Error ? err.message : String(err) }));
          if (!got) return;
          if ('problem' in got) return this.post({ type: 'notice', level: 'error', text: got.problem });
          return this.post({ type: 'attach', images: [], context: [{ label: got.label, text: got.text.slice(0, 1024 * 1024) }] });
        }
        const got = await this.editors.fileAttachment(m.path);
        if ('problem' in got) return this.post({ type: 'notice', level: 'error', text: got.problem });
        return this.post({ type: 'attach', images: [], context: [got.context] });
      }
      case 'code-action':
        return runCodeAction(m.action, m.code, m.language, {
          approver: s.approver,
          guard: () => s.guard(),
          editors: this.editors,
          post: (x) => this.post(x),
          busy: () => s.busy,
        });
      case 'approval':
        return void this.decide(m.callId, m.accepted, m.always === true);
      case 'show-diff':
        return s.approver.showDiff(m.callId);
      case 'toggle-pause':
        return s.togglePause();
      case 'open-file':
        return s.openFile(m.path, m.line);
      case 'undo-edit':
      case 'restore-turn':
        return s.restoreEdits(m);
      case 'run-command':
        return void (await vscode.commands.executeCommand(m.command));
    }
  }

  /** An MCP prompt picked with `/`: its arguments asked, its text put in the input to edit or send. */
  async usePrompt(id: string): Promise<void> {
    try {
      // A prompt file of the workspace: its text, in the mode it names.
      const file = this.agent?.customizations?.usePrompt(id);
      if (file) {
        if (file.mode) await this.session.setMode(file.mode);
        this.post({
          type: 'set-draft',
          text: file.text,
          note: file.mode
            ? vscode.l10n.t('From the prompt file {0} (mode: {1}): edit it or send it.', id.replace(/^prompt-file:/, ''), this.session.currentMode())
            : vscode.l10n.t('From the prompt file {0}: edit it or send it.', id.replace(/^prompt-file:/, '')),
        });
        return;
      }
      const text = await this.agent?.contextSource?.usePrompt(id);
      if (text !== undefined) this.post({ type: 'set-draft', text, note: vscode.l10n.t('From the MCP prompt {0}: edit it or send it.', id) });
    } catch (err) {
      this.post({ type: 'notice', level: 'error', text: err instanceof Error ? err.message : String(err) });
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
