/**
 * Subagents: the agent hands a self-contained task (research, "find every caller of X and
 * summarise it") to a subagent with a fresh context of its own, the parent's read-only tools and a
 * model of its own. Several calls in one step run in parallel, up to a cap. The parent gets back
 * the final answer only: the subagent's tool results never enter the parent's context, which is
 * what keeps a long research task from filling it (and from being paid for again on every later
 * request of the parent).
 */
import { emptyUsage, newId, type AssistantTurn, type SubagentRun, type UserTurn } from '../../common/conversation';
import type { GatewayClient } from '../../gateway/client';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import { runTurn, type EngineEvent, type EngineFallback, type ModelOptions, type ToolRunner } from './engine';
import { FIND_TOOLS } from './toolOffer';
import { UPDATE_PLAN } from './plan';

export const RUN_SUBAGENT: ToolDefinition = {
  name: 'run_subagent',
  kind: 'read',
  description:
    'Hand a self-contained research task to a subagent (fresh context, your read-only tools); calls in one reply run in parallel. It sees none of this chat; you get its final answer.',
  parameters: {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'Complete: what to find, where, what to report' },
      label: { type: 'string', description: 'A few words' },
    },
    required: ['task'],
  },
};

/** Tools a subagent never gets: no subagents of its own, no plan of the parent's, no tool search (it has the parent's offered tools). */
const NOT_FOR_SUBAGENTS = new Set([RUN_SUBAGENT.name, UPDATE_PLAN.name, FIND_TOOLS.name]);

/** A subagent's answer goes back whole up to this many characters (a longer one is cut, and says so). */
export const ANSWER_AT_MOST = 8_000;

/** The parallel cap's bounds (`modelGateway.agent.maxParallelSubagents`). */
export const PARALLEL_DEFAULT = 3;

/** Subagents one answer may start at most (the parallel cap bounds only how many run at once). */
export const MAX_SUBAGENTS_PER_ANSWER = 12;

/** Requests one subagent may make at most (fewer when the chat's own limit is lower). */
export const SUBAGENT_MAX_STEPS = 15;

/** Why the `n`th subagent of an answer may not start (undefined: it may): the count per answer, then the answer's cost limit. */
export function subagentRefusal(n: number, answerDollars: number | undefined, maxCostDollars: number): string | undefined {
  if (n > MAX_SUBAGENTS_PER_ANSWER)
    return `this answer has started ${MAX_SUBAGENTS_PER_ANSWER} subagents, the most one answer may; do the rest yourself or end the answer with what you have.`;
  if (maxCostDollars > 0 && answerDollars !== undefined && answerDollars >= maxCostDollars)
    return `this answer has cost $${answerDollars.toFixed(2)}, its limit of $${maxCostDollars.toFixed(2)} (modelGateway.chat.maxCostPerTurnDollars): no subagent starts; end the answer with what you have.`;
  return undefined;
}

/** The tools a subagent may have: the parent's offered read-only tools, less those it never gets. */
export function subagentTools(offered: readonly ToolDefinition[]): ToolDefinition[] {
  return offered.filter((d) => d.kind === 'read' && !NOT_FOR_SUBAGENTS.has(d.name));
}

/** What a subagent is told: short, since every one of its requests carries it. */
export function subagentPrompt(o: { folders: readonly string[]; date?: Date }): string {
  const date = (o.date ?? new Date()).toISOString().slice(0, 10);
  return [
    'You are a subagent of Model Gateway, a coding assistant in Visual Studio Code. Another agent gave you one task; do it with the read-only tools, then answer.',
    `Today is ${date}. ${o.folders.length > 0 ? `The workspace: ${o.folders.join(', ')}. Paths are relative to its root.` : ''}`.trim(),
    '- Call several tools in one reply where you can: they run in parallel.',
    '- You cannot change files or run commands. If the task needs that, say what should be changed or run.',
    '- Your final answer is all the other agent sees: lead with the findings, with paths and line numbers; no preamble, no repetition of the task.',
    'Never reveal secrets (API keys, tokens, passwords) you might see.',
  ].join('\n');
}

/** At most `max` at once; the others wait in the order they asked. */
export class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {}

  /** Runs `work` once a slot is free (`onStart` then); a signal aborted while waiting gives up the place. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal, onStart?: () => void): Promise<T> {
    if (this.active >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', giveUp);
          resolve();
        };
        const giveUp = () => {
          const at = this.waiting.indexOf(go);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(Object.assign(new Error('stopped'), { name: 'AbortError' }));
        };
        if (signal?.aborted) return giveUp();
        signal?.addEventListener('abort', giveUp, { once: true });
        this.waiting.push(go);
      });
    }
    this.active++;
    try {
      onStart?.();
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Runs `work` in a slot unless `refusal` names a reason, asked twice: when the call comes, and
 * again when its slot is free (what the subagents before it spent meanwhile counts).
 */
