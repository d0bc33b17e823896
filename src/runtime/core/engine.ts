import type { GatewayClient } from '../../gateway/client';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import {
  attributeUsage,
  newId,
  takesTools,
  type AssistantTurn,
  type Condensation,
  type Step,
  type ToolCallRecord,
  type Turn,
  type TurnError,
  type TurnFallback,
  type Usage,
  type WireFormat,
} from '../../common/conversation';
import { condenseCut, fitToWindow, promptLimit, windowFromError, type ContextUse, type Fitted } from './budget';
import { condense, type CondenseOptions } from './condense';
import { scaleFromUsage } from './tokens';
import { ThinkTagSplitter } from './thinkTags';
import { busyReason, runWithFallback, type FallbackAttempt, type FallbackRecord, type FallbackSettings, type RetryOptions } from './fallback';
import { chatTools, geminiTools, messagesTools, responsesTools, toChatMessages, toGeminiContents, toMessagesRequest, toResponsesInput } from './wire';

/** What the engine needs from the tools: their definitions and a runner. */
export interface ToolRunner {
  /** What the next request carries (read before each request: `find_tools` can add to it within a turn). */
  readonly definitions: readonly ToolDefinition[];
  /** A tool's kind, for tools the model may call that are not offered yet (absent: looked up in `definitions`). */
  kindOf?(name: string): ToolDefinition['kind'] | undefined;
  /** `callId` ties an edit's approval to its tool card. */
  run(name: string, args: string, signal?: AbortSignal, callId?: string, onApproved?: () => void): Promise<ToolResult>;
  /** Whether a call will wait for the person (absent: writes do, reads do not). */
  needsApproval?(name: string, args: string): boolean;
}

export type EngineEvent =
  | { type: 'step'; index: number }
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  | { type: 'tool-call'; call: ToolCallRecord }
  | { type: 'tool-update'; call: ToolCallRecord }
  | { type: 'usage'; usage: Usage }
  /** How the context window is used by the request about to go (after budgeting), then as the gateway counted it. */
  | { type: 'context'; use: ContextUse }
  /** Older turns were summarised to make room (saved by the caller with the conversation). */
  | { type: 'condensed'; condensation: Condensation }
  /** The summary could not be made: older results were stubbed or turns left out instead. */
  | { type: 'condense-failed'; message: string }
  /** Messages the person steered with were added after a step's tool results (sent with the next request). */
  | { type: 'steered'; texts: string[] }
  /** A busy model was left for the next of the chain: this step and the rest of the turn go to `fallback.to`. */
  | { type: 'fallback'; fallback: TurnFallback };

/** The person's fallback chain for a turn (`fallback.ts`): busy models move on to the next. */
export interface EngineFallback {
  /** The models after the turn's, in order (the chain, with the breaker's tripped models last). */
  models: readonly string[];
  settings: Pick<FallbackSettings, 'rateLimitWaitMs' | 'firstTokenMs'>;
  /** The next model's part of the turn (format, window, image input…): the runtime's model profile. */
  optionsFor(model: string): ModelOptions;
  /** Whether a model takes tools (absent: what its name says, `takesTools`). */
  takesTools?(model: string): boolean;
  /** A model failed over (the breaker counts it, the log says it). */
  onFallback?(f: FallbackRecord): void;
}

/** How one request goes: its signal (a stall timer's when a next model waits), its retries, and who hears its first token. */
type RequestIo = Pick<FallbackAttempt, 'signal' | 'heard'> & { retry?: RetryOptions };

