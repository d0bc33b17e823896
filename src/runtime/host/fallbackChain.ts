/**
 * The fallback chain for every surface of this window: the person's settings, one breaker shared
 * by all (a model the chat found busy is tried last by a background session too), the log line,
 * and the count of fallbacks per model and day the Usage view shows.
 */
import * as vscode from 'vscode';
import { fallbackSettings, modelOverride } from '../../shell/config';
import { redact } from '../../shell/redact';
import { takesTools } from '../../common/conversation';
import { Breaker, fallbackLine, modelsToTry, runWithFallback, type FallbackOutcome, type FallbackRecord, type WithFallback } from '../core/fallback';
import { localDay } from '../core/limits';
import type { EngineFallback } from '../core/engine';
import type { TurnServices } from './modelProfile';

/** The window's breaker: a model that failed over twice in five minutes is tried last for five. */
export const breaker = new Breaker();

const changed = new vscode.EventEmitter<FallbackRecord>();
/** A model failed over (the model menu shows the breaker's state again; the Usage view counts it). */
export const onDidFallBack = changed.event;

/** Fallbacks per local day and model that failed over, kept in global state for the Usage view. */
const LEDGER_KEY = 'modelGateway.fallbacks';
const KEEP_DAYS = 31;
let ledger: vscode.Memento | undefined;

/** Where the counts are kept (the extension's global state), set once at activation. */
export function keepFallbackCounts(state: vscode.Memento): vscode.Disposable {
  ledger = state;
  return changed;
}

export type FallbackCounts = Record<string, Record<string, number>>;

export function fallbackCounts(): FallbackCounts {
  const raw = ledger?.get<unknown>(LEDGER_KEY);
  if (!raw || typeof raw !== 'object') return {};
  const out: FallbackCounts = {};
  for (const [day, models] of Object.entries(raw as Record<string, unknown>)) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !models || typeof models !== 'object') continue;
    out[day] = Object.fromEntries(Object.entries(models as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number'));
  }
  return out;
}

function count(f: FallbackRecord): void {
  if (!ledger) return;
  const all = fallbackCounts();
  const day = localDay(f.at);
  all[day] = { ...all[day], [f.from]: (all[day]?.[f.from] ?? 0) + 1 };
  for (const old of Object.keys(all)
    .sort()
    .slice(0, Math.max(0, Object.keys(all).length - KEEP_DAYS)))
    delete all[old];
  void ledger.update(LEDGER_KEY, all);
}

/** Called for each move from a busy model: the breaker, the log, the count. */
export function recordFallback(services: Pick<TurnServices, 'log'>, purpose: string, f: FallbackRecord): void {
  breaker.record(f.from);
  services.log.warn(`${purpose}: ${redact(fallbackLine([f]))}`);
  count(f);
  changed.fire(f);
}

/** The models to ask for `model`, in order: itself, then its chain, a tripped one last. */
export function chainFor(model: string): string[] {
  return modelsToTry(model, fallbackSettings(), breaker);
}

/** Inline completions' and next edits' models after `model`: their own chain, a tripped one last (the chosen model stays first: the cap and the setting are its). */
export function completionsChainAfter(model: string): string[] {
  return breaker.order(fallbackSettings().completions).filter((m) => m !== model);
}

/** Whether a model takes tools: the person's override, else what its name says. */
export function modelTakesTools(services: Pick<TurnServices, 'settings'>, model: string): boolean {
  return modelOverride(services.settings().modelOverrides, model).toolCalling ?? takesTools(model);
}

/**
 * The engine's fallback for a turn that starts with `first` (the chosen model, or the first of its
 * chain when the breaker moved the chosen one last), or undefined without a chain.
 */
export function engineFallback(
  services: TurnServices,
  purpose: string,
  models: readonly string[],
  optionsFor: EngineFallback['optionsFor'],
): EngineFallback | undefined {
  if (models.length < 2) return undefined;
  const s = fallbackSettings();
  return {
    models: models.slice(1),
    settings: s,
    optionsFor,
    takesTools: (m) => modelTakesTools(services, m),
    onFallback: (f) => recordFallback(services, purpose, f),
  };
}

/**
 * One request with no tools (MCP sampling, commit messages, reviews) on `model` or, when it is
 * busy, the next of its chain. `attempt` gets the model to ask and how to send the request.
 */
export function askWithFallback<T>(
  services: Pick<TurnServices, 'log'>,
  purpose: string,
  model: string,
  o: Omit<WithFallback<T>, 'models' | 'settings' | 'onFallback'>,
): Promise<FallbackOutcome<T>> {
  return runWithFallback({
    ...o,
    models: chainFor(model),
    settings: fallbackSettings(),
    onFallback: (f) => recordFallback(services, purpose, f),
  });
}