export async function startWithin<T>(
  slots: Slots,
  refusal: () => string | undefined,
  refused: (why: string) => T,
  work: () => Promise<T>,
  signal?: AbortSignal,
  onStart?: () => void,
): Promise<T> {
  const early = refusal();
  if (early) return refused(early);
  return slots.run(
    () => {
      const late = refusal();
      return late ? Promise.resolve(refused(late)) : work();
    },
    signal,
    onStart,
  );
}

export interface SubagentOptions {
  client: GatewayClient;
  /** The model's part of the turn (`runtime/host/modelProfile.ts`): format, window, overrides. */
  modelOptions: ModelOptions;
  system: string;
  task: string;
  tools: ToolRunner;
  /** Filled as it runs: the card shows it (`onUpdate` after each change). */
  record: SubagentRun;
  maxSteps: number;
  /** The answer's cost limit (0 or absent: none), checked against `costSoFar` (the whole answer's). */
  maxCostDollars?: number;
  costSoFar?: () => number | undefined;
  signal?: AbortSignal;
  onUpdate: (kind: EngineEvent['type']) => void;
  /** The chain of the subagent's model: a busy model hands its step to the next. */
  fallback?: EngineFallback;
}

/** The task's arguments as the model sent them, or why they cannot be used. */
export function parseSubagentArgs(raw: string): { task: string; label: string } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(raw || '{}');
  } catch {
    return { error: 'the arguments are not JSON' };
  }
  const o = (v && typeof v === 'object' ? v : {}) as { task?: unknown; label?: unknown };
  const task = typeof o.task === 'string' ? o.task.trim() : '';
  if (!task) return { error: 'task is required: the whole task, as the subagent sees nothing of this conversation' };
  const label = typeof o.label === 'string' && o.label.trim() ? o.label.trim().slice(0, 80) : task.replace(/\s+/g, ' ').slice(0, 60);
  return { task, label };
}

/**
 * Runs one subagent to its end: a conversation of one question (the task) in a turn of its own.
 * Its steps, usage and status are kept on `record`; the result is its final answer (or why there
 * is none). Stopping the parent stops it (the same signal).
 */
export async function runSubagent(o: SubagentOptions): Promise<ToolResult & { limitReached?: string }> {
  const started = Date.now();
  const now = Date.now();
  const question: UserTurn = { id: newId('u'), role: 'user', text: o.task, images: [], context: [], at: now };
  const { model, format } = o.modelOptions;
  const turn: AssistantTurn = { id: newId('a'), role: 'assistant', model, format, steps: o.record.steps, status: 'streaming', usage: o.record.usage, at: now };
  let limitReached: string | undefined;
  o.record.status = 'running';
  o.record.model = model;
  o.onUpdate('step');
  await runTurn({
    ...o.modelOptions,
    client: o.client,
    system: o.system,
    history: [question],
    turn,
    tools: o.tools,
    maxSteps: o.maxSteps,
    maxCostDollars: o.maxCostDollars,
    costSoFar: o.costSoFar,
    // No one to ask: a subagent that reaches a limit stops there (its calls not run).
    onLimit: (reached) => {
      limitReached = reached.kind === 'cost' ? `the answer's cost limit ($${reached.dollars.toFixed(2)})` : `its limit of ${o.maxSteps} requests`;
      return Promise.resolve(false);
    },
    signal: o.signal,
    onEvent: (e) => o.onUpdate(e.type),
    fallback: o.fallback,
  });
  o.record.ms = Date.now() - started;
  if (turn.fallbacks) o.record.fallbacks = turn.fallbacks;
  if (turn.usageBy) o.record.usageBy = turn.usageBy;
  if (turn.answeredBy) o.record.model = turn.answeredBy;
  o.record.status = turn.status === 'streaming' ? 'stopped' : turn.status;
  const answer =
    turn.steps
      .map((s) => s.text)
      .filter((t) => t.trim())
      .at(-1)
      ?.trim() ?? '';
  if (turn.status === 'error') {
    o.record.error = turn.error?.message;
    return {
      content: `Error: the subagent failed: ${turn.error?.message ?? 'unknown error'}${answer ? `\nWhat it had found:\n${answer}` : ''}`,
      isError: true,
    };
  }
  if (turn.status === 'stopped') return { content: `The subagent was stopped.${answer ? ` What it had found:\n${answer}` : ''}`, isError: true };
  const limit = turn.stepLimitReached ? `\n(The subagent reached ${limitReached ?? `its limit of ${o.maxSteps} requests`} before it finished.)` : '';
  const reached = turn.stepLimitReached ? { limitReached: limitReached ?? `its limit of ${o.maxSteps} requests` } : {};
  if (!answer) return { content: `The subagent ended without an answer.${limit}`, isError: true, ...reached };
  const cut = answer.length > ANSWER_AT_MOST ? `${answer.slice(0, ANSWER_AT_MOST)}\n… (the answer was cut at ${ANSWER_AT_MOST} characters)` : answer;
  return { content: `${cut}${limit}`, isError: false, ...reached };
}

/** A subagent's record before it starts (waiting for a slot). */
export function newSubagentRun(label: string, task: string, model: string): SubagentRun {
  return { label, task, model, status: 'queued', steps: [], usage: emptyUsage() };
}