export interface RunOptions {
  client: GatewayClient;
  model: string;
  format: WireFormat;
  system: string;
  /** The conversation so far, ending with the new user turn. */
  history: readonly Turn[];
  /** The turn to fill (shared, so the caller can save or show it at any moment). */
  turn: AssistantTurn;
  tools?: ToolRunner;
  /** Requests per turn at most (each tool round is one); reaching it asks `onLimit`. */
  maxSteps: number;
  /** Dollars per turn at most (0 or absent: none); `costSoFar` says what the turn has cost. */
  maxCostDollars?: number;
  costSoFar?: () => number | undefined;
  /** A limit of the turn is reached with tool calls pending: true goes on for as much again, false stops. */
  onLimit?: (reached: TurnLimit) => Promise<boolean>;
  cacheTtl: '5m' | '1h';
  maxTokens?: number;
  /** The model's context window: when set, each request is fitted into it (`budget.ts`). */
  contextWindow?: number;
  /** The gateway named a smaller window in a refusal: it is used from then on (and remembered by the caller). */
  onContextWindow?: (window: number) => void;
  /** The conversation's newest condensation; replaced (and reported as an event) when the loop condenses again. */
  condensation?: Condensation;
  /** Token estimates × this (family factor, then learned from usage); updated after each reply. */
  tokenScale?: number;
  onTokenScale?: (scale: number) => void;
  /** `required`: the model must call a tool (VS Code's tool mode); `auto` when absent. */
  toolChoice?: 'auto' | 'required';
  /** The gateway answered 404 for /v1/responses: the turn went on in chat completions (remember it). */
  onNoResponsesRoute?: () => void;
  /** Called when the gateway has no `/v1beta` route (Gemini's own format): the turn goes on by chat completions. */
  onNoGeminiRoute?: () => void;
  /** Responses models: condense by the gateway's compaction where it has one (`condense.ts`). */
  serverCompaction?: CondenseOptions['serverCompaction'];
  /** Chat completions: send a tool round's reasoning back (`toChatMessages`); the user's per-model override. */
  reasoningBack?: boolean;
  /** False: the model takes no images, and tool results' images are not sent (their text names them). */
  imageInput?: boolean;
  /** Responses format: `reasoning.effort` for a reasoning model (the user's per-model override). */
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  signal?: AbortSignal;
  onEvent?: (e: EngineEvent) => void;
  /** Messages the person sent with Steer since the last call (taken: each is added once). */
  steering?: () => string[];
  /** The fallback chain: a busy model (429, 503, 529, 5xx, no first token) hands the step to the next. */
  fallback?: EngineFallback;
}

/** The options of `runTurn` that follow from the model alone. */
export type ModelOptions = Pick<
  RunOptions,
  | 'model'
  | 'format'
  | 'cacheTtl'
  | 'maxTokens'
  | 'reasoningEffort'
  | 'reasoningBack'
  | 'imageInput'
  | 'contextWindow'
  | 'onContextWindow'
  | 'tokenScale'
  | 'onTokenScale'
  | 'onNoResponsesRoute'
  | 'onNoGeminiRoute'
  | 'serverCompaction'
>;

export type TurnLimit = { kind: 'requests'; requests: number } | { kind: 'cost'; requests: number; dollars: number };

function errorOf(err: unknown, continueWith?: string): TurnError {
  const e = err as { name?: string; message?: string; status?: number; cause403?: string; keyRefusal?: string; retryAfterMs?: number };
  return {
    message: e?.message ?? String(err),
    kind: e?.name ?? 'Error',
    status: e?.status,
    cause403: e?.cause403,
    keyRefusal: e?.keyRefusal,
    retryAfterMs: e?.retryAfterMs,
    ...(continueWith ? { continueWith } : {}),
  };
}

/** After an answer stopped mid-way on a busy or silent model: the next model of the chain to continue with. */
function continueWithFor(o: RunOptions, err: unknown): string | undefined {
  const last = o.turn.steps[o.turn.steps.length - 1];
  if (!o.fallback || !last?.text) return undefined;
  const name = (err as { name?: string })?.name;
  if (!busyReason(err) && name !== 'TimeoutError' && name !== 'StreamError') return undefined;
  const failed = new Set([o.model, ...(o.turn.fallbacks?.filter((f) => f.kind !== 'breaker').map((f) => f.from) ?? [])]);
  return o.fallback.models.find((m) => !failed.has(m));
}

function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return (err as { name?: string })?.name === 'AbortError' || signal?.aborted === true;
}

