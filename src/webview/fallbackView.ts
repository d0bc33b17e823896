/**
 * The line an answer (or a subagent) shows when a busy model left it to the next one of the
 * person's chain: "claude-sonnet-4 busy (503: no available channel) → answered by deepseek-v3.2".
 * Worded here, in the display language, from each move's kind and status (the host's `label` is
 * English, kept for the log and for a kind this view does not know). No DOM: unit-tested in Node.
 */
import * as l10n from '@vscode/l10n';
import type { TurnFallback } from '../common/conversation';

/** One move, as the line says it: "claude-sonnet-4 busy (503: no available channel)". */
export function fallbackPart(f: Pick<TurnFallback, 'from' | 'kind' | 'status' | 'label'>): string {
  switch (f.kind) {
    case 'rate-limit':
      return /rate limit for the model/.test(f.label)
        ? l10n.t("{0} busy ({1}: the gateway's rate limit for the model)", f.from, f.status ?? 429)
        : l10n.t('{0} busy ({1}: rate limited)', f.from, f.status ?? 429);
    case 'no-channel':
      return /no available channel/i.test(f.label)
        ? l10n.t('{0} busy ({1}: no available channel)', f.from, f.status ?? 503)
        : l10n.t('{0} busy ({1}: unavailable)', f.from, f.status ?? 503);
    case 'overloaded':
      return l10n.t('{0} busy ({1}: overloaded)', f.from, f.status ?? 529);
    case 'server-error':
      return f.status !== undefined ? l10n.t('{0} busy ({1}: upstream failed)', f.from, f.status) : l10n.t('{0} busy (upstream failed)', f.from);
    case 'stalled': {
      const seconds = /in (\d+) s$/.exec(f.label)?.[1];
      return seconds ? l10n.t('{0} busy (no token in {1} s)', f.from, seconds) : l10n.t('{0} busy (no token in time)', f.from);
    }
    case 'breaker':
      return l10n.t('{0} busy twice in 5 min: tried last', f.from);
    default:
      return l10n.t('{0} busy ({1})', f.from, f.label);
  }
}

/**
 * The whole line: each move, then the model that answered (`answeredBy`, else the last move's
 * `to`). An answer that ended in an error says the last model was tried, not that it answered.
 * Empty without moves.
 */
export function fallbackText(
  fallbacks: readonly Pick<TurnFallback, 'from' | 'to' | 'kind' | 'status' | 'label'>[] | undefined,
  answeredBy?: string,
  status?: string,
): string {
  if (!fallbacks?.length) return '';
  const to = answeredBy ?? fallbacks[fallbacks.length - 1].to;
  const end = status === 'error' ? l10n.t('tried {0}', to) : l10n.t('answered by {0}', to);
  return [...fallbacks.map(fallbackPart), end].join(' → ');
}

/**
 * The model an answer's header names: the one that answered when a fallback did (while it streams,
 * the move's `to` comes a moment before `answeredBy`).
 */
export function answeringModel(t: { model: string; answeredBy?: string; fallbacks?: readonly Pick<TurnFallback, 'to'>[] }): string {
  return t.answeredBy ?? t.fallbacks?.[t.fallbacks.length - 1]?.to ?? t.model;
}
