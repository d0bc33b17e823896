import * as vscode from 'vscode';
import type * as Gateway from '../../gateway';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import type { CompletionSpendSource } from '../../common/usageReport';
import { FALLBACK_PRICE_PER_MTOK } from '../../lm/core/limits';
import { CompletionCache } from '../core/cache';
import { cleanChatAnswer, cutPrefix, cutSuffix, withoutRepeatedSuffix } from '../core/context';
import { AdaptiveDebounce } from '../core/debounce';
import { addAccepted, addRequest, dayOf, readLedger, type CompletionDay } from '../core/ledger';
import { chatRequest, fimRequest, limitLines, nextPath, prefixOnlyRequest, type CompletionPath, type HoleContext } from '../core/request';
import { languageOn, type CompletionSettings } from './settings';

const PATHS = 'modelGateway.completions.paths';
const LEDGER = 'modelGateway.completions.ledger';
/** The command an accepted suggestion runs (it counts the accepted characters). */
export const ACCEPTED_COMMAND = 'modelGateway.completions.accepted';
/** Tokens a suggestion may have: a dozen lines of code. */
const MAX_COMPLETION_TOKENS = 256;

/** Why no request was sent for a trigger (kept for the status bar tooltip and the tests). */
export type Skip = 'off' | 'no-model' | 'snoozed' | 'not-configured' | 'language' | 'suggest-widget' | 'selection' | 'too-large' | 'withheld' | 'cap' | 'cancelled';

export interface CompletionStats {
  requests: number;
  cancelled: number;
  cacheHits: number;
  failures: number;
  lastSkip?: Skip;
  lastError?: string;
  /** The last request's path and the milliseconds it took. */
  last?: { path: CompletionPath; ms: number };
}

/** Context from other files for a hole (recent edits, the keyword index), within a time budget. */
export type SnippetSource = (document: vscode.TextDocument, prefix: string, budgetMs: number) => Promise<{ path: string; text: string }[]>;

function sleep(ms: number, token: vscode.CancellationToken): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const sub = token.onCancellationRequested(done);
    function done() {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    }
  });
}

/**
 * Ghost text through the gateway: waits an adaptive pause after the last key, reuses what the
 * cache holds while the person types through a suggestion, asks the model by the path it takes
 * (fill-in-the-middle, else the prompt alone, else a chat prompt; learned once per gateway and
 * model), cancels the request when the person types on, and counts what it spends.
 */