/** Runs one assistant turn to its end; never throws (failures land in `turn.status`/`turn.error`). */
export async function runTurn(o: RunOptions): Promise<AssistantTurn> {
  const { turn } = o;
  const emit = o.onEvent ?? (() => undefined);
  // Where the current allowance started: each "go on" grants as many requests and dollars again.
  let requestBase = 0;
  let costBase = 0;
  try {
    for (let index = 0; ; index++) {
      const step: Step = { text: '', toolCalls: [] };
      turn.steps.push(step);
      emit({ type: 'step', index });
      const calls = await streamStep(o, step, [...o.history, turn], o.tools?.definitions ?? [], emit);
      emit({ type: 'usage', usage: turn.usage });
      if (calls.length === 0) break;
      step.toolCalls = calls;
      for (const c of calls) emit({ type: 'tool-call', call: c });
      const limit = limitReached(o, index + 1 - requestBase, costBase);
      if (limit) {
        const goOn = o.onLimit && !o.signal?.aborted ? await o.onLimit(limit) : false;
        if (o.signal?.aborted) throw Object.assign(new Error('stopped'), { name: 'AbortError' });
        if (goOn) {
          requestBase = index + 1;
          costBase = limit.kind === 'cost' ? limit.dollars : (o.costSoFar?.() ?? 0);
        } else {
          const why =
            limit.kind === 'cost'
              ? `its limit of $${o.maxCostDollars?.toFixed(2)} (it has cost $${limit.dollars.toFixed(2)})`
              : `its limit of ${o.maxSteps} steps`;
          for (const c of calls) {
            c.status = 'not-run';
            c.result = `Not run: the turn reached ${why}. Ask to continue.`;
            emit({ type: 'tool-update', call: c });
          }
          turn.stepLimitReached = true;
          break;
        }
      }
      await runTools(o, calls, emit);
      if (o.signal?.aborted) throw Object.assign(new Error('stopped'), { name: 'AbortError' });
      // What the person steered with while the tools ran goes with their results into the next request.
      const steered = o.steering?.() ?? [];
      if (steered.length > 0) {
        step.steered = steered;
        emit({ type: 'steered', texts: steered });
      }
    }
    turn.status = 'done';
  } catch (err) {
    if (isAbort(err, o.signal)) turn.status = 'stopped';
    else {
      turn.status = 'error';
      turn.error = errorOf(err, continueWithFor(o, err));
    }
    for (const s of turn.steps) for (const c of s.toolCalls) if (c.status === 'running' || c.status === 'awaiting-approval') c.status = 'not-run';
  }
  const last = turn.steps[turn.steps.length - 1];
  if (last && !last.text && last.toolCalls.length === 0 && !last.thinking && turn.steps.length > 1) turn.steps.pop();
  if (turn.usageBy) attributeUsage(turn, o.model);
  return turn;
}

/** The limit the turn has reached since the last "go on", if any: requests first, then dollars. */
function limitReached(o: RunOptions, requestsSinceBase: number, costBase: number): TurnLimit | undefined {
  if (requestsSinceBase >= o.maxSteps) return { kind: 'requests', requests: requestsSinceBase };
  const dollars = o.maxCostDollars ? o.costSoFar?.() : undefined;
  if (o.maxCostDollars && dollars !== undefined && dollars - costBase >= o.maxCostDollars) return { kind: 'cost', requests: requestsSinceBase, dollars };
  return undefined;
}

/** Marks results stubbed for the first time, so every later request sends the same stubs. */
function keepStubs(history: readonly Turn[], ids: readonly string[]): void {
  if (ids.length === 0) return;
  const wanted = new Set(ids);
  for (const t of history) if (t.role === 'assistant') for (const s of t.steps) for (const c of s.toolCalls) if (wanted.has(c.id)) c.stubbed = true;
}

/**
 * What one request sends, fitted into the window. When stubs are not enough (or the gateway refused
 * the prompt as too long), older turns are condensed into a model-written summary first; if that
 * fails, the budget's last resort (leaving out the oldest exchanges) still makes it fit.
 */
