import { join } from 'node:path';
import * as vscode from 'vscode';
import { chatSettings, modelOverride, type ChatSettings, type ModelOverride } from '../../shell/config';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { describeError } from '../../shell/errors';
import { factsOf, fixesFor } from '../../common/fixes';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import type { SearchService } from '../../search/host/searchService';
import type { PathGuard } from '../../tools/pathGuard';
import { DiffApprover } from './approvals';
import { activeCondensation, emptyUsage, isChatModel, newId, resolveFormat, titleFrom, type AssistantTurn, type Condensation, type Conversation, type FormatChoice, type ImageAttachment, type TurnCost, type UserTurn } from '../../common/conversation';
import { fitToWindow, manualCut, promptLimit, type ContextUse } from '../../runtime/core/budget';
import { condense } from '../../runtime/core/condense';
import type { TurnLimit } from '../../runtime/core/engine';
import { runModelTurn } from '../../runtime/host/modelTurn';
import { IMAGE_TOKENS, tokensOf } from '../../runtime/core/tokens';
import { userText } from '../../runtime/core/wire';
import { systemPrompt } from '../../runtime/core/prompt';
import { ProjectRules } from '../../runtime/host/projectRules';
import { viewTurn, type FixAction, type ToWebview, type ViewState } from '../../common/chatProtocol';
import { EditRestorer } from './restore';
import { ConversationStore } from '../core/store';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { EditorInsight } from '../../editor/host/feature';
import { builtInModes, modeOf, modePrompt, toolsForMode } from '../../runtime/core/modes';
import type { ToolDefinition } from '../../tools/workspaceTools';
import { planMarkdown } from '../../runtime/core/plan';
import { allDefinitions, offerScope, turnTools } from './turnTools';
import { subagentHost } from './subagentHost';
import { answerCost, CostMeter } from '../../runtime/host/cost';
import { modelProfile, scaleOf, windowOf } from '../../runtime/host/modelProfile';
import { ChatMemory } from './memory';
import { memorySection } from '../core/memory';
import { calledTools, ToolOffer, userTexts } from '../../runtime/core/toolOffer';

/** Waits shorter than this (a busy gateway's quick retry) pass without a word in the chat. */
const RETRY_NOTICE_MS = 5000;

/** The buttons that fix a failed turn: the shared error→fix map, as the chat offers them. */
export function turnFixes(turn: AssistantTurn, services: PricedFeature): FixAction[] {
  if (!turn.error) return [];
  return fixesFor({ ...turn.error }, { hasBaseUrl: !!services.settings().baseUrl, place: 'chat' });
}

/**
 * The chat's state and turns: one conversation open at a time, persisted per workspace; turns run
 * by the engine with the workspace tools; edits approved against a real diff. It tells every view
 * what changed through `post`; the views (side bar, editor tab) are `ChatController`'s.
 */
export class ChatSession implements vscode.Disposable {
  private conversation: Conversation | undefined;
  private running: { abort: AbortController; turn: AssistantTurn } | undefined;
  private models: string[] = [];
  readonly approver = new DiffApprover(() => chatSettings().inlineDiffMaxLines);
  private readonly restorer: EditRestorer;
  private readonly store: ConversationStore;
  private readonly disposables: vscode.Disposable[] = [];
  private lastTurnPost = 0;
  /** Set once the last conversation was restored (or a new one asked for). */
  private startedFresh = false;
  /** How the last request used the context window (the meter), for the conversation it was in. */
  private lastContext: { conversationId: string; use: ContextUse } | undefined;
  /** Set while Condense (by hand) runs. */
  private condensing = false;

  /** The project's rules files (trusted workspaces only), and what the last request carried of them. */
  private readonly rules = new ProjectRules(() => this.guard());
  private rulesSent: { section: string; inUse: { path: string; tokens: number; memory?: boolean }[] } = { section: '', inUse: [] };
  /** What the agent was asked to remember: read into every request's system prompt, beside the rules. */
  readonly memory: ChatMemory;

  constructor(
    private readonly services: PricedFeature,
    private readonly context: vscode.ExtensionContext,
    private readonly post: (m: ToWebview) => void,
    private readonly search?: SearchService,
    private readonly agent?: AgentToolbox,
    private readonly editor?: EditorInsight,
  ) {
    const base = context.storageUri ?? context.globalStorageUri;
    this.store = new ConversationStore(join(base.fsPath, 'conversations'));
    this.memory = new ChatMemory(context.globalStorageUri.fsPath, () => this.guard(), (line) => services.log.warn(line));
    this.restorer = new EditRestorer(services, () => this.guard());
    this.disposables.push(
      this.rules,
      this.restorer,
      this.approver,
      this.approver.onDidChangeApprovals((a) => {
        if (a) this.post({ type: 'approval', ...a });
      }),
      services.onDidChangeConnection(() => {
        this.models = [];
        void this.pushState();
      }),
      // A reply that waits for the gateway's rate limit says so (new-api's own limiter asks for a
      // minute or more), with the gateway's words, instead of a silent spinner.
      services.onDidRetry((r) => {
        if (this.running && r.waitMs >= RETRY_NOTICE_MS) this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Waiting {0} s before trying again: {1}', Math.ceil(r.waitMs / 1000), r.reason) });
      }),
    );
    if (agent) this.disposables.push(agent.onDidChange(() => void this.pushState()), agent.onNotice((text) => this.post({ type: 'notice', level: 'info', text })));
  }

