import * as vscode from 'vscode';
import type { ChatSettings, ModelOverride } from '../../shell/config';
import { describeError } from '../../shell/errors';
import { factsOf, fixesFor } from '../../common/fixes';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import type { SearchService } from '../../search/host/searchService';
import type { EditorInsight } from '../../editor/host/feature';
import { activeCondensation, emptyUsage, newId, type AssistantTurn, type Conversation, type TurnCost, type UserTurn } from '../../common/conversation';
import { viewTurn, type FixAction, type ToWebview } from '../../common/chatProtocol';
import type { EngineEvent } from '../../runtime/core/engine';
import { modeOf } from '../../runtime/core/modes';
import { calledTools, userTexts } from '../../runtime/core/toolOffer';
import { answerCost, CostMeter } from '../../runtime/host/cost';
import { runModelTurn } from '../../runtime/host/modelTurn';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import { askToGoOn, toolsAllowed } from '../../runtime/host/turnChecks';
import type { PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition } from '../../tools/workspaceTools';
import type { DiffApprover } from './approvals';
import type { ChatMemory } from './memory';
import { subagentHost } from './subagentHost';
import type { ChatPrompt } from './turnPrompt';
import { turnTools } from './turnTools';

/** The buttons that fix a failed turn: the shared error→fix map, as the chat offers them. */
export function turnFixes(turn: AssistantTurn, services: PricedFeature): FixAction[] {
  if (!turn.error) return [];
  const fixes = fixesFor({ ...turn.error }, { hasBaseUrl: !!services.settings().baseUrl, place: 'chat' });
  // The answer had begun: the gateway's address is right, the stream went silent (the card offers Continue with, or Retry).
  const began = turn.steps.some((s) => s.text);
  return began && turn.error.kind === 'TimeoutError' ? fixes.filter((f) => f.command !== 'modelGateway.setBaseUrl') : fixes;
}

/** What a chat answer needs of the session. */
export interface TurnHost {
  services: PricedFeature;
  approver: DiffApprover;
  agent?: AgentToolbox;
  search?: SearchService;
  editor?: EditorInsight;
  prompt: ChatPrompt;
  memory: ChatMemory;
  guard: () => PathGuard;
  post: (m: ToWebview) => void;
  save: (c: Conversation) => Promise<void>;
  pushState: () => Promise<void>;
  /** The messages the person steered with, for the next request. */
  takeSteering: () => string[];
}

type ToolsOfTurn = ReturnType<typeof turnTools>;

/**
 * One chat answer at a time: run on the person's account through the runtime (`runModelTurn`,
 * with the chat's tools, the answer's limits and the person asked at them), streamed to the view,
 * saved as it goes, and ended (stopped, failed or done) as a card with its cost, whatever failed.
 */
export class ChatTurns {
  private running: { abort: AbortController; turn: AssistantTurn } | undefined;
  private lastTurnPost = 0;

  constructor(private readonly host: TurnHost) {}

  get busy(): boolean {
    return !!this.running;
  }

  stop(): void {
    this.running?.abort.abort();
    this.host.approver.rejectAll();
  }

  /** Runs the answer `turn`, the newest of the conversation (its question before it, both kept already). */
  async answer(conversation: Conversation, turn: AssistantTurn, settings: ChatSettings, override: ModelOverride): Promise<void> {
    const { services } = this.host;
    const abort = new AbortController();
    this.running = { abort, turn };
    const started = Date.now();
    services.log.info(`chat: turn started (${turn.model}, ${turn.format})`);
    // One try/finally owns the turn: whatever fails (storage, the view, building the client, the
    // request), the turn ends as an error card with the question kept, and the panel is free.
    try {
      // The question is on disk before the answer starts: a crash loses at most the turn in flight.
      await this.host.save(conversation);
      await this.host.pushState();
      await this.run(conversation, turn, settings, abort.signal, override);
    } catch (err) {
      turn.status = 'error';
      turn.error = { message: err instanceof Error ? err.message : String(err), kind: err instanceof Error ? err.name : 'Error' };
    } finally {
      this.running = undefined;
      this.host.approver.rejectAll();
      if (turn.status === 'streaming') turn.status = 'stopped';
      if (turn.error) turn.error.message = redact(turn.error.message);
      turn.cost = await this.costOf(turn, settings.cacheTtl);
      conversation.updatedAt = Date.now();
      services.log.info(`chat: turn ended ${turn.status} after ${Date.now() - started} ms, ${turn.steps.length} step(s)`);
      await this.finish(conversation, turn);
    }
    if (turn.usage.output > 0) services.notifySpend();
  }