async function prepare(
  o: RunOptions & { contextWindow: number },
  history: readonly Turn[],
  toolsText: string,
  aggressive: boolean,
  emit: (e: EngineEvent) => void,
): Promise<Fitted> {
  const fit = () => {
    const f = fitToWindow({
      system: o.system,
      toolsText,
      turns: history,
      window: o.contextWindow,
      reserveOutput: o.maxTokens,
      aggressive,
      scale: o.tokenScale,
      condensation: o.condensation,
    });
    keepStubs(history, f.newlyStubbed);
    return f;
  };
  let fitted = fit();
  if (fitted.wantsCondense || aggressive) {
    const limit = promptLimit(o.contextWindow, o.maxTokens, aggressive);
    const cut = condenseCut(history, limit, o.condensation, o.tokenScale);
    if (cut) {
      try {
        const made = await condense({
          client: o.client,
          model: o.model,
          format: o.format,
          turns: history,
          cut,
          current: o.condensation,
          window: o.contextWindow,
          manual: false,
          signal: o.signal,
          serverCompaction: o.serverCompaction,
        });
        o.condensation = made.condensation;
        // The summary request is part of what the turn cost.
        o.turn.usage.input += made.usage.input;
        o.turn.usage.output += made.usage.output;
        emit({ type: 'condensed', condensation: made.condensation });
        fitted = fit();
      } catch (err) {
        if (isAbort(err, o.signal)) throw err;
        emit({ type: 'condense-failed', message: (err as Error)?.message ?? String(err) });
      }
    }
  }
  return fitted;
}

/**
 * One request. With a context window, what is sent is fitted into it first; if the gateway still
 * refuses the prompt as too long (the estimate was short), it is condensed and fitted again well
 * under the window and sent once more, never more. The gateway's count of the prompt then
 * corrects the estimates.
 */
/** The turns with tool results' images left out (a copy where any were: the conversation keeps them). */
function withoutResultImages(turns: readonly Turn[]): readonly Turn[] {
  const has = turns.some((t) => t.role === 'assistant' && t.steps.some((s) => s.toolCalls.some((c) => c.images?.length)));
  if (!has) return turns;
  return turns.map((t) =>
    t.role === 'assistant' ? { ...t, steps: t.steps.map((s) => ({ ...s, toolCalls: s.toolCalls.map(({ images: _images, ...c }) => c) })) } : t,
  );
}

/** Whether the history holds images (the question's or a tool result's): a fallback must take them. */
function hasImages(turns: readonly Turn[]): boolean {
  return turns.some((t) => (t.role === 'user' ? t.images.length > 0 : t.steps.some((s) => s.toolCalls.some((c) => c.images?.length))));
}

/**
 * One step's request, on the turn's model or, when it is busy before any token was shown, on the
 * next model of the chain (`runWithFallback`): the same history in that model's wire format, with
 * what only the first model can read left out (`wire.ts`, by `Step.model`), fitted to its window.
 * The rest of the turn stays with the model that answered.
 */
async function streamStep(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
): Promise<ToolCallRecord[]> {
  const fb = o.fallback;
  if (!fb) return askModel(o, step, history, defs, emit, { signal: o.signal, heard: () => undefined });
  const failed = new Set(o.turn.fallbacks?.filter((f) => f.kind !== 'breaker').map((f) => f.from) ?? []);
  const images = hasImages(history);
  const { value } = await runWithFallback({
    models: [o.model, ...fb.models.filter((m) => m !== o.model && !failed.has(m))],
    settings: fb.settings,
    signal: o.signal,
    suits: (m) => (defs.length === 0 || (fb.takesTools ?? takesTools)(m)) && (!images || fb.optionsFor(m).imageInput !== false),
    shown: () => !!(step.text || step.thinking),
    onFallback: (f) => {
      (o.turn.fallbacks ??= []).push(f);
      fb.onFallback?.(f);
      emit({ type: 'fallback', fallback: f });
    },
    attempt: (a) => {
      if (a.model !== o.model) switchModel(o, a.model);
      if (a.model !== o.turn.model) step.model = a.model;
      return askModel(o, step, history, defs, emit, a);
    },
  });
  return value;
}

/** The turn goes on with `model`: its options from the runtime's profile, what the previous model used so far priced at its price. */
function switchModel(o: RunOptions, model: string): void {
  attributeUsage(o.turn, o.model);
  Object.assign(o, o.fallback!.optionsFor(model));
  o.turn.answeredBy = model;
  o.turn.format = o.format;
}

