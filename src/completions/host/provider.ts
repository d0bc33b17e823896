// DRAFT (issue 25, not wired yet): the inline completion provider. Not in extension.ts; no tests yet.
import * as vscode from 'vscode';
import type * as Gateway from '../../gateway';
import type { GatewayFeature } from '../../shell/services';
import { CompletionCache } from '../core/cache';
import { cleanChatAnswer, cutPrefix, cutSuffix } from '../core/context';
import { AdaptiveDebounce } from '../core/debounce';
import { chatRequest, fimRequest, limitLines, prefixOnlyRequest, type HoleContext } from '../core/request';

/** How a model is asked, learned once per gateway and model: FIM, prompt without suffix, or the chat prompt. */
export type CompletionPath = 'fim' | 'prefix' | 'chat';
const PATHS = 'modelGateway.completions.paths';

export interface CompletionSettings {
  enabled: boolean;
  model: string;
  languages: Record<string, boolean>;
  maxPrefixTokens: number;
  maxSuffixTokens: number;
  maxFileChars: number;
  maxLines: number;
}

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

export class GatewayInlineCompletions implements vscode.InlineCompletionItemProvider {
  readonly cache = new CompletionCache();
  readonly debounce = new AdaptiveDebounce();
  snoozedUntil = 0;

  constructor(
    private readonly services: GatewayFeature,
    private readonly state: vscode.Memento,
    private readonly settings: () => CompletionSettings,
    /** Why a file gets no completions (secret, ignored), if it gets none. */
    private readonly withheld: (uri: vscode.Uri) => Promise<string | undefined>,
  ) {}

  private pathKey(model: string): string {
    return `${this.services.settings().baseUrl}|${model}`;
  }

  pathOf(model: string): CompletionPath {
    return this.state.get<Record<string, CompletionPath>>(PATHS)?.[this.pathKey(model)] ?? 'fim';
  }

  private async remember(model: string, path: CompletionPath): Promise<void> {
    const all = { ...(this.state.get<Record<string, CompletionPath>>(PATHS) ?? {}), [this.pathKey(model)]: path };
    await this.state.update(PATHS, all);
    this.services.log.info(`completions: ${model} is asked by ${path === 'chat' ? 'the chat prompt' : path === 'prefix' ? 'prompt without suffix' : 'fill-in-the-middle'} from now on`);
  }

  async provideInlineCompletionItems(document: vscode.TextDocument, position: vscode.Position, context: vscode.InlineCompletionContext, token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[] | undefined> {
    const s = this.settings();
    if (!s.enabled || !s.model || Date.now() < this.snoozedUntil || !this.services.isConfigured()) return undefined;
    if (s.languages[document.languageId] === false || (s.languages['*'] === false && s.languages[document.languageId] !== true)) return undefined;
    // Not while the suggest widget is open, over a selection, or in a very large file.
    if (context.selectedCompletionInfo) return undefined;
    const editor = vscode.window.activeTextEditor;
    if (editor?.document === document && !editor.selection.isEmpty) return undefined;
    if (document.getText().length > s.maxFileChars) return undefined;
    if (await this.withheld(document.uri)) return undefined;

    const all = document.getText();
    const offset = document.offsetAt(position);
    const prefix = cutPrefix(all.slice(0, offset), s.maxPrefixTokens);
    const suffix = cutSuffix(all.slice(offset), s.maxSuffixTokens);
    const reuse = this.cache.get(prefix, suffix);
    if (reuse) return [new vscode.InlineCompletionItem(reuse, new vscode.Range(position, position))];

    await sleep(this.debounce.delayMs, token);
    if (token.isCancellationRequested) return undefined;
    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    const hole: HoleContext = { prefix, suffix, language: document.languageId, path: vscode.workspace.asRelativePath(document.uri), snippets: [], maxTokens: 256 };
    const started = Date.now();
    try {
      const text = limitLines(await this.ask(s.model, hole, abort.signal), s.maxLines);
      this.debounce.record(Date.now() - started);
      if (!text.trim()) return undefined;
      this.cache.set(prefix, suffix, text);
      return [new vscode.InlineCompletionItem(text, new vscode.Range(position, position))];
    } catch (err) {
      if (!abort.signal.aborted) this.services.log.warn(`completions: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    } finally {
      sub.dispose();
    }
  }

  /** Asks by the model's path; a refused `suffix` or a chat-only model moves it to the next path, remembered. */
  private async ask(model: string, hole: HoleContext, signal: AbortSignal): Promise<string> {
    const client: Gateway.GatewayClient = this.services.client();
    let path = this.pathOf(model);
    for (;;) {
      try {
        if (path === 'chat') {
          const reply = await client.chat.completions.create(chatRequest(model, hole), { signal });
          const content = reply.choices[0]?.message.content;
          return cleanChatAnswer(typeof content === 'string' ? content : '', hole.prefix, hole.suffix);
        }
        const reply = await client.completions.create(path === 'fim' ? fimRequest(model, hole) : prefixOnlyRequest(model, hole), { signal });
        return reply.choices[0]?.text ?? '';
      } catch (err) {
        const e = err as { name?: string; message?: string };
        if (path === 'fim' && e.name === 'BadRequestError' && /suffix/i.test(e.message ?? '')) path = 'prefix';
        else if (path !== 'chat' && e.name === 'NotFoundError' && /chat model/i.test(e.message ?? '')) path = 'chat';
        else throw err;
        await this.remember(model, path);
      }
    }
  }
}
