/**
 * One inline completion from the code around the cursor to the text shown: the typing-through
 * cache first, then an adaptive pause (cancelled by the next key), then the model by the path it
 * takes (fill-in-the-middle, the prompt alone, or a chat prompt), learned from its refusals.
 * No `vscode` here: the provider adapts it, and the benchmark drives the same code.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { GatewayClient } from '../../gateway/client';
import { CompletionCache } from './cache';
import { cleanChatAnswer, cutPrefix, cutSuffix, withoutRepeatedSuffix } from './context';
import { AdaptiveDebounce } from './debounce';
import { runWithFallback, type FallbackAttempt, type FallbackRecord } from '../../runtime/core/fallback';
import { chatRequest, fimRequest, limitLines, nextPath, prefixOnlyRequest, type CompletionPath, type HoleContext } from './request';

/** Tokens a suggestion may have: a dozen lines of code. */
const MAX_COMPLETION_TOKENS = 256;

export interface CompletionTokens {
  prompt: number;
  completion: number;
}

export interface CompleterHost {
  client(): GatewayClient;
  /** The path learned for a model (undefined: not learned yet, fill-in-the-middle is tried). */
  learnedPath(model: string): CompletionPath | undefined;
  remember(model: string, path: CompletionPath): Promise<void> | void;
  /** Called after every answered request with what it used (the host prices and counts it). */
  answered(model: string, tokens: CompletionTokens): Promise<void> | void;
  /** A busy model was left for the next of the completions' chain (the breaker, the log). */
  fellBack?(f: FallbackRecord): void;
  /** The path the person set for a model (`modelOverrides`), for the chain's models. */
  overrideFor?(model: string): CompletionPath | undefined;
}

/** Names of code models that fill the middle; another model of the chain is asked as a chat model until it has learned otherwise. */
const FIM_MODEL = /cod(e|er|estral)|starcoder|fim|santacoder|stable-code/i;

export interface HoleRequest {
  /** The document's text before and after the cursor (cut to the budgets here). */
  before: string;
  after: string;
  language: string;
  path: string;
  model: string;
  maxPrefixTokens: number;
  maxSuffixTokens: number;
  maxLines: number;
  /** The path set for the model (then it is not learned or changed). */
  pathOverride?: CompletionPath;
  /**
   * Models asked, in order, when `model` is busy (429, 503, 529, 5xx): the completions' own chain.
   * Each by its own path (a chat model with the chat prompt); no busy answer is sent again.
   */
  fallbackModels?: readonly string[];
  /** Typing (wait for a pause) or an explicit trigger (ask at once). */
  automatic: boolean;
  /** Checked once the pause is over, before anything is sent (turned off, snoozed, the cap reached meanwhile). */
  stillWanted?: () => boolean;
  /** Code from other files, given the prefix; called once the pause is over. */
  snippets?: (prefix: string) => Promise<{ path: string; text: string }[]>;
}

export type CompletionOutcome =
  | { kind: 'cache'; text: string }
  | { kind: 'answer'; text: string; path: CompletionPath; pauseMs: number; waitedMs: number; requestMs: number }
  | { kind: 'empty'; path: CompletionPath }
  | { kind: 'cancelled'; sent: boolean }
  | { kind: 'failed'; error: unknown };

export interface CompleterStats {
  requests: number;
  cancelled: number;
  cacheHits: number;
  failures: number;
  /** Prompt tokens sent, completion tokens received (answered requests). */
  promptTokens: number;
  completionTokens: number;
}

export class InlineCompleter {
  readonly cache = new CompletionCache();
  readonly debounce: AdaptiveDebounce;
  readonly stats: CompleterStats = { requests: 0, cancelled: 0, cacheHits: 0, failures: 0, promptTokens: 0, completionTokens: 0 };

  constructor(
    private readonly host: CompleterHost,
    o: { debounce?: AdaptiveDebounce; cache?: boolean } = {},
  ) {
    this.debounce = o.debounce ?? new AdaptiveDebounce();
    this.useCache = o.cache ?? true;
  }

  private readonly useCache: boolean;

  pathOf(model: string, override?: CompletionPath): CompletionPath {
    return override ?? this.host.learnedPath(model) ?? 'fim';
  }