async function askModel(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
  io: RequestIo,
): Promise<ToolCallRecord[]> {
  // A model that takes no images gets none from tool results (their text names them), nor are they counted.
  if (o.imageInput === false) history = withoutResultImages(history);
  const sendIn = (turns: readonly Turn[]) =>
    o.format === 'chat'
      ? streamChat(o, step, turns, defs, emit, io)
      : o.format === 'responses'
        ? streamResponses(o, step, turns, defs, emit, io)
        : o.format === 'gemini'
          ? streamGemini(o, step, turns, defs, emit, io)
          : streamMessages(o, step, turns, defs, emit, io);
  const send = async (turns: readonly Turn[]) => {
    try {
      return await sendIn(turns);
    } catch (err) {
      // A gateway without /v1/responses or /v1beta (one-api, older new-api): this turn and the next go by chat completions.
      if ((o.format !== 'responses' && o.format !== 'gemini') || !isMissingRoute(err) || step.text || step.thinking) throw err;
      if (o.format === 'responses') o.onNoResponsesRoute?.();
      else o.onNoGeminiRoute?.();
      o.format = 'chat';
      o.turn.format = 'chat';
      return sendIn(turns);
    }
  };
  if (!o.contextWindow) return send(history);
  const budgeted = o as RunOptions & { contextWindow: number };
  const toolsText =
    defs.length === 0
      ? ''
      : JSON.stringify(
          o.format === 'chat'
            ? chatTools(defs)
            : o.format === 'responses'
              ? responsesTools(defs)
              : o.format === 'gemini'
                ? geminiTools(defs)
                : messagesTools(defs),
        );
  const sendCounted = async (fitted: Fitted) => {
    emit({ type: 'context', use: fitted.use });
    const before = { ...o.turn.usage };
    const calls = await send(fitted.turns);
    const u = o.turn.usage;
    const reported = u.input - before.input;
    if (!u.estimated && reported > 0) {
      const scale = o.tokenScale ?? 1;
      const estimated = (fitted.use.used - fitted.use.parts.images) / scale + fitted.use.parts.images;
      o.tokenScale = scaleFromUsage(scale, estimated, reported);
      o.onTokenScale?.(o.tokenScale);
      emit({ type: 'context', use: { ...fitted.use, used: reported, reported: true } });
    }
    return calls;
  };
  try {
    return await sendCounted(await prepare(budgeted, history, toolsText, false, emit));
  } catch (err) {
    if ((err as { name?: string })?.name !== 'ContextLengthError' || step.text || o.signal?.aborted) throw err;
    // The refusal usually names the real window: believe it for this request and the next ones.
    const named = windowFromError((err as Error).message);
    if (named && named < budgeted.contextWindow) {
      budgeted.contextWindow = named;
      o.onContextWindow?.(named);
    }
    return sendCounted(await prepare(budgeted, history, toolsText, true, emit));
  }
}

/**
 * Reads that need no approval run at once and in parallel; writes (edits, commands) and whatever
 * waits for the person run one at a time, in order.
 */
async function runTools(o: RunOptions, calls: ToolCallRecord[], emit: (e: EngineEvent) => void): Promise<void> {
  const tools = o.tools;
  const kindOf = (name: string) => tools?.kindOf?.(name) ?? tools?.definitions.find((d) => d.name === name)?.kind ?? 'read';
  const asks = new Set(calls.filter((c) => tools?.needsApproval?.(c.name, c.args) ?? kindOf(c.name) === 'write').map((c) => c.id));
  const inOrder = (c: ToolCallRecord) => kindOf(c.name) === 'write' || asks.has(c.id);
  const run = async (c: ToolCallRecord) => {
    if (!tools) {
      c.status = 'error';
      c.result = 'Error: tools are not available here.';
      c.isError = true;
      emit({ type: 'tool-update', call: c });
      return;
    }
    c.status = asks.has(c.id) ? 'awaiting-approval' : 'running';
    emit({ type: 'tool-update', call: c });
    const approved = () => {
      if (c.status !== 'awaiting-approval') return;
      c.status = 'running';
      emit({ type: 'tool-update', call: c });
    };
    const r = await tools.run(c.name, c.args, o.signal, c.id, approved);
    c.result = r.content;
    c.isError = r.isError;
    if (r.images?.length) c.images = r.images;
    if (r.placement) c.placement = r.placement;
    c.status = r.isError ? (/^The person rejected/.test(r.content) ? 'rejected' : 'error') : 'done';
    emit({ type: 'tool-update', call: c });
  };
  await Promise.all(calls.filter((c) => !inOrder(c)).map(run));
  for (const c of calls.filter(inOrder)) {
    if (o.signal?.aborted) break;
    await run(c);
  }
}