  /** A question that could not start: kept, with the reason as its answer's error card. */
  async failedBeforeStart(conversation: Conversation, question: UserTurn, model: string, failure: unknown): Promise<void> {
    const now = question.at;
    const turn: AssistantTurn = {
      id: newId('a'),
      role: 'assistant',
      model: model || '(no model)',
      format: 'chat',
      steps: [],
      status: 'error',
      usage: emptyUsage(),
      at: now,
    };
    const facts = factsOf(failure);
    turn.error = {
      message: redact(facts.message),
      kind: facts.kind,
      status: (failure as { status?: number }).status,
      cause403: facts.cause403,
      keyRefusal: facts.keyRefusal,
    };
    conversation.turns.push(question, turn);
    conversation.updatedAt = now;
    await this.finish(conversation, turn);
  }

  /** What an ended answer cost (its subagents included); nothing when it used no tokens, unknown when its model has no price. */
  private async costOf(turn: AssistantTurn, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
    try {
      return await answerCost(this.host.services, turn, cacheTtl);
    } catch (err) {
      this.host.services.log.warn(`chat: the answer's cost could not be worked out (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** Saves and shows the ended turn; a failure here is reported, never left as a running turn. */
  private async finish(conversation: Conversation, turn: AssistantTurn): Promise<void> {
    const { services } = this.host;
    // The walkthrough's "first question" step completes on the first answer.
    if (turn.status === 'done') void vscode.commands.executeCommand('setContext', 'modelGateway.chatAnswered', true);
    try {
      await this.host.save(conversation);
    } catch (err) {
      services.log.error('chat: could not save the conversation', err);
      this.host.post({ type: 'notice', level: 'error', text: vscode.l10n.t('The conversation could not be saved: {0}', describeError(services, err).message) });
    }
    this.host.post({ type: 'turn', turn: viewTurn(turn), fixes: turnFixes(turn, services) });
    try {
      await this.host.pushState();
    } catch (err) {
      services.log.error('chat: could not refresh the view', err);
    }
    if (turn.status === 'error' && turn.error) services.log.error(`chat turn failed (${turn.error.kind})`, turn.error.message);
  }

  /** The tools of the turn: none outside a trusted workspace on disk, or for a model marked without tool calling. */
  private toolsOf(conversation: Conversation, turn: AssistantTurn, settings: ChatSettings, override: ModelOverride, meter: CostMeter): ToolsOfTurn | undefined {
    if (!toolsAllowed(override)) return undefined;
    const { services, agent } = this.host;
    const custom = turn.mode?.startsWith('custom:') ? turn.mode : undefined;
    return turnTools({
      guard: this.host.guard(),
      approver: this.host.approver,
      agent,
      search: this.host.search,
      editor: this.host.editor,
      mode: modeOf(turn.mode),
      ...(custom && agent?.customizations ? { narrow: (defs: ToolDefinition[]) => agent.customizations!.toolsOf(custom, defs) } : {}),
      turn: () => (this.running?.turn === turn ? turn : undefined),
      onChange: () => this.postTurn(turn, true),
      onLateProblems: () => {
        this.postTurn(turn, true);
        this.host.save(conversation).catch((err: unknown) => services.log.error('chat: could not save late problems', err));
      },
      log: (line) => services.log.info(line),
      subagents: subagentHost({ services, parentModel: turn.model, settings, answerDollars: () => meter.dollars() }),
      memory: { remember: (args, callId, signal) => this.host.memory.remember(args, this.host.approver, callId, signal, conversation) },
      defer: settings.findTools,
      loaded: conversation.toolsLoaded ?? calledTools(conversation.turns),
      named: userTexts(conversation.turns),
      onLoaded: (names) => {
        conversation.toolsLoaded = [...names];
        services.log.info(`chat: tools offered from now on in this conversation: ${names.join(', ')}`);
      },
    });
  }

  private async run(conversation: Conversation, turn: AssistantTurn, settings: ChatSettings, signal: AbortSignal, override: ModelOverride): Promise<void> {
    // The answer's running cost (its subagents' as they stream included), for its limit.
    const meter = new CostMeter(this.host.services, turn, settings.cacheTtl);
    const tools = this.toolsOf(conversation, turn, settings, override, meter);
    const system = await this.host.prompt.forTurn(conversation, turn, !!tools, settings);
    const saved = { step: 0 };
    await runModelTurn(this.host.services, {
      surface: 'chat',
      model: turn.model,
      format: turn.format,
      system,
      history: conversation.turns.slice(0, -1),
      turn,
      tools,
      maxSteps: settings.maxSteps,
      costLimit: { dollars: settings.maxCostDollars, meter },
      onLimit: (limit) => askToGoOn(this.host.services, 'chat', limit, settings),
      condensation: activeCondensation(conversation),
      signal,
      steering: () => this.host.takeSteering(),
      onEvent: (e) => this.onEvent(e, conversation, turn, tools, saved),
    });
  }

  /** What the engine reports, shown as it comes; the conversation saved at each new step and when condensed. */
  private onEvent(e: EngineEvent, conversation: Conversation, turn: AssistantTurn, tools: ToolsOfTurn | undefined, saved: { step: number }): void {
    const { services, post } = this.host;
    if (e.type === 'text') post({ type: 'text', turnId: turn.id, step: turn.steps.length - 1, delta: e.delta });
    else if (e.type === 'context') {
      const use = { ...this.host.prompt.withRules(e.use), ...(tools ? { toolsOffered: tools.definitions.length, toolsDeferred: tools.deferredCount() } : {}) };
      this.host.prompt.measured(conversation.id, use);
      post({ type: 'context', use });
    } else if (e.type === 'condensed') {
      (conversation.condensations ??= []).push(e.condensation);
      services.log.info(`chat: condensed older turns to fit ${turn.model}'s window (${e.condensation.tokensBefore} → ${e.condensation.tokensAfter} tokens)`);
      this.host.save(conversation).catch((err: unknown) => services.log.error('chat: could not save the condensed conversation', err));
      void this.host.pushState();
    } else if (e.type === 'condense-failed') {
      services.log.error('chat: could not condense older turns', redact(e.message));
      post({
        type: 'notice',
        level: 'info',
        text: vscode.l10n.t(
          'Older turns could not be summarised, so older tool results were left out of what is sent instead. The conversation itself is kept whole.',
        ),
      });
    } else {
      this.postTurn(turn, e.type === 'tool-update' || e.type === 'tool-call' || e.type === 'steered' || e.type === 'fallback');
      if (e.type === 'step' && e.index > saved.step) {
        saved.step = e.index;
        this.host.save(conversation).catch((err: unknown) => services.log.error('chat: could not save a step', err));
      }
    }
  }

  /** Sends the turn's structure (tool cards, status); at most every 100 ms unless forced. */
  private postTurn(turn: AssistantTurn, force: boolean): void {
    const now = Date.now();
    if (!force && now - this.lastTurnPost < 100) return;
    this.lastTurnPost = now;
    this.host.post({ type: 'turn', turn: viewTurn(turn) });
  }
}
