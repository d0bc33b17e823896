/**
 * A model turn on the person's account: the one way a surface runs one (the chat, a background
 * session, VS Code's chat; subagents through `runtime/core/subagents.ts`). The surface declares
 * what is its own (the prompt, the history, its tools with their policy, its limit and what to do
 * at it); the model's part comes from `modelProfile`, the cost from the bounded price lookup, and
 * `runTurn` is called here only (lint holds the features to it).
 */
import type { AssistantTurn, WireFormat } from '../../common/conversation';
import { runTurn, type ModelOptions, type RunOptions } from '../core/engine';
import type { CostMeter } from './cost';
import { modelProfile, type TurnServices } from './modelProfile';

export interface ModelTurn extends Omit<RunOptions, keyof ModelOptions | 'client' | 'maxCostDollars' | 'costSoFar'> {
  model: string;
  /** The surface's choice of wire format (the chat's picker); else the pattern and the gateway's list decide. */
  format?: WireFormat;
  /** Who runs it (log lines say so). */
  surface: string;
  /** The turn's cost limit in dollars (0: none), and the meter that counts what it has cost. */
  costLimit?: { dollars: number; meter: CostMeter };
  /** What the surface sets over the model's options (VS Code's chat fits its own window). */
  modelOverrides?: Partial<ModelOptions>;
}

/** Runs one turn to its end; never throws (failures land in `turn.status`/`turn.error`). */
export function runModelTurn(services: TurnServices, t: ModelTurn): Promise<AssistantTurn> {
  const { surface, costLimit, modelOverrides, format, ...own } = t;
  const profile = modelProfile(services, t.model, { format, purpose: surface });
  return runTurn({
    ...profile.options,
    ...modelOverrides,
    ...own,
    client: services.client(),
    ...(costLimit ? { maxCostDollars: costLimit.dollars, costSoFar: () => costLimit.meter.dollars() } : {}),
  });
}
