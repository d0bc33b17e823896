import { join } from 'node:path';
import * as vscode from 'vscode';
import { chatSettings, modelOverride } from '../../shell/config';
import { workspaceGuard } from '../../shell/workspaceGuard';
import type { PricedFeature } from '../../shell/services';
import type { SearchService } from '../../search/host/searchService';
import type { PathGuard } from '../../tools/pathGuard';
import type { EditorInsight } from '../../editor/host/feature';
import {
  emptyUsage,
  newId,
  resolveFormat,
  type AssistantTurn,
  type Conversation,
  type FormatChoice,
  type ImageAttachment,
  type UserTurn,
} from '../../common/conversation';
import { viewTurn, type FixAction, type ToWebview, type ViewState } from '../../common/chatProtocol';
import { planMarkdown } from '../../runtime/core/plan';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import { questionRefusal, toolsAllowed } from '../../runtime/host/turnChecks';
import { DiffApprover } from './approvals';
import { ChatChoices, type Readiness } from './chatChoices';
import { ChatTurns, turnFixes } from './chatTurn';
import { Condenser } from './condensing';
import { ConversationHistory, viewCondensation } from './conversations';
import { ChatMemory } from './memory';
import { MessageQueue } from './messageQueue';
import { EditRestorer } from './restore';
import { continueCheck } from '../core/fallbackChoices';
import { ChatPrompt } from './turnPrompt';

/** Waits shorter than this (a busy gateway's quick retry) pass without a word in the chat. */
const RETRY_NOTICE_MS = 5000;

/**
 * The chat view's state: one conversation open at a time, persisted per workspace
 * (`ConversationHistory`); the model and mode picked (`ChatChoices`); the answer running
 * (`ChatTurns`, which runs it through the runtime) and the messages sent meanwhile
 * (`MessageQueue`); edits approved against a real diff and undone (`DiffApprover`,
 * `EditRestorer`). It tells every view what changed through `post`; the views (side bar, editor
 * tab) are `ChatController`'s.
 */