  /** Pause (or resume) everything that runs without asking. */
  async togglePause(): Promise<void> {
    if (this.agent) await this.agent.setPaused(!this.agent.paused);
  }

  /** Whether a turn is running now. */
  get busy(): boolean {
    return !!this.running;
  }


  private currentModel(): string {
    // A custom agent's model, when the gateway lists it (VS Code's names, "GPT-4o (copilot)", are not the gateway's ids).
    const mode = this.currentMode();
    const wanted = mode.startsWith('custom:') ? this.agent?.customizations?.modelOf(mode) : undefined;
    if (wanted && this.models.includes(wanted)) return wanted;
    const chosen = this.context.workspaceState.get<string>('modelGateway.chat.model');
    return chosen || this.services.settings().defaultModels.chat || this.models[0] || '';
  }

  private formatChoice(model: string): FormatChoice {
    return this.context.workspaceState.get<FormatChoice>(`modelGateway.chat.format:${model}`) ?? 'auto';
  }

  /** The chat mode (Agent, Ask, Plan, or a custom agent of the workspace), per workspace like the model. */
  currentMode(): string {
    return this.knownMode(this.context.workspaceState.get<string>('modelGateway.chat.mode'));
  }

  /** A custom agent's id while its file is there; else the built-in mode the id names (Agent for none). */
  private knownMode(id: string | undefined): string {
    return id?.startsWith('custom:') && this.agent?.customizations?.modePrompt(id) !== undefined ? id : modeOf(id);
  }

  async setMode(mode: string): Promise<void> {
    await this.context.workspaceState.update('modelGateway.chat.mode', this.knownMode(mode));
    await this.pushState();
  }

  /** The tools a request of this mode carries: the built-in mode's, narrowed to a custom agent's list. */
  private definitionsFor(mode: string): ToolDefinition[] {
    const defs = toolsForMode(modeOf(mode), allDefinitions({ agent: this.agent, search: this.search, editor: this.editor }));
    const customs = this.agent?.customizations;
    const scope = offerScope(defs, mode.startsWith('custom:') && customs ? (d) => customs.toolsOf(mode, d) : undefined);
    // As the next request of this conversation would carry them: the core, then what it loaded.
    const c = this.current;
    return new ToolOffer({ ...scope, mode: modeOf(mode), loaded: c?.toolsLoaded ?? calledTools(c?.turns ?? []), defer: chatSettings().findTools }).offered();
  }

  /** What the system prompt says of the mode and of the workspace's skills. */
  private modeText(mode: string): string {
    const custom = mode.startsWith('custom:') ? this.agent?.customizations?.modePrompt(mode) : undefined;
    return [custom ?? modePrompt(modeOf(mode)), this.agent?.customizations?.skillsPrompt() ?? ''].filter(Boolean).join('\n\n');
  }

  /** Approve a plan (a Plan-mode answer's): switch to Agent and have it carried out. */
  async approvePlan(turnId: string): Promise<void> {
    const turn = this.conversation?.turns.find((t): t is AssistantTurn => t.id === turnId && t.role === 'assistant');
    if (!turn?.plan?.length || this.running) return;
    await this.setMode('agent');
    await this.send(`Carry out this plan, step by step, keeping it up to date with update_plan:\n\n${planMarkdown(turn.plan)}`, [], []);
  }

  private toolsEnabled(): boolean {
    return vscode.workspace.isTrusted && (vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === 'file');
  }

  /** Why the model list could not be read (a refused key, an unreachable gateway), if it could not. */
  private modelsError: unknown;

  private async loadModels(): Promise<void> {
    if (this.models.length > 0 || !this.services.isConfigured()) return;
    try {
      this.models = (await this.services.client().models.list()).map((m) => m.id).filter(isChatModel).sort();
      // The price list also says which wire formats each model speaks (the format shown before a send).
      void this.services.prices.book().then(
        () => this.pushState(),
        () => undefined,
      );
      this.modelsError = undefined;
    } catch (err) {
      this.modelsError = err;
      this.services.log.error('chat: could not list models', err);
    }
  }