export class GatewayInlineCompletions implements vscode.InlineCompletionItemProvider {
  readonly cache = new CompletionCache();
  readonly debounce = new AdaptiveDebounce();
  readonly stats: CompletionStats = { requests: 0, cancelled: 0, cacheHits: 0, failures: 0 };
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the stats, the snooze or today's spend change (the status bar listens). */
  readonly onDidChange = this.changed.event;
  private snoozedUntilMs = 0;
  private snoozeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly services: GatewayFeature & PriceSource,
    private readonly state: vscode.Memento,
    private readonly settings: () => CompletionSettings,
    /** Why a file gets no completions (secret, ignored), if it gets none. */
    private readonly withheld: (uri: vscode.Uri) => Promise<string | undefined>,
    private readonly snippets: SnippetSource,
  ) {}

  get snoozedUntil(): number {
    return this.snoozedUntilMs > Date.now() ? this.snoozedUntilMs : 0;
  }

  snooze(ms: number): void {
    clearTimeout(this.snoozeTimer);
    this.snoozedUntilMs = ms > 0 ? Date.now() + ms : 0;
    if (ms > 0) this.snoozeTimer = setTimeout(() => this.changed.fire(), ms + 50);
    this.changed.fire();
  }

  today(): CompletionDay {
    return dayOf(readLedger(this.state.get(LEDGER)), Date.now());
  }

  ledger(): ReturnType<typeof readLedger> {
    return readLedger(this.state.get(LEDGER));
  }

  /** The Usage view's source: spend per day and model, today against the cap. */
  spendSource(): CompletionSpendSource {
    return {
      spendByDay: () => this.ledger(),
      today: () => this.today(),
      capDollars: () => this.settings().capDollars,
      inUse: () => !!this.settings().model,
    };
  }

  async recordAccepted(chars: number): Promise<void> {
    await this.state.update(LEDGER, addAccepted(this.ledger(), Date.now(), chars));
    this.changed.fire();
  }

  private pathKey(model: string): string {
    return `${this.services.settings().baseUrl}|${model}`;
  }

  /** How the model is asked now: the setting, else what was learned, else fill-in-the-middle. */
  pathOf(model: string, s = this.settings()): CompletionPath {
    if (s.pathOverride) return s.pathOverride;
    const learned = this.state.get<Record<string, CompletionPath>>(PATHS)?.[this.pathKey(model)];
    return learned === 'fim' || learned === 'prompt' || learned === 'chat' ? learned : 'fim';
  }

  async forgetPaths(): Promise<void> {
    await this.state.update(PATHS, undefined);
  }

  private async remember(model: string, path: CompletionPath): Promise<void> {
    const all = { ...(this.state.get<Record<string, CompletionPath>>(PATHS) ?? {}), [this.pathKey(model)]: path };
    await this.state.update(PATHS, all);
    this.services.log.info(`completions: ${model} is asked by ${path === 'chat' ? 'a chat prompt' : path === 'prompt' ? 'the prompt without suffix' : 'fill-in-the-middle'} from now on`);
  }

  /** Why a trigger here sends nothing, checked before any wait (cheap first). */
  async skipReason(document: vscode.TextDocument, context: vscode.InlineCompletionContext, s: CompletionSettings): Promise<Skip | undefined> {
    if (!s.enabled) return 'off';
    if (!s.model) return 'no-model';
    if (this.snoozedUntil) return 'snoozed';
    if (!this.services.isConfigured()) return 'not-configured';
    if (!languageOn(s.languages, document.languageId)) return 'language';
    // The suggest widget is open: VS Code asks for a completion of its item; we leave that to it.
    if (context.selectedCompletionInfo) return 'suggest-widget';
    const editor = vscode.window.activeTextEditor;
    if (editor?.document === document && editor.selections.some((sel) => !sel.isEmpty)) return 'selection';
    if (document.getText().length > s.maxFileChars) return 'too-large';
    if (await this.withheld(document.uri)) return 'withheld';
    if (this.today().dollars >= s.capDollars) return 'cap';
    return undefined;
  }

  private skip(reason: Skip): undefined {
    if (this.stats.lastSkip !== reason) {
      this.stats.lastSkip = reason;
      this.changed.fire();
    }
    return undefined;
  }

  async provideInlineCompletionItems(document: vscode.TextDocument, position: vscode.Position, context: vscode.InlineCompletionContext, token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[] | undefined> {
    const s = this.settings();
    const reason = await this.skipReason(document, context, s);
    if (reason) return this.skip(reason);
    this.stats.lastSkip = undefined;

    const all = document.getText();
    const offset = document.offsetAt(position);
    const prefix = cutPrefix(all.slice(0, offset), s.maxPrefixTokens);
    const suffix = cutSuffix(all.slice(offset), s.maxSuffixTokens);
    const reuse = this.cache.get(prefix, suffix);
    if (reuse) {
      this.stats.cacheHits++;
      return [this.item(reuse, position)];
    }

    // An explicit trigger (the command, Alt+\) asks at once; typing waits for a pause.
    if (context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic) await sleep(this.debounce.delayMs, token);
    if (token.isCancellationRequested) return this.skip('cancelled');
    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    try {
      const snippets = await this.snippets(document, prefix, 40).catch(() => []);
      if (token.isCancellationRequested) return this.skip('cancelled');
      const hole: HoleContext = { prefix, suffix, language: document.languageId, path: vscode.workspace.asRelativePath(document.uri), snippets, maxTokens: MAX_COMPLETION_TOKENS };
      const started = performance.now();
      this.stats.requests++;
      const answer = await this.ask(s, hole, abort.signal);
      const ms = performance.now() - started;
      this.debounce.record(ms);
      this.stats.last = { path: answer.path, ms: Math.round(ms) };
      await this.account(s.model, answer.usage);
      const text = limitLines(answer.text, s.maxLines);
      if (!text.trim()) return undefined;
      this.cache.set(prefix, suffix, text);
      // Typed on while the answer came: VS Code may still show it if it matches what was typed.
      return [this.item(text, position)];
    } catch (err) {
      if (abort.signal.aborted || token.isCancellationRequested) {
        this.stats.cancelled++;
        return undefined;
      }
      this.stats.failures++;
      this.stats.lastError = err instanceof Error ? err.message : String(err);
      this.services.log.warn(`completions: ${this.stats.lastError}`);
      this.changed.fire();
      return undefined;
    } finally {
      sub.dispose();
    }
  }

  private item(text: string, position: vscode.Position): vscode.InlineCompletionItem {
    return new vscode.InlineCompletionItem(text, new vscode.Range(position, position), { title: 'Accepted', command: ACCEPTED_COMMAND, arguments: [text.length] });
  }

  /** What one answer cost, at the gateway's price (or the cap's deliberately high fallback). */
  private async account(model: string, usage: { prompt_tokens?: number; completion_tokens?: number } | undefined): Promise<void> {
    const input = usage?.prompt_tokens ?? 0;
    const output = usage?.completion_tokens ?? 0;
    const book = await this.services.prices.book().catch(() => undefined);
    const priced = book?.cost(model, { input, output, cacheRead: 0, cacheWrite: 0 }).dollars;
    const dollars = priced ?? (input * FALLBACK_PRICE_PER_MTOK.input + output * FALLBACK_PRICE_PER_MTOK.output) / 1e6;
    await this.state.update(LEDGER, addRequest(this.ledger(), Date.now(), model, dollars, input + output));
    if (dollars > 0) this.services.notifySpend();
    this.changed.fire();
  }

  /** Asks by the model's path; a refused `suffix` or a chat-only model moves it to the next path, remembered. */
  private async ask(s: CompletionSettings, hole: HoleContext, signal: AbortSignal): Promise<{ text: string; path: CompletionPath; usage?: { prompt_tokens?: number; completion_tokens?: number } }> {
    const client: Gateway.GatewayClient = this.services.client();
    const model = s.model;
    let path = this.pathOf(model, s);
    for (;;) {
      try {
        if (path === 'chat') {
          const reply = await client.chat.completions.create(chatRequest(model, hole), { signal });
          const content = reply.choices[0]?.message.content;
          return { text: cleanChatAnswer(typeof content === 'string' ? content : '', hole.prefix, hole.suffix), path, usage: reply.usage ?? undefined };
        }
        const reply = await client.completions.create(path === 'fim' ? fimRequest(model, hole) : prefixOnlyRequest(model, hole), { signal });
        return { text: withoutRepeatedSuffix(reply.choices[0]?.text ?? '', hole.suffix), path, usage: reply.usage ?? undefined };
      } catch (err) {
        if (s.pathOverride) throw err;
        const next = nextPath(path, err);
        if (!next) throw err;
        path = next;
        await this.remember(model, path);
      }
    }
  }

  dispose(): void {
    clearTimeout(this.snoozeTimer);
    this.changed.dispose();
  }
}