export class ChatSession implements vscode.Disposable {
  readonly approver = new DiffApprover(() => chatSettings().inlineDiffMaxLines);
  /** What the agent was asked to remember: read into every request's system prompt, beside the rules. */
  readonly memory: ChatMemory;
  private readonly history: ConversationHistory;
  private readonly choices: ChatChoices;
  private readonly prompt: ChatPrompt;
  private readonly turns: ChatTurns;
  private readonly queue: MessageQueue;
  private readonly condenser: Condenser;
  private readonly restorer: EditRestorer;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly services: PricedFeature,
    context: vscode.ExtensionContext,
    private readonly post: (m: ToWebview) => void,
    search?: SearchService,
    private readonly agent?: AgentToolbox,
    editor?: EditorInsight,
  ) {
    const base = context.storageUri ?? context.globalStorageUri;
    this.history = new ConversationHistory(join(base.fsPath, 'conversations'), context.workspaceState, services);
    this.memory = new ChatMemory(
      context.globalStorageUri.fsPath,
      () => this.guard(),
      (line) => services.log.warn(line),
    );
    this.restorer = new EditRestorer(services, () => this.guard());
    this.choices = new ChatChoices(services, context.workspaceState, agent, () => this.pushState());
    this.prompt = new ChatPrompt(services, () => this.guard(), this.memory, { agent, search, editor });
    this.queue = new MessageQueue(services, post, () => this.pushState());
    this.turns = new ChatTurns({
      services,
      approver: this.approver,
      agent,
      search,
      editor,
      prompt: this.prompt,
      memory: this.memory,
      guard: () => this.guard(),
      post,
      save: (c) => this.history.save(c),
      pushState: () => this.pushState(),
      takeSteering: () => this.queue.takeSteering(),
    });
    this.condenser = new Condenser(services, {
      readiness: () => this.readiness(),
      format: (model) => this.choices.format(model),
      save: (c) => this.history.save(c),
      forgetMeasure: () => this.prompt.forgetMeasure(),
      pushState: () => this.pushState(),
    });
    this.disposables.push(
      this.prompt,
      this.restorer,
      this.approver,
      this.approver.onDidChangeApprovals((a) => {
        if (a) this.post({ type: 'approval', ...a });
      }),
      services.onDidChangeConnection(() => {
        this.choices.forget();
        void this.pushState();
      }),
      // A reply that waits for the gateway's rate limit says so (new-api's own limiter asks for a
      // minute or more), with the gateway's words, instead of a silent spinner.
      services.onDidRetry((r) => {
        if (this.busy && r.waitMs >= RETRY_NOTICE_MS)
          this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Waiting {0} s before trying again: {1}', Math.ceil(r.waitMs / 1000), r.reason) });
      }),
    );
    if (agent)
      this.disposables.push(
        agent.onDidChange(() => void this.pushState()),
        agent.onNotice((text) => this.post({ type: 'notice', level: 'info', text })),
      );
  }

  /** Pause (or resume) everything that runs without asking. */
  async togglePause(): Promise<void> {
    if (this.agent) await this.agent.setPaused(!this.agent.paused);
  }

  /** Whether a turn is running now. */
  get busy(): boolean {
    return this.turns.busy;
  }

  /** The conversation on screen (read-only use: tests and commands). */
  get current(): Conversation | undefined {
    return this.history.current;
  }

  guard(): PathGuard {
    return workspaceGuard();
  }

  async pushState(): Promise<void> {
    // After a reload, reopen the conversation the person was in.
    await this.history.remember();
    await this.choices.load();
    const model = this.choices.model();
    const choice = this.choices.formatChoice(model);
    const conversations = await this.history.list();
    const mode = this.choices.mode();
    const c = this.history.current;
    const fixes: Record<string, FixAction[]> = {};
    for (const t of c?.turns ?? []) if (t.role === 'assistant' && t.status === 'error') fixes[t.id] = turnFixes(t, this.services);
    const state: ViewState = {
      models: this.choices.models,
      model,
      formatChoice: choice,
      mode,
      modes: this.choices.modes(),
      format: this.choices.format(model, choice),
      toolsEnabled: toolsAllowed(),
      configured: this.services.isConfigured(),
      busy: this.busy,
      conversations: conversations.map((s) => ({ id: s.id, title: s.title, updatedAt: s.updatedAt })),
      conversation: c ? { id: c.id, title: c.title, turns: c.turns.map(viewTurn), condensations: (c.condensations ?? []).map(viewCondensation) } : undefined,
      fixes,
      pendingApprovals: this.approver.list(),
      context: this.prompt.contextUse(c, model, mode),
      ...(this.agent && toolsAllowed() ? { unasked: { ...this.agent.unasked(), waiting: this.agent.contextSource?.waitingServers() ?? [] } } : {}),
      ...this.queue.view(),
    };
    this.post({ type: 'state', state });
  }

  // ---------- the model and the mode ----------

  /** The chat mode (Agent, Ask, Plan, or a custom agent of the workspace), per workspace like the model. */
  currentMode(): string {
    return this.choices.mode();
  }

  async setMode(mode: string): Promise<void> {
    await this.choices.setMode(mode);
    await this.pushState();
  }

  async setModel(model: string): Promise<void> {
    await this.choices.setModel(model);
    await this.pushState();
  }

  async setFormat(format: FormatChoice): Promise<void> {
    await this.choices.setFormat(format);
    await this.pushState();
  }

  async pickModel(): Promise<void> {
    if (await this.choices.pick()) await this.pushState();
  }

  /** The model to answer with, or why a turn cannot start now (said to the person). */
  private readiness(): Promise<Readiness> {
    if (this.busy) return Promise.resolve({ text: vscode.l10n.t('A reply is still running: wait for it or press Stop.') });
    return this.choices.ready();
  }

  // ---------- conversations ----------

  /** Condense by hand (`Condenser`); why not, when it could not. */
  condenseNow(): Promise<string | undefined> {
    return this.condenser.condense(this.history.current, this.busy);
  }

  /** The running answer is stopped and the queued messages dropped: another conversation opens. */
  private leave(): void {
    if (this.busy) this.stop();
    this.queue.clear();
  }

  async newConversation(): Promise<void> {
    this.leave();
    this.history.fresh();
    await this.pushState();
  }

  /** Opens a saved conversation; false (said to the person) when it cannot be read. */
  async open(id: string): Promise<boolean> {
    this.leave();
    if (!(await this.history.open(id))) {
      this.post({ type: 'notice', level: 'error', text: vscode.l10n.t('That conversation could not be read.') });
      return false;
    }
    await this.pushState();
    return true;
  }

  /**
   * Fork from here: a new conversation with the turns up to this answer (`ConversationHistory.fork`),
   * opened. The files stay as they are.
   */
  async fork(turnId: string): Promise<void> {
    const c = this.history.current;
    const at = c?.turns.findIndex((t) => t.id === turnId && t.role === 'assistant') ?? -1;
    if (!c || at < 0) return;
    if (this.busy && at === c.turns.length - 1) {
      this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Wait for the reply to end (or stop it) before forking from it.') });
      return;
    }
    const fork = await this.history.fork(c, at);
    this.leave();
    this.history.current = fork;
    this.prompt.forgetMeasure();
    await this.pushState();
  }

  async rename(id: string, title: string): Promise<void> {
    await this.history.rename(id, title);
    await this.pushState();
  }

  async delete(id: string): Promise<void> {
    if (this.history.current?.id === id && this.busy) this.stop();
    await this.history.delete(id);
    await this.pushState();
  }

  // ---------- turns ----------

  stop(): void {
    this.turns.stop();
  }

  /**
   * Accept or Reject from the diff editor's title bar. Only the proposal in the active tab is
   * decided (what the person is looking at), whatever a caller passes.
   */
  decideActiveProposal(accepted: boolean): boolean {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const callId = input instanceof vscode.TabInputTextDiff ? this.approver.callIdOf(input.modified) : undefined;
    if (!callId) return false;
    this.approver.settle(callId, accepted);
    this.post({ type: 'approval-done', callId });
    return true;
  }

  /** Approve a plan (a Plan-mode answer's): switch to Agent and have it carried out. */
  async approvePlan(turnId: string): Promise<void> {
    const turn = this.history.current?.turns.find((t): t is AssistantTurn => t.id === turnId && t.role === 'assistant');
    if (!turn?.plan?.length || this.busy) return;
    await this.setMode('agent');
    await this.send(`Carry out this plan, step by step, keeping it up to date with update_plan:\n\n${planMarkdown(turn.plan)}`, [], []);
  }

  async retry(): Promise<void> {
    const c = this.history.current;
    if (!c || this.busy) return;
    const turns = c.turns;
    const userAt = turns[turns.length - 1]?.role === 'assistant' ? turns.length - 2 : turns.length - 1;
    const user = turns[userAt];
    if (user?.role !== 'user') return;
    // The question and its failed answer leave only once the new turn is sure to start.
    await this.send(user.text, user.images, user.context, { replacesFrom: userAt });
  }

  /**
   * Continue with the next model of the chain, after an answer stopped mid-way on a busy one: only
   * the model the engine offered on that turn (`error.continueWith`), never one the view names
   * otherwise. The chat's model becomes it (as the model menu does) and it is asked to go on.
   */
  async continueWith(turnId: string, model: string): Promise<void> {
    const check = continueCheck(this.history.current?.turns ?? [], turnId, model);
    if ('refused' in check || this.busy) {
      this.services.log.warn(`chat: continue-with refused (${'refused' in check ? check.refused : 'busy'})`);
      this.post({
        type: 'notice',
        level: 'info',
        text: this.busy
          ? vscode.l10n.t('A reply is still running: wait for it or press Stop.')
          : vscode.l10n.t('That answer can no longer be continued with {0}.', model),
      });
      return;
    }
    await this.setModel(model);
    await this.send(vscode.l10n.t('Continue from where the last answer stopped.'), [], []);
  }

  /** A question that was not sent goes back into the input, with the reason. */
  private notSent(text: string, images: ImageAttachment[], context: UserTurn['context'], reason: string): void {
    this.services.log.info(`chat: not sent: ${reason}`);
    this.post({ type: 'restore-draft', text, images, context, reason });
  }

  async send(text: string, images: ImageAttachment[], context: UserTurn['context'], options: { replacesFrom?: number } = {}): Promise<void> {
    // Sent while a turn runs: queued, and sent when it ends (or steered into it).
    if (this.busy && options.replacesFrom === undefined) return this.queue.add(text, images, context);
    // The customization files as they are now (a file watcher can miss a change): a few small reads.
    await this.agent?.customizations
      ?.refresh()
      .catch((err: unknown) => this.services.log.warn(`chat: the customization files could not be read (${err instanceof Error ? err.message : String(err)})`));
    const ready = await this.readiness();
    if ('text' in ready) return this.notSent(text, images, context, ready.text);
    if ('failure' in ready) {
      if (options.replacesFrom !== undefined) this.history.current?.turns.splice(options.replacesFrom);
      const now = Date.now();
      const conversation = this.history.start(text, now);
      const model = this.choices.model();
      // The next attempt reads the list again (the key may have been fixed meanwhile).
      this.choices.forget();
      return this.turns.failedBeforeStart(conversation, { id: newId('u'), role: 'user', text, images, context, at: now }, model, ready.failure);
    }
    const { model } = ready;
    const override = modelOverride(this.services.settings().modelOverrides, model);
    const now = Date.now();
    const userTurn: UserTurn = { id: newId('u'), role: 'user', text, images, context, at: now };
    const refused = questionRefusal(this.services, model, override, () => this.prompt.nextRequest(this.choices.mode(), this.history.current), userTurn);
    if (refused) return this.notSent(text, images, context, refused);
    const settings = chatSettings();
    const format = resolveFormat(model, this.choices.formatChoice(model), settings.pattern, await this.services.formatFactsReady(model));
    const conversation = this.history.start(text, now);
    if (options.replacesFrom !== undefined) conversation.turns.splice(options.replacesFrom);
    const mode = this.choices.mode();
    const turn: AssistantTurn = {
      id: newId('a'),
      role: 'assistant',
      model,
      format,
      steps: [],
      status: 'streaming',
      usage: emptyUsage(),
      at: now,
      ...(mode !== 'agent' ? { mode } : {}),
    };
    conversation.turns.push(userTurn, turn);
    conversation.updatedAt = now;
    await this.turns.answer(conversation, turn, settings, override);
    // The next queued message is sent, unless the person stopped this one (then they stay).
    const hold = turn.status === 'stopped' || this.busy;
    const next = this.queue.next(hold);
    if (hold && this.queue.size > 0) await this.pushState();
    if (next) await this.send(next.text, next.images, next.context);
  }

  /** Edit (back into the input), remove, or steer (into the running turn's next request) a queued message. */
  queued(action: 'edit' | 'remove' | 'steer', id: string): Promise<void> {
    return this.queue.act(action, id);
  }

  async restoreEdits(m: { type: 'undo-edit'; turnId: string; callId: string } | { type: 'restore-turn'; turnId: string }): Promise<void> {
    const conversation = this.history.current;
    const turn = conversation?.turns.find((t): t is AssistantTurn => t.id === m.turnId && t.role === 'assistant');
    if (!conversation || !turn) return;
    if (this.busy) {
      this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Wait for the reply to end (or stop it) before undoing its edits.') });
      return;
    }
    const call = m.type === 'undo-edit' ? turn.steps.flatMap((s) => s.toolCalls).find((c) => c.id === m.callId) : undefined;
    const done = m.type === 'undo-edit' ? (call ? await this.restorer.undo(call) : false) : await this.restorer.restoreTurn(turn);
    if (!done) return;
    await this.history.save(conversation);
    this.post({ type: 'turn', turn: viewTurn(turn), fixes: turnFixes(turn, this.services) });
    this.post({
      type: 'notice',
      level: 'info',
      text: m.type === 'undo-edit' ? vscode.l10n.t('The change was undone.') : vscode.l10n.t('The files are back to before this turn.'),
    });
  }

  /** Opens a workspace file named in the chat, at a line; the path guard decides what may open. */
  async openFile(path: string, line?: number): Promise<void> {
    let abs: string;
    try {
      abs = (await this.guard().resolve(path)).abs;
    } catch (err) {
      this.post({ type: 'notice', level: 'error', text: err instanceof Error ? err.message : String(err) });
      return;
    }
    const at = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(vscode.Uri.file(abs), { selection: new vscode.Range(at, at), preview: true });
  }

  dispose(): void {
    this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
