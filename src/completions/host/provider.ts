import * as vscode from 'vscode';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import type { CompletionSpendSource } from '../../common/usageReport';
import { FALLBACK_PRICE_PER_MTOK } from '../../runtime/core/limits';
import { InlineCompleter, type CompletionTokens } from '../core/completer';
import { addAccepted, addRequest, dayOf, readLedger, type CompletionDay } from '../../runtime/core/spendLedger';
import type { CompletionPath } from '../core/request';
import { holeBesideItem } from '../core/selectedItem';
import { languageOn, type CompletionSettings } from './settings';
import { counted } from '../../shell/listeners';
import { completionsChainAfter, recordFallback } from '../../runtime/host/fallbackChain';
import { modelOverride } from '../../shell/config';

const PATHS = 'modelGateway.completions.paths';
const LEDGER = 'modelGateway.completions.ledger';
/** The command an accepted suggestion runs (it counts the accepted characters). */
export const ACCEPTED_COMMAND = 'modelGateway.completions.accepted';

/** Why no request was sent for a trigger (kept for the status bar tooltip and the tests). */
export type Skip =
  | 'off'
  | 'no-model'
  | 'snoozed'
  | 'not-configured'
  | 'language'
  | 'selection'
  | 'unextendable-item'
  | 'too-large'
  | 'withheld'
  | 'cap'
  | 'cancelled'
  | 'composing';

export interface CompletionStats {
  lastSkip?: Skip;
  lastError?: string;
  /** The last request's path and the milliseconds it took. */
  last?: { path: CompletionPath; ms: number };
}

/** Context from other files for a hole (recent edits, the keyword index), within a time budget. */
export type SnippetSource = (document: vscode.TextDocument, prefix: string, budgetMs: number) => Promise<{ path: string; text: string }[]>;

/**
 * Ghost text through the gateway: waits an adaptive pause after the last key, reuses what the
 * cache holds while the person types through a suggestion, asks the model by the path it takes
 * (fill-in-the-middle, else the prompt alone, else a chat prompt; learned once per gateway and
 * model), cancels the request when the person types on, and counts what it spends.
 */
