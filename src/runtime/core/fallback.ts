/**
 * The fallback chain: when a model is busy, the next model in the person's chain answers. One
 * place decides, for every surface that asks a model (the chat, subagents, background sessions,
 * VS Code's chat, MCP sampling, commit messages and reviews, inline completions and next edits):
 *
 * - **when to move on** (`busyReason`): a 429 (after the wait the person allows), a 503 with no
 *   channel or overloaded, an upstream's 529, another 5xx after the gateway's own retries across
 *   its channels, a stream that sent no token in time. Never a 400/401/403/404/413 or a content
 *   refusal: those are the person's to fix, and another model would only fail the same way or
 *   hide the cause;
 * - **in which order** (`chainFor`, `Breaker`): the person's chain for the model, else the
 *   default chain; a model that failed over twice in five minutes is tried last for five;
 * - **never twice**: a request that fails over is never sent again to the same model for the same
 *   step, and nothing moves on once an answer has begun to be shown (`runWithFallback` asks).
 */

/** Why a model was left for the next one. */
export type BusyKind = 'rate-limit' | 'no-channel' | 'overloaded' | 'server-error' | 'stalled';

export interface BusyReason {
  kind: BusyKind;
  status?: number;
  /** A short account for the card and the log: "503: no available channel". */
  label: string;
}

/** One move from a busy model to the next, as the card and the Usage view show it. */
export interface FallbackRecord {
  from: string;
  to: string;
  kind: BusyKind;
  status?: number;
  label: string;
  at: number;
}

/** What the person set: a chain per model, a default chain, the wait a 429 may take, the first token's limit. */
export interface FallbackSettings {
  chains: Readonly<Record<string, readonly string[]>>;
  defaultChain: readonly string[];
  /** A 429 is waited out on the same model for at most this long before the next model is asked (0: at once). */
  rateLimitWaitMs: number;
  /** No token within this long: the model counts as stalled and the next one is asked (0: no limit). */
  firstTokenMs: number;
}

/** Models after the first in a chain: as Claude Code's `fallbackModel`, a few, not a list to crawl. */
export const MAX_FALLBACKS = 3;

/** The error a request ends with when its first token did not come in time (the caller aborted it). */
export class StallError extends Error {
  override readonly name = 'StallError';
  constructor(
    readonly model: string,
    readonly waitedMs: number,
  ) {
    super(`${model} sent no token in ${Math.round(waitedMs / 1000)} s.`);
  }
}

const NO_CHANNEL = /no available channel|无可用渠道|负载已饱和|no_available_channel|get_channel_failed/i;
const OVERLOADED = /overloaded|过载|capacity/i;
/** A refusal of the content, whatever status carried it: another model is not the person's answer. */
const CONTENT_REFUSAL = /content[_ ]?(policy|filter|management)|safety|moderation|sensitive|违规|敏感|prompt[_ ]blocked/i;

/**
 * Why the error means the model is busy (and the next one should answer), or undefined when it
 * is not the model's business (the request, the key, the balance, the network, a stop).
 */
export function busyReason(err: unknown): BusyReason | undefined {
  const e = (err ?? {}) as { name?: string; status?: number; type?: string; code?: string; serverMessage?: string; message?: string };
  if (e.name === 'StallError') return { kind: 'stalled', label: (err as StallError).message.replace(/\.$/, '') };
  if (e.name === 'AbortError') return undefined;
  const said = `${e.serverMessage ?? e.message ?? ''} ${e.type ?? ''} ${e.code ?? ''}`;
  if (CONTENT_REFUSAL.test(said) && e.status !== 429 && e.status !== 529) return undefined;
  const status = e.status;
  // An error event inside a stream before any token (messages' `overloaded_error`, a relayed 5xx).
  if (e.name === 'StreamError') {
    if (/overloaded/i.test(said)) return { kind: 'overloaded', status: 529, label: 'overloaded' };
    if (/rate_limit|rate limit|429/i.test(said)) return { kind: 'rate-limit', status: 429, label: '429: rate limited' };
    return undefined;
  }
  if (status === 429) return { kind: 'rate-limit', status, label: rateLabel(said) };
  if (status === 529 || (status === 503 && OVERLOADED.test(said) && !NO_CHANNEL.test(said)))
    return { kind: 'overloaded', status, label: `${status}: overloaded` };
  if (status === 503) return { kind: 'no-channel', status, label: NO_CHANNEL.test(said) ? '503: no available channel' : '503: unavailable' };
  if (status !== undefined && status >= 500 && status !== 501 && status !== 505) return { kind: 'server-error', status, label: `${status}: upstream failed` };
  return undefined;
}

function rateLabel(said: string): string {
  return /分钟内最多请求/.test(said) ? "429: the gateway's rate limit for the model" : '429: rate limited';
}

/**
 * A model that failed over twice within five minutes is tried last for the next five: shared by
 * every surface in the window, so a model the chat found busy is not tried first by a background
 * session a minute later.
 */
export class Breaker {
  static readonly WINDOW_MS = 5 * 60_000;
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A model failed over now. */
  record(model: string): void {
    const t = this.now();
    const kept = (this.failures.get(model) ?? []).filter((at) => t - at < Breaker.WINDOW_MS);
    kept.push(t);
    this.failures.set(model, kept.slice(-2));
  }

  /** Until when the model is tried last (undefined: it is not). */
  trippedUntil(model: string): number | undefined {
    const times = this.failures.get(model) ?? [];
    if (times.length < 2) return undefined;
    const [first, second] = times.slice(-2);
    if (second - first >= Breaker.WINDOW_MS) return undefined;
    const until = second + Breaker.WINDOW_MS;
    return until > this.now() ? until : undefined;
  }