async function streamChat(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
  io: RequestIo,
): Promise<ToolCallRecord[]> {
  const stream = o.client.chat.completions.stream(
    {
      model: o.model,
      messages: toChatMessages(o.system, history, o.reasoningBack),
      ...(defs.length > 0 ? { tools: chatTools(defs), ...(o.toolChoice === 'required' ? { tool_choice: 'required' as const } : {}) } : {}),
      ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}),
    },
    { signal: io.signal, retry: io.retry },
  );
  const tags = new ThinkTagSplitter();
  const show = (part: { text: string; thinking: string }) => {
    if (part.thinking) {
      step.thinkingVia ??= 'tags';
      addThinking(step, part.thinking, emit);
    }
    if (part.text) {
      step.text += part.text;
      emit({ type: 'text', delta: part.text });
    }
  };
  try {
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta;
      if (!d) continue;
      if (d.content || d.reasoning_content || (d as { reasoning?: unknown }).reasoning || d.tool_calls?.length) io.heard();
      // Reasoning comes as reasoning_content (DeepSeek, new-api), reasoning (vLLM, OpenRouter) or <think> tags in the content.
      const vllmReasoning = (d as { reasoning?: unknown }).reasoning;
      if (typeof d.reasoning_content === 'string' && d.reasoning_content) {
        step.thinkingVia ??= 'reasoning_content';
        addThinking(step, d.reasoning_content, emit);
      } else if (typeof vllmReasoning === 'string' && vllmReasoning) {
        step.thinkingVia ??= 'reasoning';
        addThinking(step, vllmReasoning, emit);
      }
      if (typeof d.content === 'string' && d.content) show(tags.push(d.content));
    }
  } finally {
    show(tags.end());
  }
  const final = await stream.finalCompletion();
  const u = final.usage;
  if (u) {
    o.turn.usage.input += u.prompt_tokens;
    o.turn.usage.output += u.completion_tokens;
    const cached = (u as { prompt_tokens_details?: { cached_tokens?: number } }).prompt_tokens_details?.cached_tokens;
    if (cached) o.turn.usage.cacheRead += cached;
    const reasoningTokens = (u as { completion_tokens_details?: { reasoning_tokens?: number } }).completion_tokens_details?.reasoning_tokens;
    if (reasoningTokens) o.turn.usage.reasoning = (o.turn.usage.reasoning ?? 0) + reasoningTokens;
  } else {
    // Some upstreams stream no usage even when asked: estimate (about 4 characters a token) and say so.
    const sent = JSON.stringify(toChatMessages(o.system, history, o.reasoningBack)).length + (defs.length > 0 ? JSON.stringify(chatTools(defs)).length : 0);
    const received =
      step.text.length + (step.thinking?.length ?? 0) + (final.choices[0]?.message.tool_calls ?? []).reduce((n, c) => n + c.function.arguments.length, 0);
    o.turn.usage.input += Math.ceil(sent / 4);
    o.turn.usage.output += Math.ceil(received / 4);
    o.turn.usage.estimated = true;
  }
  return (final.choices[0]?.message.tool_calls ?? []).map((c) => ({
    id: c.id,
    name: c.function.name,
    args: c.function.arguments || '{}',
    status: 'running' as const,
  }));
}

function addThinking(step: Step, delta: string, emit: (e: EngineEvent) => void): void {
  if (!step.thinking) step.thinkingStartedAt = Date.now();
  step.thinking = (step.thinking ?? '') + delta;
  step.thinkingMs = Date.now() - (step.thinkingStartedAt ?? Date.now());
  emit({ type: 'thinking', delta });
}