export class GatewayInlineCompletions implements vscode.InlineCompletionItemProvider {
  readonly completer: InlineCompleter;
  readonly stats: CompletionStats = {};
  private readonly changed = new vscode.EventEmitter<void>();
  /**
   * Fires when the stats, the snooze or today's spend change (the status bar listens). Not named
   * `onDidChange`: VS Code takes a provider's `onDidChange` as "ask me again" and re-requests the
   * completion at once; every answer changes the spend, so the gateway was asked in a loop (a
   * request every 0.7 s while a suggestion stood, seen in the e2e on 1.100).
   */
  readonly onDidChangeState = counted('completions.onDidChangeState', this.changed.event);
  private snoozedUntilMs = 0;
  private snoozeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly services: GatewayFeature & PriceSource,
    private readonly state: vscode.Memento,
    private readonly settings: () => CompletionSettings,
    /** Why a file gets no completions (secret, ignored), if it gets none. */
    private readonly withheld: (uri: vscode.Uri) => Promise<string | undefined>,
    private readonly snippets: SnippetSource,
    /** Whether an input method is composing a word in the document (its latest change). */
    private readonly composing: (document: vscode.TextDocument) => boolean = () => false,
  ) {
    this.completer = new InlineCompleter({
      client: () => services.client(),
      learnedPath: (model) => {
        const learned = this.state.get<Record<string, CompletionPath>>(PATHS)?.[this.pathKey(model)];
        return learned === 'fim' || learned === 'prompt' || learned === 'chat' ? learned : undefined;
      },
      remember: (model, path) => this.remember(model, path),
      answered: (model, tokens) => this.account(model, tokens),
      fellBack: (f) => recordFallback(services, 'completions', f),
      overrideFor: (model) => modelOverride(services.settings().modelOverrides, model).completions,
    });
  }

  get cache() {
    return this.completer.cache;
  }

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
    return this.completer.pathOf(model, s.pathOverride);
  }

  async forgetPaths(): Promise<void> {
    await this.state.update(PATHS, undefined);
  }

  private async remember(model: string, path: CompletionPath): Promise<void> {
    const all = { ...(this.state.get<Record<string, CompletionPath>>(PATHS) ?? {}), [this.pathKey(model)]: path };
    await this.state.update(PATHS, all);
    this.services.log.info(
      `completions: ${model} is asked by ${path === 'chat' ? 'a chat prompt' : path === 'prompt' ? 'the prompt without suffix' : 'fill-in-the-middle'} from now on`,
    );
  }

  /** Why a trigger here sends nothing, checked before any wait (cheap first). */
  async skipReason(document: vscode.TextDocument, context: vscode.InlineCompletionContext, s: CompletionSettings): Promise<Skip | undefined> {
    if (!s.enabled) return 'off';
    if (!s.model) return 'no-model';
    if (this.snoozedUntil) return 'snoozed';
    if (!this.services.isConfigured()) return 'not-configured';
    if (!languageOn(s.languages, document.languageId)) return 'language';
    if (this.composing(document)) return 'composing';
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

  async provideInlineCompletionItems(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    const s = this.settings();
    const reason = await this.skipReason(document, context, s);
    if (reason) return this.skip(reason);
    this.stats.lastSkip = undefined;

    const all = document.getText();
    const offset = document.offsetAt(position);
    // With IntelliSense's list open, the suggestion goes on from its selected item (VS Code shows
    // it only then): asked as if the item were accepted, it replaces the item's range.
    const selected = context.selectedCompletionInfo;
    const beside = selected
      ? holeBesideItem(all, offset, { from: document.offsetAt(selected.range.start), to: document.offsetAt(selected.range.end), text: selected.text })
      : undefined;
    if (selected && !beside) return this.skip('unextendable-item');
    const range = selected ? selected.range : new vscode.Range(position, position);
    const shown = (text: string) => this.item(beside ? beside.insert(text) : text, range, text.length);
    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    try {
      const outcome = await this.completer.complete(
        {
          before: beside ? beside.before : all.slice(0, offset),
          after: beside ? beside.after : all.slice(offset),
          language: document.languageId,
          path: vscode.workspace.asRelativePath(document.uri),
          model: s.model,
          maxPrefixTokens: s.maxPrefixTokens,
          maxSuffixTokens: s.maxSuffixTokens,
          maxLines: s.maxLines,
          pathOverride: s.pathOverride,
          fallbackModels: completionsChainAfter(s.model),
          // An explicit trigger (the command, Alt+\) asks at once; typing waits for a pause.
          automatic: context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic,
          snippets: (prefix) => this.snippets(document, prefix, 40),
          stillWanted: () => {
            const now = this.settings();
            return now.enabled && now.model === s.model && !this.snoozedUntil && this.today().dollars < now.capDollars;
          },
        },
        abort.signal,
      );
      switch (outcome.kind) {
        case 'cache':
          return [shown(outcome.text)];
        case 'answer':
          this.stats.last = { path: outcome.path, ms: Math.round(outcome.requestMs) };
          this.stats.lastError = undefined;
          this.changed.fire();
          return [shown(outcome.text)];
        case 'cancelled':
          return this.skip('cancelled');
        case 'failed': {
          const err = outcome.error;
          this.stats.lastError = err instanceof Error ? err.message : String(err);
          this.services.log.warn(`completions: ${this.stats.lastError}`);
          this.changed.fire();
          return undefined;
        }
        default:
          return undefined;
      }
    } finally {
      sub.dispose();
    }
  }

  /** A suggestion over `range`; `modelChars` of it came from the model (what acceptance counts). */
  private item(text: string, range: vscode.Range, modelChars: number): vscode.InlineCompletionItem {
    return new vscode.InlineCompletionItem(text, range, { title: 'Accepted', command: ACCEPTED_COMMAND, arguments: [modelChars] });
  }

  /** What one answer cost, at the gateway's price (or the cap's deliberately high fallback). */
  private async account(model: string, tokens: CompletionTokens): Promise<void> {
    const book = await this.services.prices.book().catch(() => undefined);
    const priced = book?.cost(model, { input: tokens.prompt, output: tokens.completion, cacheRead: 0, cacheWrite: 0 }).dollars;
    const dollars = priced ?? (tokens.prompt * FALLBACK_PRICE_PER_MTOK.input + tokens.completion * FALLBACK_PRICE_PER_MTOK.output) / 1e6;
    await this.state.update(LEDGER, addRequest(this.ledger(), Date.now(), model, dollars, tokens.prompt + tokens.completion));
    if (dollars > 0) this.services.notifySpend();
    this.changed.fire();
  }

  dispose(): void {
    clearTimeout(this.snoozeTimer);
    this.changed.dispose();
  }
}