  /** A chain model's path: the person's, else learned, else by its name (a chat model with the chat prompt at once). */
  private chainPath(model: string): CompletionPath | undefined {
    const set = this.host.overrideFor?.(model);
    if (set) return set;
    return this.host.learnedPath(model) || FIM_MODEL.test(model) ? undefined : 'chat';
  }

  async complete(r: HoleRequest, signal: AbortSignal): Promise<CompletionOutcome> {
    const prefix = cutPrefix(r.before, r.maxPrefixTokens);
    const suffix = cutSuffix(r.after, r.maxSuffixTokens);
    if (r.automatic) this.debounce.keystroke(performance.now());
    const reuse = this.useCache ? this.cache.get(prefix, suffix) : undefined;
    if (reuse) {
      this.stats.cacheHits++;
      return { kind: 'cache', text: reuse };
    }
    const waitStart = performance.now();
    const pauseMs = r.automatic ? this.debounce.delayMs : 0;
    if (pauseMs) await delay(pauseMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return { kind: 'cancelled', sent: false };
    const snippets = r.snippets ? await r.snippets(prefix).catch(() => []) : [];
    if (signal.aborted || (r.stillWanted && !r.stillWanted())) return { kind: 'cancelled', sent: false };
    const waitedMs = performance.now() - waitStart;
    const hole: HoleContext = { prefix, suffix, language: r.language, path: r.path, snippets, maxTokens: MAX_COMPLETION_TOKENS };
    const started = performance.now();
    this.stats.requests++;
    try {
      const { value: answer, model } = await runWithFallback({
        models: [r.model, ...(r.fallbackModels ?? []).filter((m) => m !== r.model)],
        // A completion is short and wanted now: no wait for a 429, and no first-token timer (the request is the answer).
        settings: { rateLimitWaitMs: 0, firstTokenMs: 0 },
        signal,
        onFallback: (f) => this.host.fellBack?.(f),
        attempt: (a) => this.ask({ ...r, model: a.model, pathOverride: a.model === r.model ? r.pathOverride : this.chainPath(a.model) }, hole, a),
      });
      const requestMs = performance.now() - started;
      this.debounce.record(requestMs);
      this.stats.promptTokens += answer.tokens.prompt;
      this.stats.completionTokens += answer.tokens.completion;
      await this.host.answered(model, answer.tokens);
      const text = limitLines(answer.text, r.maxLines);
      if (!text.trim()) return { kind: 'empty', path: answer.path };
      if (this.useCache) this.cache.set(prefix, suffix, text);
      return { kind: 'answer', text, path: answer.path, pauseMs, waitedMs, requestMs };
    } catch (error) {
      if (signal.aborted) {
        this.stats.cancelled++;
        return { kind: 'cancelled', sent: true };
      }
      this.stats.failures++;
      return { kind: 'failed', error };
    }
  }

  /** Asks by the model's path; a refused `suffix` or a chat-only model moves it to the next path, remembered. */
  private async ask(
    r: HoleRequest,
    hole: HoleContext,
    a: Pick<FallbackAttempt, 'signal' | 'retry'>,
  ): Promise<{ text: string; path: CompletionPath; tokens: CompletionTokens }> {
    const client = this.host.client();
    const options = { signal: a.signal, retry: a.retry };
    let path = this.pathOf(r.model, r.pathOverride);
    for (;;) {
      try {
        if (path === 'chat') {
          const reply = await client.chat.completions.create(chatRequest(r.model, hole), options);
          const content = reply.choices[0]?.message.content;
          return { text: cleanChatAnswer(typeof content === 'string' ? content : '', hole.prefix, hole.suffix), path, tokens: tokensOf(reply.usage) };
        }
        const reply = await client.completions.create(path === 'fim' ? fimRequest(r.model, hole) : prefixOnlyRequest(r.model, hole), options);
        return { text: withoutRepeatedSuffix(reply.choices[0]?.text ?? '', hole.suffix), path, tokens: tokensOf(reply.usage) };
      } catch (err) {
        const next = r.pathOverride ? undefined : nextPath(path, err);
        if (!next) throw err;
        path = next;
        await this.host.remember(r.model, path);
      }
    }
  }
}

function tokensOf(usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): CompletionTokens {
  return { prompt: usage?.prompt_tokens ?? 0, completion: usage?.completion_tokens ?? 0 };
}