/** A 404 for the route itself (`Invalid URL (POST /v1/responses)`), not for a model the upstream lacks. */
function isMissingRoute(err: unknown): boolean {
  const e = err as { name?: string; code?: string; serverMessage?: string; message?: string };
  return e?.name === 'NotFoundError' && e.code !== 'model_not_found' && !/\bmodel\b/i.test(e.serverMessage ?? e.message ?? '');
}

function reasons(history: readonly Turn[]): boolean {
  return history.some((t) => t.role === 'assistant' && t.steps.some((s) => s.reasoningItems?.length));
}

async function streamResponses(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
  io: RequestIo,
): Promise<ToolCallRecord[]> {
  const reasoning = !!o.reasoningEffort || reasons(history);
  const stream = o.client.responses.stream(
    {
      model: o.model,
      input: toResponsesInput(history, o.model),
      ...(o.system ? { instructions: o.system } : {}),
      ...(defs.length > 0 ? { tools: responsesTools(defs), ...(o.toolChoice === 'required' ? { tool_choice: 'required' as const } : {}) } : {}),
      ...(o.maxTokens ? { max_output_tokens: o.maxTokens } : {}),
      // Stateless: the whole input each step, reasoning carried as encrypted items. Summaries and
      // encrypted reasoning are asked of models known to reason (an effort set by the user, or
      // reasoning items seen in this conversation): other models refuse both.
      store: false,
      ...(reasoning
        ? { reasoning: { ...(o.reasoningEffort ? { effort: o.reasoningEffort } : {}), summary: 'auto' as const }, include: ['reasoning.encrypted_content'] }
        : {}),
    },
    { signal: io.signal, retry: io.retry },
  );
  for await (const ev of stream) {
    if (ev.type.endsWith('.delta') || ev.type === 'response.output_item.added') io.heard();
    if (ev.type === 'response.output_text.delta' && ev.delta) {
      step.text += ev.delta;
      emit({ type: 'text', delta: ev.delta });
    } else if (ev.type === 'response.reasoning_summary_text.delta' && ev.delta) {
      addThinking(step, ev.delta, emit);
    } else if (ev.type === 'response.reasoning_summary_part.added' && (ev.summary_index ?? 0) > 0 && step.thinking) {
      addThinking(step, '\n\n', emit);
    }
  }
  const final = await stream.finalResponse();
  const u = final.usage;
  if (u) {
    o.turn.usage.input += u.input_tokens;
    o.turn.usage.output += u.output_tokens;
    o.turn.usage.cacheRead += u.input_tokens_details?.cached_tokens ?? 0;
    const reasoningTokens = u.output_tokens_details?.reasoning_tokens;
    if (reasoningTokens) o.turn.usage.reasoning = (o.turn.usage.reasoning ?? 0) + reasoningTokens;
  }
  const items = final.output;
  step.reasoningItems = items
    .filter((i) => i.type === 'reasoning')
    .map((i) => {
      const r = i as { id: string; summary: { text: string }[]; encrypted_content?: string | null };
      return { id: r.id, summary: r.summary.map((x) => x.text), ...(r.encrypted_content ? { encrypted: r.encrypted_content } : {}) };
    });
  if (step.reasoningItems.length === 0) delete step.reasoningItems;
  return items
    .filter((i) => i.type === 'function_call')
    .map((i) => {
      const c = i as { call_id: string; name: string; arguments: string };
      return { id: c.call_id, name: c.name, args: c.arguments || '{}', status: 'running' as const };
    });
}

/** Thinking budgets for the chat's effort levels (Gemini counts tokens, not levels). */
const GEMINI_BUDGET = { minimal: 512, low: 1024, medium: 8192, high: 24_576 } as const;

/** Gemini models that think (2.5 and later): their thoughts are asked for, as summaries. */
const THINKING_GEMINI = /gemini-(?:2\.5|[3-9])/i;

