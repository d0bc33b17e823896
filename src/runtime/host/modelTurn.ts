/**
 * A model turn on the person's account: the one way a surface runs one (the chat, a background
 * session, VS Code's chat; subagents through `runtime/core/subagents.ts`). The surface declares
 * what is its own (the prompt, the history, its tools with their policy, its limit and what to do
 * at it); the model's part comes from `modelProfile`, the cost from the bounded price lookup, and
 * `runTurn` is called here only (lint holds the features to it).
 */
import * as vscode from 'vscode';
import type { AssistantTurn, WireFormat } from '../../common/conversation';
import { runTurn, type ModelOptions, type RunOptions } from '../core/engine';
import type { CostMeter } from './cost';
import { modelProfile, type TurnServices } from './modelProfile';
import { chainFor, engineFallback } from './fallbackChain';

export interface ModelTurn extends Omit<RunOptions, keyof ModelOptions | 'client' | 'maxCostDollars' | 'costSoFar' | 'fallback'> {
  model: string;
  /** The surface's choice of wire format (the chat's picker); else the pattern and the gateway's list decide. */
  format?: WireFormat;
  /** Who runs it (log lines say so). */
  surface: string;
  /** The turn's cost limit in dollars (0: none), and the meter that counts what it has cost. */
  costLimit?: { dollars: number; meter: CostMeter };
  /** What the surface sets over the model's options (VS Code's chat fits its own window). */
  modelOverrides?: Partial<ModelOptions>;
  /** null: this turn asks only its model (no fallback chain). */
  fallback?: null;
}

/** Runs one turn to its end; never throws (failures land in `turn.status`/`turn.error`). */
export function runModelTurn(services: TurnServices, t: ModelTurn): Promise<AssistantTurn> {
  const { surface, costLimit, modelOverrides, format, model: _chosen, fallback: _fallback, ...own } = t;
  // The person's chain for the model; the breaker may have moved the chosen model last.
  const models = t.fallback === null ? [t.model] : chainFor(t.model);
  const first = models[0];
  if (first !== t.model) {
    // Tried last for now: the turn starts with the next model, and its card says why.
    t.turn.answeredBy = first;
    t.turn.usageBy = {};
    (t.turn.fallbacks ??= []).push({ from: t.model, to: first, kind: 'breaker', label: vscode.l10n.t('busy twice in 5 min: tried last'), at: Date.now() });
  }
  // The surface's format choice is for its own model; a fallback speaks its own.
  const optionsFor = (m: string) => modelProfile(services, m, { format: m === t.model ? format : undefined, purpose: surface }).options;
  const profile = modelProfile(services, first, { format: first === t.model ? format : undefined, purpose: surface });
  return runTurn({
    ...profile.options,
    ...(first === t.model ? modelOverrides : {}),
    ...own,
    client: services.client(),
    fallback: engineFallback(services, surface, models, optionsFor),
    ...(costLimit ? { maxCostDollars: costLimit.dollars, costSoFar: () => costLimit.meter.dollars() } : {}),
  });
}