  async pushState(): Promise<void> {
    // After a reload, reopen the conversation the person was in.
    if (!this.conversation && !this.startedFresh) {
      const last = this.context.workspaceState.get<string>('modelGateway.chat.current');
      if (last) this.conversation = await this.store.load(last);
      this.startedFresh = true;
      if (this.conversation) stopInterrupted(this.conversation);
    }
    await this.context.workspaceState.update('modelGateway.chat.current', this.conversation?.id);
    await this.loadModels();
    const model = this.currentModel();
    const choice = this.formatChoice(model);
    const conversations = await this.store.list();
    const fixes: Record<string, FixAction[]> = {};
    for (const t of this.conversation?.turns ?? []) if (t.role === 'assistant' && t.status === 'error') fixes[t.id] = turnFixes(t, this.services);
    const state: ViewState = {
      models: this.models,
      model,
      formatChoice: choice,
      mode: this.currentMode(),
      modes: [...builtInModes(), ...(this.agent?.customizations?.modes() ?? [])],
      format: resolveFormat(model, choice, chatSettings().pattern, this.services.formatFacts(model)),
      toolsEnabled: this.toolsEnabled(),
      configured: this.services.isConfigured(),
      busy: !!this.running,
      conversations: conversations.map((c) => ({ id: c.id, title: c.title, updatedAt: c.updatedAt })),
      conversation: this.conversation
        ? { id: this.conversation.id, title: this.conversation.title, turns: this.conversation.turns.map(viewTurn), condensations: (this.conversation.condensations ?? []).map(viewCondensation) }
        : undefined,
      fixes,
      pendingApprovals: this.approver.list(),
      context: this.contextUse(model),
      ...(this.agent && this.toolsEnabled() ? { unasked: { ...this.agent.unasked(), waiting: this.agent.contextSource?.waitingServers() ?? [] } } : {}),
      ...(this.queue.length > 0 ? { queued: this.queue.map((q) => ({ id: q.id, text: q.text, steer: q.steer, images: q.images.length })) } : {}),
    };
    this.post({ type: 'state', state });
  }

  /** The meter: the last request's use of the window, or an estimate of the next one (after a reload). */
  private contextUse(model: string): ContextUse | undefined {
    const c = this.conversation;
    if (!c || !model) return undefined;
    if (this.lastContext?.conversationId === c.id) return this.lastContext.use;
    const { system, tools } = this.promptParts();
    return this.withRules(fitToWindow({ system, toolsText: tools, turns: c.turns, window: this.windowOf(model), scale: this.scaleOf(model), condensation: activeCondensation(c) }).use);
  }

  /** The meter's figures with the rules files the request carried (shown as chips). */
  private withRules(use: ContextUse): ContextUse {
    return this.rulesSent.inUse.length ? { ...use, rules: this.rulesSent.inUse } : use;
  }

