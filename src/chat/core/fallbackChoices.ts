/**
 * The chat's choices about the fallback chain, without `vscode`: which answer may be continued
 * with which model (only the one the engine offered on the turn, never a model the view names),
 * and what the chain picker writes to the person's `modelGateway.fallbackModels`.
 */
import type { AssistantTurn, Turn } from '../../common/conversation';
import { MAX_FALLBACKS } from '../../runtime/core/fallback';

export type ContinueCheck = { turn: AssistantTurn } | { refused: 'no-turn' | 'not-last' | 'not-offered' };

/**
 * Whether "Continue with `model`" may run for `turnId`: the conversation's last answer, ended in
 * an error that offered exactly that model (`error.continueWith`).
 */
export function continueCheck(turns: readonly Turn[], turnId: string, model: string): ContinueCheck {
  const at = turns.findIndex((t) => t.id === turnId && t.role === 'assistant');
  const turn = turns[at] as AssistantTurn | undefined;
  if (!turn) return { refused: 'no-turn' };
  if (at !== turns.length - 1) return { refused: 'not-last' };
  if (turn.status !== 'error' || !turn.error?.continueWith || turn.error.continueWith !== model) return { refused: 'not-offered' };
  return { turn };
}

/**
 * The order the person picked models in: kept ones in their order, new ones after them (a quick
 * pick gives its selection in list order, not in the order it was made).
 */
export function pickOrder(before: readonly string[], selected: readonly string[]): string[] {
  const kept = before.filter((m) => selected.includes(m));
  return [...kept, ...selected.filter((m) => !kept.includes(m))];
}

export interface ChainWrite {
  /** The whole `modelGateway.fallbackModels` value to write, or undefined to remove the setting. */
  chains: Record<string, string[]> | undefined;
  /** The chain kept for the model (at most `MAX_FALLBACKS`, in pick order). */
  kept: string[];
  /** Picked past the limit: left out. */
  dropped: string[];
}

/**
 * The user settings' chains after the person picked `picked` (in pick order) for `model`: at most
 * `MAX_FALLBACKS` kept, the model itself and repeats left out; an empty pick removes the model's
 * entry (the default chain applies to it again), and an empty map removes the setting.
 */
export function chainWrite(current: Readonly<Record<string, readonly string[]>> | undefined, model: string, picked: readonly string[]): ChainWrite {
  const clean: string[] = [];
  for (const m of picked) {
    const id = m.trim();
    if (id && id !== model && !clean.includes(id)) clean.push(id);
  }
  const kept = clean.slice(0, MAX_FALLBACKS);
  const chains: Record<string, string[]> = {};
  // The other models' chains as they were, this one's in its place (or added at the end).
  for (const [k, v] of Object.entries(current ?? {})) {
    if (k !== model) chains[k] = [...v];
    else if (kept.length) chains[k] = kept;
  }
  if (kept.length) chains[model] = kept;
  return { chains: Object.keys(chains).length ? chains : undefined, kept, dropped: clean.slice(MAX_FALLBACKS) };
}