  /** Every model tripped now, with when it is tried in its place again. */
  tripped(): { model: string; until: number }[] {
    const out: { model: string; until: number }[] = [];
    for (const model of this.failures.keys()) {
      const until = this.trippedUntil(model);
      if (until) out.push({ model, until });
    }
    return out;
  }

  /** The models in order, the tripped ones moved to the end (their order kept). */
  order(models: readonly string[]): string[] {
    const open = models.filter((m) => !this.trippedUntil(m));
    return [...open, ...models.filter((m) => this.trippedUntil(m))];
  }

  clear(): void {
    this.failures.clear();
  }
}

/** The person's chain for a model, without the model itself or repeats, at most `MAX_FALLBACKS` long. */
export function chainOf(model: string, s: Pick<FallbackSettings, 'chains' | 'defaultChain'>): string[] {
  const own = s.chains[model] ?? s.defaultChain;
  const out: string[] = [];
  for (const m of own) {
    const id = m.trim();
    if (id && id !== model && !out.includes(id)) out.push(id);
  }
  return out.slice(0, MAX_FALLBACKS);
}

/**
 * The models to ask, in order: the one chosen first, then its chain; a model the breaker tripped
 * is asked after the others (the chosen one included: a busy primary is not asked first again
 * and again).
 */
export function modelsToTry(model: string, s: Pick<FallbackSettings, 'chains' | 'defaultChain'>, breaker?: Breaker): string[] {
  const all = [model, ...chainOf(model, s)];
  return breaker ? breaker.order(all) : all;
}

/** How a request is sent when a next model waits: no error status tried again, a 429 waited out only within the person's wait. */
export interface RetryOptions {
  statuses?: boolean;
  maxRetryAfterMs?: number;
}

export function retryFor(hasNext: boolean, s: Pick<FallbackSettings, 'rateLimitWaitMs'>): RetryOptions | undefined {
  return hasNext ? { statuses: false, maxRetryAfterMs: s.rateLimitWaitMs } : undefined;
}

export interface FallbackAttempt {
  model: string;
  /** How the transport may retry this request (none of a busy answer when a next model waits). */
  retry?: RetryOptions;
  /** Aborted when the first token is late (a next model waits); the caller's signal otherwise. */
  signal?: AbortSignal;
  /** Call on the first token: the stall timer stops. */
  heard: () => void;
}

export interface WithFallback<T> {
  models: readonly string[];
  settings: Pick<FallbackSettings, 'rateLimitWaitMs' | 'firstTokenMs'>;
  signal?: AbortSignal;
  /** Skips a model that cannot take this request (tools, images) without asking it. */
  suits?: (model: string) => boolean;
  /** Whether anything of the answer has been shown (then nothing moves on: the partial answer stays). */
  shown?: () => boolean;
  /** A model failed over (the breaker and the log). */
  onFallback?: (f: FallbackRecord) => void;
  attempt: (a: FallbackAttempt) => Promise<T>;
  now?: () => number;
}

export interface FallbackOutcome<T> {
  value: T;
  /** The model that answered. */
  model: string;
  fallbacks: FallbackRecord[];
}

/** The error when every model of the chain was busy: the last one's, with the moves made. */
export type ChainError = Error & { fallbacks?: FallbackRecord[] };

/**
 * Asks the models in order until one answers. A busy answer before anything was shown moves on;
 * any other error, or a busy one once something was shown, ends it (with the moves so far on the
 * error as `fallbacks`).
 */
export async function runWithFallback<T>(o: WithFallback<T>): Promise<FallbackOutcome<T>> {
  const now = o.now ?? Date.now;
  const candidates = o.models.filter((m, i) => i === 0 || !o.suits || o.suits(m));
  const fallbacks: FallbackRecord[] = [];
  for (let i = 0; ; i++) {
    const model = candidates[i];
    const hasNext = i + 1 < candidates.length;
    const stall = hasNext && o.settings.firstTokenMs > 0 ? stallTimer(model, o.settings.firstTokenMs, o.signal) : undefined;
    try {
      const value = await o.attempt({
        model,
        retry: retryFor(hasNext, o.settings),
        signal: stall?.signal ?? o.signal,
        heard: () => stall?.heard(),
      });
      return { value, model, fallbacks };
    } catch (raw) {
      const err = stall?.stalled() && !o.signal?.aborted ? new StallError(model, o.settings.firstTokenMs) : raw;
      const reason = busyReason(err);
      if (!reason || !hasNext || o.signal?.aborted || o.shown?.()) throw Object.assign(err as ChainError, fallbacks.length ? { fallbacks } : {});
      const f: FallbackRecord = { from: model, to: candidates[i + 1], kind: reason.kind, status: reason.status, label: reason.label, at: now() };
      fallbacks.push(f);
      o.onFallback?.(f);
    } finally {
      stall?.dispose();
    }
  }
}

/** A signal that aborts when no token came within `ms` (and when the caller's does). */
export function stallTimer(model: string, ms: number, outer?: AbortSignal) {
  const controller = new AbortController();
  let fired = false;
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
    fired = true;
    controller.abort(new StallError(model, ms));
  }, ms);
  const onOuter = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onOuter, { once: true });
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  return {
    signal: controller.signal,
    heard: stop,
    stalled: () => fired,
    dispose: () => {
      stop();
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/** The line a card shows: "claude-sonnet-4 busy (503: no available channel) → answered by deepseek-v3.2". */
export function fallbackLine(fallbacks: readonly FallbackRecord[], answeredBy?: string): string {
  const parts = fallbacks.map((f) => `${f.from} busy (${f.label})`);
  const to = answeredBy ?? fallbacks.at(-1)?.to;
  return to ? `${parts.join(' → ')} → answered by ${to}` : parts.join(' → ');
}