async function streamGemini(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
  io: RequestIo,
): Promise<ToolCallRecord[]> {
  const thinks = !!o.reasoningEffort || THINKING_GEMINI.test(o.model);
  const stream = o.client.gemini.streamGenerateContent(
    o.model,
    {
      contents: toGeminiContents(history, o.model),
      ...(o.system ? { systemInstruction: { parts: [{ text: o.system }] } } : {}),
      ...(defs.length > 0
        ? { tools: geminiTools(defs), ...(o.toolChoice === 'required' ? { toolConfig: { functionCallingConfig: { mode: 'ANY' as const } } } : {}) }
        : {}),
      generationConfig: {
        ...(o.maxTokens ? { maxOutputTokens: o.maxTokens } : {}),
        ...(thinks ? { thinkingConfig: { includeThoughts: true, ...(o.reasoningEffort ? { thinkingBudget: GEMINI_BUDGET[o.reasoningEffort] } : {}) } } : {}),
      },
    },
    { signal: io.signal, retry: io.retry },
  );
  for await (const chunk of stream) {
    if (chunk.candidates?.[0]?.content?.parts?.length) io.heard();
    for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
      if (p.functionCall || !p.text) continue;
      if (p.thought) addThinking(step, p.text, emit);
      else {
        step.text += p.text;
        emit({ type: 'text', delta: p.text });
      }
    }
  }
  const final = await stream.finalResponse();
  const u = final.usageMetadata;
  if (u) {
    o.turn.usage.input += u.promptTokenCount ?? 0;
    o.turn.usage.output += (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
    o.turn.usage.cacheRead += u.cachedContentTokenCount ?? 0;
    if (u.thoughtsTokenCount) o.turn.usage.reasoning = (o.turn.usage.reasoning ?? 0) + u.thoughtsTokenCount;
  }
  const parts = final.candidates?.[0]?.content?.parts ?? [];
  // A signature on a text part (no call in the step) goes back with that text.
  const textSigned = parts.find((p) => !p.functionCall && !p.thought && p.thoughtSignature);
  if (textSigned?.thoughtSignature) step.textSignature = textSigned.thoughtSignature;
  return parts.flatMap((p) =>
    p.functionCall
      ? [
          {
            id: p.functionCall.id ?? newId('call'),
            name: p.functionCall.name,
            args: JSON.stringify(p.functionCall.args ?? {}),
            status: 'running' as const,
            ...(p.thoughtSignature ? { thoughtSignature: p.thoughtSignature } : {}),
          },
        ]
      : [],
  );
}

async function streamMessages(
  o: RunOptions,
  step: Step,
  history: readonly Turn[],
  defs: readonly ToolDefinition[],
  emit: (e: EngineEvent) => void,
  io: RequestIo,
): Promise<ToolCallRecord[]> {
  const body = toMessagesRequest(o.system, history, defs, o.cacheTtl, o.model);
  const choice = defs.length > 0 && o.toolChoice === 'required' ? { tool_choice: { type: 'any' as const } } : {};
  const stream = o.client.messages.stream({ model: o.model, max_tokens: o.maxTokens ?? 8192, ...body, ...choice }, { signal: io.signal, retry: io.retry });
  for await (const ev of stream) {
    if (ev.type === 'content_block_start' || ev.type === 'content_block_delta') io.heard();
    if (ev.type !== 'content_block_delta') continue;
    if (ev.delta.type === 'text_delta') {
      step.text += ev.delta.text;
      emit({ type: 'text', delta: ev.delta.text });
    } else if (ev.delta.type === 'thinking_delta') {
      addThinking(step, ev.delta.thinking, emit);
    }
  }
  const final = await stream.finalMessage();
  const u = final.usage;
  o.turn.usage.input += u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  o.turn.usage.output += u.output_tokens;
  o.turn.usage.cacheRead += u.cache_read_input_tokens ?? 0;
  o.turn.usage.cacheWrite += u.cache_creation_input_tokens ?? 0;
  for (const b of final.content) if (b.type === 'thinking') step.thinkingSignature = b.signature;
  return final.content
    .filter((b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use')
    .map((b) => ({ id: b.id, name: b.name, args: JSON.stringify(b.input ?? {}), status: 'running' as const }));
}