  /** The system prompt and tool definitions as the next request would carry them (for estimates). */
  private promptParts(): { system: string; tools: string } {
    const tools = this.toolsEnabled() ? JSON.stringify(this.definitionsFor(this.currentMode())) : '';
    const system = systemPrompt({ folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.name), toolsEnabled: !!tools, editor: undefined, rules: this.rulesSent.section, mode: this.modeText(this.currentMode()), findTools: chatSettings().findTools });
    return { system, tools };
  }

  private windowOf(model: string): number {
    return windowOf(this.services, model);
  }

  private scaleOf(model: string): number {
    return scaleOf(model);
  }

  /**
   * Why a question cannot be sent to this model at all, if so: with its attachments it alone
   * takes more than the window leaves for the prompt (budgeting can shorten history, not it).
   */
  private tooLarge(model: string, question: UserTurn): string | undefined {
    const { system, tools } = this.promptParts();
    const scale = this.scaleOf(model);
    const needed = Math.ceil((tokensOf(system) + tokensOf(tools) + tokensOf(userText(question))) * scale) + question.images.length * IMAGE_TOKENS;
    const room = promptLimit(this.windowOf(model), modelOverride(this.services.settings().modelOverrides, model).maxOutputTokens);
    if (needed <= room) return undefined;
    const k = (n: number) => `${Math.round(n / 100) / 10}k`;
    const what = question.context.length + question.images.length > 0 ? vscode.l10n.t('Remove attachments (or attach a selection instead of the whole file)') : vscode.l10n.t('Shorten it');
    return vscode.l10n.t('This question needs about {0} tokens with the system prompt and tools; {1} has room for about {2} (its window of {3} less the room for the answer). {4}, or pick a model with a larger window. Nothing was sent.', k(needed), model, k(room), k(this.windowOf(model)), what);
  }

  /** A question that was not sent goes back into the input, with the reason. */
  private notSent(text: string, images: ImageAttachment[], context: UserTurn['context'], reason: string): void {
    this.services.log.info(`chat: not sent: ${reason}`);
    this.post({ type: 'restore-draft', text, images, context, reason });
  }

  /**
   * Condense by hand: the model summarises all but the newest exchange (or the only one); from then
   * on the summary is sent in their place. The turns stay on screen and on disk, with the summary
   * shown where it was made. Returns why not, when it could not.
   */
  async condenseNow(): Promise<string | undefined> {
    const c = this.conversation;
    if (this.running || this.condensing) return vscode.l10n.t('Wait for the reply to end before condensing.');
    if (!c || c.turns.length === 0) return vscode.l10n.t('There is nothing to condense yet.');
    const cut = manualCut(c.turns, activeCondensation(c));
    if (!cut) return vscode.l10n.t('Everything before the newest exchange is already condensed.');
    const ready = await this.readiness();
    if ('text' in ready) return ready.text;
    if ('failure' in ready) return describeError(this.services, ready.failure).message;
    const model = ready.model;
    this.condensing = true;
    try {
      const { condensation } = await condense({
        client: this.services.client(),
        model,
        format: resolveFormat(model, this.formatChoice(model), chatSettings().pattern, this.services.formatFacts(model)),
        turns: c.turns,
        cut,
        current: activeCondensation(c),
        window: this.windowOf(model),
        manual: true,
        serverCompaction: modelProfile(this.services, model, { purpose: 'chat' }).options.serverCompaction,
      });
      (c.condensations ??= []).push(condensation);
      c.updatedAt = Date.now();
      this.lastContext = undefined;
      await this.store.save(c);
      this.services.log.info(`chat: condensed by hand (${condensation.tokensBefore} → ${condensation.tokensAfter} tokens)`);
      await this.pushState();
      return undefined;
    } catch (err) {
      return vscode.l10n.t('The conversation could not be condensed: {0}', redact(describeError(this.services, err).message));
    } finally {
      this.condensing = false;
    }
  }

  async newConversation(): Promise<void> {
    if (this.running) this.stop();
    this.queue = [];
    this.conversation = undefined;
    this.startedFresh = true;
    await this.pushState();
  }

  /** Opens a saved conversation; false (said to the person) when it cannot be read. */
  async open(id: string): Promise<boolean> {
    if (this.running) this.stop();
    this.queue = [];
    const c = await this.store.load(id);
    if (!c) {
      this.post({ type: 'notice', level: 'error', text: vscode.l10n.t('That conversation could not be read.') });
      return false;
    }
    // A turn left "streaming" by a crash is shown as stopped.
    stopInterrupted(c);
    this.conversation = c;
    await this.pushState();
    return true;
  }

  /**
   * Fork from here: a new conversation with the turns up to this answer (copies: the original is
   * left whole), named after the original, and opened. The files stay as they are; each copied
   * edit keeps what Undo and Restore need. Condensations of the copied turns come along.
   */
  async fork(turnId: string): Promise<void> {
    const c = this.conversation;
    const at = c?.turns.findIndex((t) => t.id === turnId && t.role === 'assistant') ?? -1;
    if (!c || at < 0) return;
    if (this.running && at === c.turns.length - 1) {
      this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Wait for the reply to end (or stop it) before forking from it.') });
      return;
    }
    const turns = structuredClone(c.turns.slice(0, at + 1));
    stopInterrupted({ ...c, turns });
    const kept = new Set(turns.map((t) => t.id));
    const now = Date.now();
    const fork: Conversation = {
      ...structuredClone({ ...c, turns: [], condensations: (c.condensations ?? []).filter((k) => kept.has(k.throughTurnId)) }),
      id: newId('c'),
      title: vscode.l10n.t('{0} (fork)', c.title).slice(0, 200),
      createdAt: now,
      updatedAt: now,
      turns,
      forkOf: { id: c.id, turnId },
    };
    await this.store.save(fork);
    this.services.log.info(`chat: forked a conversation at its turn ${at + 1} of ${c.turns.length}`);
    if (this.running) this.stop();
    this.queue = [];
    this.conversation = fork;
    this.lastContext = undefined;
    await this.pushState();
  }

  async rename(id: string, title: string): Promise<void> {
    await this.store.rename(id, title);
    if (this.conversation?.id === id) this.conversation.title = title;
    await this.pushState();
  }

  async delete(id: string): Promise<void> {
    if (this.conversation?.id === id && this.running) this.stop();
    await this.store.delete(id);
    if (this.conversation?.id === id) this.conversation = undefined;
    await this.pushState();
  }

  async setModel(model: string): Promise<void> {
    await this.context.workspaceState.update('modelGateway.chat.model', model);
    await this.pushState();
  }

  async setFormat(format: FormatChoice): Promise<void> {
    await this.context.workspaceState.update(`modelGateway.chat.format:${this.currentModel()}`, format);
    await this.pushState();
  }

  // ---------- turns ----------

  stop(): void {
    this.running?.abort.abort();
    this.approver.rejectAll();
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

  /** The conversation on screen (read-only use: tests and commands). */
  get current(): Conversation | undefined {
    return this.conversation;
  }

  async retry(): Promise<void> {
    const c = this.conversation;
    if (!c || this.running) return;
    const turns = c.turns;
    const userAt = turns[turns.length - 1]?.role === 'assistant' ? turns.length - 2 : turns.length - 1;
    const user = turns[userAt];
    if (user?.role !== 'user') return;
    // The question and its failed answer leave only once the new turn is sure to start.
    await this.send(user.text, user.images, user.context, { replacesFrom: userAt });
  }

  /** The model to answer with, or why a turn cannot start now (said to the person). */
  private async readiness(): Promise<{ text: string } | { model: string } | { failure: unknown }> {
    if (this.running) return { text: vscode.l10n.t('A reply is still running: wait for it or press Stop.') };
    if (!this.services.isConfigured()) return { text: vscode.l10n.t('Set the gateway URL and API key first (Model Gateway: Set API Key).') };
    await this.loadModels();
    const model = this.currentModel();
    // No model because the gateway refused the list (a wrong key, say): that is the error to show.
    if (!model && this.modelsError !== undefined) return { failure: this.modelsError };
    if (!model) return { text: vscode.l10n.t('No chat model is available: pick one or set modelGateway.defaultModels.chat.') };
    return { model };
  }

  /** A question that could not start: kept, with the reason as its answer's error card. */
  private async failedBeforeStart(text: string, images: ImageAttachment[], context: UserTurn['context'], failure: unknown): Promise<void> {
    const now = Date.now();
    const conversation = (this.conversation ??= { id: newId('c'), title: titleFrom(text || 'Image'), createdAt: now, updatedAt: now, turns: [] });
    const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model: this.currentModel() || '(no model)', format: 'chat', steps: [], status: 'error', usage: emptyUsage(), at: now };
    const facts = factsOf(failure);
    turn.error = { message: redact(facts.message), kind: facts.kind, status: (failure as { status?: number }).status, cause403: facts.cause403, keyRefusal: facts.keyRefusal };
    conversation.turns.push({ id: newId('u'), role: 'user', text, images, context, at: now }, turn);
    conversation.updatedAt = now;
    // The next attempt reads the list again (the key may have been fixed meanwhile).
    this.models = [];
    await this.finishTurn(conversation, turn);
  }

  async send(text: string, images: ImageAttachment[], context: UserTurn['context'], options: { replacesFrom?: number } = {}): Promise<void> {
    // Sent while a turn runs: queued, and sent when it ends (or steered into it).
    if (this.running && options.replacesFrom === undefined) return this.enqueue(text, images, context);
    // The customization files as they are now (a file watcher can miss a change): a few small reads.
    await this.agent?.customizations?.refresh().catch((err: unknown) => this.services.log.warn(`chat: the customization files could not be read (${err instanceof Error ? err.message : String(err)})`));
    const ready = await this.readiness();
    if ('text' in ready) return this.notSent(text, images, context, ready.text);
    if ('failure' in ready) {
      if (options.replacesFrom !== undefined) this.conversation?.turns.splice(options.replacesFrom);
      await this.failedBeforeStart(text, images, context, ready.failure);
      return;
    }
    const { model } = ready;
    const override = modelOverride(this.services.settings().modelOverrides, model);
    if (images.length > 0 && override.imageInput === false) return this.notSent(text, images, context, `${model} takes no image input (modelGateway.modelOverrides): remove the images or pick another model.`);
    const now = Date.now();
    const userTurn: UserTurn = { id: newId('u'), role: 'user', text, images, context, at: now };
    const tooLarge = this.tooLarge(model, userTurn);
    if (tooLarge) return this.notSent(text, images, context, tooLarge);
    const settings = chatSettings();
    const format = resolveFormat(model, this.formatChoice(model), settings.pattern, await this.services.formatFactsReady(model));
    const conversation = (this.conversation ??= { id: newId('c'), title: titleFrom(text || 'Image'), createdAt: now, updatedAt: now, turns: [] });
    if (options.replacesFrom !== undefined) conversation.turns.splice(options.replacesFrom);
    const mode = this.currentMode();
    const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: now, ...(mode !== 'agent' ? { mode } : {}) };
    conversation.turns.push(userTurn, turn);
    conversation.updatedAt = now;
    const abort = new AbortController();
    this.running = { abort, turn };
    const started = Date.now();
    this.services.log.info(`chat: turn started (${model}, ${format})`);
    // One try/finally owns the turn: whatever fails (storage, the view, building the client, the
    // request), the turn ends as an error card with the question kept, and the panel is free.
    try {
      // The question is on disk before the answer starts: a crash loses at most the turn in flight.
      await this.store.save(conversation);
      await this.pushState();
      await this.runTurnOf(conversation, turn, model, format, settings, abort.signal, override);
    } catch (err) {
      turn.status = 'error';
      turn.error = { message: err instanceof Error ? err.message : String(err), kind: err instanceof Error ? err.name : 'Error' };
    } finally {
      this.running = undefined;
      this.approver.rejectAll();
      if (turn.status === 'streaming') turn.status = 'stopped';
      if (turn.error) turn.error.message = redact(turn.error.message);
      turn.cost = await this.costOf(turn, settings.cacheTtl);
      conversation.updatedAt = Date.now();
      this.services.log.info(`chat: turn ended ${turn.status} after ${Date.now() - started} ms, ${turn.steps.length} step(s)`);
      await this.finishTurn(conversation, turn);
    }
    if (turn.usage.output > 0) this.services.notifySpend();
    await this.afterTurn(turn);
  }

  // ---------- messages sent while a turn runs ----------

  /** Messages sent while a turn ran, in order (this window's; a reload forgets them, as an unsent draft). */
  private queue: { id: string; text: string; images: ImageAttachment[]; context: UserTurn['context']; steer: boolean }[] = [];

  private async enqueue(text: string, images: ImageAttachment[], context: UserTurn['context']): Promise<void> {
    this.queue.push({ id: newId('q'), text, images, context, steer: false });
    this.services.log.info(`chat: a message was queued while the reply runs (${this.queue.length} queued)`);
    await this.pushState();
  }

  /** Edit (back into the input), remove, or steer (into the running turn's next request) a queued message. */
  async queued(action: 'edit' | 'remove' | 'steer', id: string): Promise<void> {
    const item = this.queue.find((q) => q.id === id);
    if (!item) return;
    if (action === 'steer') {
      if (item.images.length > 0) {
        this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('A message with images cannot steer the running reply: it is sent when the reply ends.') });
        return;
      }
      item.steer = true;
    } else {
      this.queue = this.queue.filter((q) => q !== item);
      if (action === 'edit') this.post({ type: 'restore-draft', text: item.text, images: item.images, context: item.context, reason: '' });
    }
    await this.pushState();
  }

  /** The steering messages, taken by the running turn for its next request. */
  private takeSteering(): string[] {
    const steer = this.queue.filter((q) => q.steer);
    if (steer.length === 0) return [];
    this.queue = this.queue.filter((q) => !q.steer);
    this.services.log.info(`chat: ${steer.length} steering message(s) added to the next request`);
    void this.pushState();
    return steer.map((q) => userText({ id: q.id, role: 'user', text: q.text, images: [], context: q.context, at: Date.now() }));
  }

  /**
   * A turn ended: the next queued message is sent, unless the person stopped it (then they stay,
   * for the person to send, edit or remove). Steering that came too late for the turn is sent as a
   * message of its own.
   */
  private async afterTurn(turn: AssistantTurn): Promise<void> {
    for (const q of this.queue) q.steer = false;
    if (turn.status === 'stopped' || this.running) {
      if (this.queue.length > 0) await this.pushState();
      return;
    }
    const next = this.queue.shift();
    if (next) await this.send(next.text, next.images, next.context);
  }

  /** A limit of the turn is reached: the person decides whether it goes on for as much again. */
  private async askToGoOn(limit: TurnLimit, settings: ChatSettings): Promise<boolean> {
    const title =
      limit.kind === 'cost'
        ? vscode.l10n.t('This answer has cost ${0}, over its limit of ${1}. Go on?', limit.dollars.toFixed(2), settings.maxCostDollars.toFixed(2))
        : vscode.l10n.t('This answer has made {0} requests, its limit. Go on?', limit.requests);
    const more = limit.kind === 'cost' ? `$${settings.maxCostDollars.toFixed(2)}` : vscode.l10n.t('{0} requests', settings.maxSteps);
    const detail = vscode.l10n.t('Continue allows {0} more; Stop ends the answer here (the tools it asked for are not run). The limits are the settings modelGateway.chat.maxToolSteps and modelGateway.chat.maxCostPerTurnDollars.', more);
    const goOn = await this.services.prompts.confirm(title, detail, vscode.l10n.t('Continue'), 'info');
    this.services.log.info(`chat: the turn reached its ${limit.kind} limit; ${goOn ? 'going on' : 'stopped'}`);
    return goOn;
  }

  /** What an ended answer cost (its subagents included); nothing when it used no tokens, unknown when its model has no price. */
  private async costOf(turn: AssistantTurn, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
    try {
      return await answerCost(this.services, turn, cacheTtl);
    } catch (err) {
      this.services.log.warn(`chat: the answer's cost could not be worked out (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** Saves and shows the ended turn; a failure here is reported, never left as a running turn. */
  private async finishTurn(conversation: Conversation, turn: AssistantTurn): Promise<void> {
    // The walkthrough's "first question" step completes on the first answer.
    if (turn.status === 'done') void vscode.commands.executeCommand('setContext', 'modelGateway.chatAnswered', true);
    try {
      await this.store.save(conversation);
    } catch (err) {
      this.services.log.error('chat: could not save the conversation', err);
      this.post({ type: 'notice', level: 'error', text: vscode.l10n.t('The conversation could not be saved: {0}', describeError(this.services, err).message) });
    }
    this.post({ type: 'turn', turn: viewTurn(turn), fixes: turnFixes(turn, this.services) });
    try {
      await this.pushState();
    } catch (err) {
      this.services.log.error('chat: could not refresh the view', err);
    }
    if (turn.status === 'error' && turn.error) this.services.log.error(`chat turn failed (${turn.error.kind})`, turn.error.message);
  }

  private async runTurnOf(
    conversation: Conversation,
    turn: AssistantTurn,
    model: string,
    format: AssistantTurn['format'],
    settings: ChatSettings,
    signal: AbortSignal,
    override: ModelOverride,
  ): Promise<void> {
    // The answer's running cost (its subagents' as they stream included), for its limit.
    const meter = new CostMeter(this.services, turn, settings.cacheTtl);
    // A model marked without tool calling gets none (some gateways answer 400 to a tools field).
    const mode = modeOf(turn.mode);
    const custom = turn.mode?.startsWith('custom:') ? turn.mode : undefined;
    const tools =
      this.toolsEnabled() && override.toolCalling !== false
        ? turnTools({
            guard: this.guard(),
            approver: this.approver,
            agent: this.agent,
            search: this.search,
            editor: this.editor,
            mode,
            ...(custom && this.agent?.customizations ? { narrow: (defs: ToolDefinition[]) => this.agent!.customizations!.toolsOf(custom, defs) } : {}),
            turn: () => (this.running?.turn === turn ? turn : undefined),
            onChange: () => this.postTurn(turn, true),
            onLateProblems: () => {
              this.postTurn(turn, true);
              this.store.save(conversation).catch((err: unknown) => this.services.log.error('chat: could not save late problems', err));
            },
            log: (line) => this.services.log.info(line),
            subagents: subagentHost({ services: this.services, parentModel: model, settings, answerDollars: () => meter.dollars() }),
            memory: { remember: (args, callId, signal) => this.memory.remember(args, this.approver, callId, signal, conversation) },
            defer: settings.findTools,
            loaded: conversation.toolsLoaded ?? calledTools(conversation.turns),
            named: userTexts(conversation.turns),
            onLoaded: (names) => {
              conversation.toolsLoaded = [...names];
              this.services.log.info(`chat: tools offered from now on in this conversation: ${names.join(', ')}`);
            },
          })
        : undefined;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.name);
    const editor = vscode.window.activeTextEditor;
    const rules = await this.rules.forTurn(filesInPlay(editor, conversation.turns.at(-2)));
    const memory = (await this.memory.read(conversation)).filter((m) => m.facts.length > 0);
    const memoryText = memorySection(memory);
    this.rulesSent = {
      section: [rules.section, memoryText].filter(Boolean).join('\n\n'),
      inUse: [...rules.rules.map((r) => ({ path: r.path, tokens: tokensOf(r.body) })), ...memory.map((m) => ({ path: m.label, tokens: tokensOf(m.facts.join('\n')), memory: true }))],
    };
    if (rules.rules.length) this.services.log.info(`chat: project rules in use: ${rules.rules.map((r) => r.path).join(', ')}`);
    const system = systemPrompt({
      folders,
      toolsEnabled: !!tools,
      editor: editor ? { file: vscode.workspace.asRelativePath(editor.document.uri), language: editor.document.languageId } : undefined,
      rules: this.rulesSent.section,
      mode: this.modeText(turn.mode ?? mode),
      findTools: settings.findTools,
    });
    let lastStepSaved = 0;
    await runModelTurn(this.services, {
      surface: 'chat',
      model,
      format,
      system,
      history: conversation.turns.slice(0, -1),
      turn,
      tools,
      maxSteps: settings.maxSteps,
      costLimit: { dollars: settings.maxCostDollars, meter },
      onLimit: (limit) => this.askToGoOn(limit, settings),
      condensation: activeCondensation(conversation),
      signal,
      steering: () => this.takeSteering(),
      onEvent: (e) => {
        if (e.type === 'text') this.post({ type: 'text', turnId: turn.id, step: turn.steps.length - 1, delta: e.delta });
        else if (e.type === 'context') {
          const use = { ...this.withRules(e.use), ...(tools ? { toolsOffered: tools.definitions.length, toolsDeferred: tools.deferredCount() } : {}) };
          this.lastContext = { conversationId: conversation.id, use };
          this.post({ type: 'context', use });
        } else if (e.type === 'condensed') {
          (conversation.condensations ??= []).push(e.condensation);
          this.services.log.info(`chat: condensed older turns to fit ${model}'s window (${e.condensation.tokensBefore} → ${e.condensation.tokensAfter} tokens)`);
          this.store.save(conversation).catch((err: unknown) => this.services.log.error('chat: could not save the condensed conversation', err));
          void this.pushState();
        } else if (e.type === 'condense-failed') {
          this.services.log.error('chat: could not condense older turns', redact(e.message));
          this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Older turns could not be summarised, so older tool results were left out of what is sent instead. The conversation itself is kept whole.') });
        } else {
          this.postTurn(turn, e.type === 'tool-update' || e.type === 'tool-call' || e.type === 'steered');
          if (e.type === 'step' && e.index > lastStepSaved) {
            lastStepSaved = e.index;
            this.store.save(conversation).catch((err: unknown) => this.services.log.error('chat: could not save a step', err));
          }
        }
      },
    });
  }

  /** Sends the turn's structure (tool cards, status); at most every 100 ms unless forced. */
  private postTurn(turn: AssistantTurn, force: boolean): void {
    const now = Date.now();
    if (!force && now - this.lastTurnPost < 100) return;
    this.lastTurnPost = now;
    this.post({ type: 'turn', turn: viewTurn(turn) });
  }

  async restoreEdits(m: { type: 'undo-edit'; turnId: string; callId: string } | { type: 'restore-turn'; turnId: string }): Promise<void> {
    const conversation = this.conversation;
    const turn = conversation?.turns.find((t): t is AssistantTurn => t.id === m.turnId && t.role === 'assistant');
    if (!conversation || !turn) return;
    if (this.running) {
      this.post({ type: 'notice', level: 'info', text: vscode.l10n.t('Wait for the reply to end (or stop it) before undoing its edits.') });
      return;
    }
    const call = m.type === 'undo-edit' ? turn.steps.flatMap((s) => s.toolCalls).find((c) => c.id === m.callId) : undefined;
    const done = m.type === 'undo-edit' ? (call ? await this.restorer.undo(call) : false) : await this.restorer.restoreTurn(turn);
    if (!done) return;
    await this.store.save(conversation);
    this.post({ type: 'turn', turn: viewTurn(turn), fixes: turnFixes(turn, this.services) });
    this.post({ type: 'notice', level: 'info', text: m.type === 'undo-edit' ? vscode.l10n.t('The change was undone.') : vscode.l10n.t('The files are back to before this turn.') });
  }

  guard(): PathGuard {
    return workspaceGuard();
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

  async pickModel(): Promise<void> {
    this.models = [];
    await this.loadModels();
    // Each model with the wire format it would use (a Gemini model in its own format where the gateway offers it).
    const pattern = chatSettings().pattern;
    const formatNames: Record<string, string> = { messages: vscode.l10n.t('messages format'), responses: vscode.l10n.t('Responses format'), gemini: vscode.l10n.t("Gemini's own format") };
    const items = this.models.map((label) => ({ label, description: formatNames[resolveFormat(label, 'auto', pattern, this.services.formatFacts(label))] }));
    const chosen = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Chat model'), placeHolder: this.currentModel(), matchOnDescription: true });
    const pick = chosen?.label;
    if (!pick) return;
    await this.context.workspaceState.update('modelGateway.chat.model', pick);
    await this.pushState();
  }

  dispose(): void {
    this.stop();
    for (const d of this.disposables) d.dispose();
  }
}

/** A turn (and its subagents) left running by a crash or a reload is shown as stopped. */
function stopInterrupted(c: Conversation): void {
  for (const t of c.turns) {
    if (t.role !== 'assistant' || t.status !== 'streaming') continue;
    t.status = 'stopped';
    for (const s of t.steps) for (const call of s.toolCalls) if (call.subagent && (call.subagent.status === 'running' || call.subagent.status === 'queued')) call.subagent.status = 'stopped';
  }
}

/** The files a turn is about, for the rules that apply: the active editor's, and the files attached to the question. */
function filesInPlay(editor: vscode.TextEditor | undefined, question: Conversation['turns'][number] | undefined): string[] {
  const files = new Set<string>();
  if (editor?.document.uri.scheme === 'file') files.add(editor.document.uri.fsPath);
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (question?.role === 'user') {
    for (const c of question.context) {
      const relative = c.label.replace(/:\d+(-\d+)?$/, '');
      const folder = folders.find((f) => relative.startsWith(`${f.name}/`)) ?? folders[0];
      if (!folder) continue;
      const inside = folders.length > 1 && relative.startsWith(`${folder.name}/`) ? relative.slice(folder.name.length + 1) : relative;
      files.add(vscode.Uri.joinPath(folder.uri, inside).fsPath);
    }
  }
  return [...files];
}

/** A condensation as the view shows it: the gateway's compaction output (opaque, often large) stays on the host. */
function viewCondensation(c: Condensation): Omit<Condensation, 'serverItems'> {
  const shown: Condensation = { ...c };
  delete shown.serverItems;
  return shown;
}
