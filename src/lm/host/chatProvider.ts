import * as vscode from 'vscode';
import type { ToolDefinition } from '../../tools/workspaceTools';
import { contextWindowFor } from '../../runtime/core/budget';
import { emptyUsage, isChatModel, newId, resolveFormat, takesImages, usageParts, type AssistantTurn } from '../../common/conversation';
import { runModelTurn } from '../../runtime/host/modelTurn';
import { chatSettings, modelOverride } from '../../shell/config';
import { describeError } from '../../shell/errors';
import type { CredentialSource, GatewayFeature, PriceSource } from '../../shell/services';
import type { LmAccess } from './access';
import type { ChatInformation, ChatProvider, RequestMessage, ResponseOptions } from './api';
import { estimateTokens, reasoningMetadata, systemPrompt, toTurns, UnsupportedPartError } from '../core/convert';
import { compactPrice } from '../core/pricing';
import { counted } from '../../shell/listeners';

/** The vendor id VS Code shows for our models (`languageModelChatProviders` in package.json). */
export const LM_VENDOR = 'model-gateway';

/** `LanguageModelThinkingPart` where this VS Code has it (1.139 takes it from a provider without a proposal). */
const ThinkingPart = (vscode as unknown as { LanguageModelThinkingPart?: new (value: string, id?: string, metadata?: Record<string, unknown>) => unknown })
  .LanguageModelThinkingPart;

/** Families that take images, by id, where the settings do not say. */
const DEFAULT_OUTPUT = 8_192;

/**
 * The gateway's chat models as VS Code language models: listed from the gateway, answered
 * through our client in the model's wire format (streamed text, tool calls, images, prompt
 * caching), with our errors and their fixes. Tool calls go back to the caller; nothing is run here.
 */
export class GatewayChatProvider implements ChatProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = counted('lmProvider.onDidChangeLanguageModelChatInformation', this.changed.event);
  private readonly subscription: vscode.Disposable;
  private retry: NodeJS.Timeout | undefined;
  private retries = 0;

  constructor(
    private readonly services: GatewayFeature & CredentialSource & PriceSource,
    private readonly access: LmAccess,
  ) {
    this.subscription = services.onDidChangeConnection(() => this.changed.fire());
  }

  /**
   * Tells VS Code that models are there. It asks a provider for its list only when told so, when
   * a caller selects models, or when the person opens *Manage Models*: without this, its picker
   * offers none of ours after a window loads.
   */
  announce(): void {
    if (this.services.isConfigured()) this.changed.fire();
  }

  async provideLanguageModelChatInformation(options: { readonly silent: boolean }): Promise<ChatInformation[]> {
    // A silent request never asks; an explicit one (the person chose Model Gateway in VS Code's
    // Language Models editor) goes straight to what is missing, then lists the models.
    if (!this.services.isConfigured() && !options.silent) await this.setUp();
    if (!this.services.isConfigured()) return [];
    try {
      const models = await this.services.client().models.list();
      // Prices where they come quickly; a slow price list never holds the models back.
      const book = await this.services.prices.bookWithin();
      const { modelOverrides: overrides, baseUrl } = this.services.settings();
      this.retries = 0;
      return models
        .map((m) => m.id)
        .filter(isChatModel)
        .sort()
        .map((id) => {
          const o = modelOverride(overrides, id);
          const price = book?.price(id);
          return {
            id,
            name: id,
            family: id.split(/[-/:]/)[0] || id,
            version: '1',
            detail: 'Model Gateway',
            tooltip: `${id} through ${baseUrl}`,
            maxInputTokens: contextWindowFor(id, o.contextWindow),
            maxOutputTokens: o.maxOutputTokens ?? DEFAULT_OUTPUT,
            capabilities: { imageInput: takesImages(id, o.imageInput), toolCalling: o.toolCalling ?? true },
            isUserSelectable: true,
            ...(price ? { pricing: `${compactPrice(price.price)}${price.source === 'settings' ? ' (your setting)' : ''}` } : {}),
          };
        });
    } catch (err) {
      this.services.log.error('language models: could not list the gateway models', err);
      this.retryLater();
      return [];
    }
  }

  /**
   * VS Code keeps an empty list until told again: a gateway unreachable at start (VPN not up yet)
   * is asked again after 30 s, then 1, 2, 4 and 5 minutes, until a list arrives.
   */
  private retryLater(): void {
    if (this.retry) return;
    const delay = Math.min(5 * 60_000, 30_000 * 2 ** this.retries++);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.announce();
    }, delay);
  }

  async provideLanguageModelChatResponse(
    model: ChatInformation,
    messages: readonly RequestMessage[],
    options: ResponseOptions,
    progress: vscode.Progress<unknown>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    // Another extension's request spends the person's money: asked once, and under the daily cap.
    const refused = (await this.access.callerRefusal(options.requestInitiator)) ?? this.access.capRefusal();
    if (refused) throw vscode.LanguageModelError.NoPermissions(refused);
    const settings = chatSettings();
    const format = resolveFormat(model.id, 'auto', settings.pattern, await this.services.formatFactsReady(model.id));
    let history;
    try {
      history = toTurns(messages, model.id);
    } catch (err) {
      if (err instanceof UnsupportedPartError) throw new Error(`Model Gateway: ${err.message}`, { cause: err });
      throw err;
    }
    const tools: ToolDefinition[] = (options.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      kind: 'read',
      parameters: (t.inputSchema as ToolDefinition['parameters'] | undefined) ?? { type: 'object', properties: {}, required: [] },
    }));
    const abort = new AbortController();
    const cancel = token.onCancellationRequested(() => abort.abort());
    const turn: AssistantTurn = {
      id: newId('lm'),
      role: 'assistant',
      model: model.id,
      format,
      steps: [],
      status: 'streaming',
      usage: emptyUsage(),
      at: Date.now(),
    };
    try {
      await runModelTurn(this.services, {
        surface: "VS Code's chat",
        model: model.id,
        format,
        // VS Code's chat fits the conversation to the window itself (maxInputTokens).
        modelOverrides: { contextWindow: undefined, imageInput: undefined, serverCompaction: undefined },
        system: systemPrompt(messages),
        history,
        turn,
        // One request: tool calls go back to the caller, which runs them and asks again.
        tools: tools.length > 0 ? { definitions: tools, run: () => Promise.resolve({ content: '', isError: false }) } : undefined,
        maxSteps: 1,
        toolChoice: options.toolMode === 2 ? 'required' : 'auto',
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type === 'text') progress.report(new vscode.LanguageModelTextPart(e.delta));
          else if (e.type === 'thinking' && ThinkingPart && e.delta) progress.report(new ThinkingPart(e.delta));
        },
      });
    } finally {
      cancel.dispose();
      // After a fallback each model's tokens at its own price.
      let dollars = 0;
      for (const [m, usage] of usageParts(turn)) dollars += await this.access.costOf(m, usage);
      await this.access.record(dollars);
    }
    if (turn.status === 'stopped' || token.isCancellationRequested) throw new vscode.CancellationError();
    if (turn.status === 'error') throw this.languageModelError(turn.error);
    // The reasoning a model needs back with its tool calls rides in the last thinking part's
    // metadata: VS Code's chat returns it with the history (read back by `toTurns`).
    const reasoning = reasoningMetadata(turn.steps.at(-1));
    if (reasoning && ThinkingPart) progress.report(new ThinkingPart('', undefined, reasoning));
    for (const call of turn.steps.flatMap((s) => s.toolCalls)) {
      let input: object;
      try {
        input = JSON.parse(call.args || '{}') as object;
      } catch {
        input = {};
      }
      progress.report(new vscode.LanguageModelToolCallPart(call.id, call.name, input));
    }
    const u = turn.usage;
    this.services.log.info(
      `language model ${model.id} (${format}): in ${u.input} · out ${u.output}${u.cacheRead ? ` · cache read ${u.cacheRead}` : ''}${u.estimated ? ' (estimated)' : ''}`,
    );
    if (u.output > 0) this.services.notifySpend();
  }

  /** The setup steps still missing: credentials held back from this gateway, the URL, the key. */
  private async setUp(): Promise<void> {
    if (this.services.withheldCredentials().length > 0) await vscode.commands.executeCommand('modelGateway.useCredentialsHere');
    else if (!this.services.settings().baseUrl) await vscode.commands.executeCommand('modelGateway.setBaseUrl');
    else if (!this.services.credentials.getApiKey()) await vscode.commands.executeCommand('modelGateway.setApiKey');
  }

  provideTokenCount(_model: ChatInformation, text: string | RequestMessage): Promise<number> {
    return Promise.resolve(estimateTokens(typeof text === 'string' ? text : { role: text.role, content: text.content }));
  }

  /** Our error, its fix said in words, as the error VS Code's callers understand. */
  private languageModelError(error: AssistantTurn['error']): Error {
    const facts = { kind: error?.kind ?? 'Error', cause403: error?.cause403 };
    const { message } = describeError(this.services, Object.assign(new Error(error?.message ?? 'The request failed.'), { name: facts.kind }));
    const fix =
      facts.kind === 'AuthenticationError' || facts.kind === 'MissingCredentialError'
        ? ' Run "Model Gateway: Set API Key".'
        : facts.cause403 === 'balance'
          ? ' Top up the gateway balance.'
          : '';
    const text = `Model Gateway: ${message}${fix}`;
    if (facts.kind === 'AuthenticationError' || facts.kind === 'PermissionDeniedError' || facts.kind === 'MissingCredentialError')
      return vscode.LanguageModelError.NoPermissions(text);
    if (facts.kind === 'NotFoundError') return vscode.LanguageModelError.NotFound(text);
    return new Error(text);
  }

  dispose(): void {
    clearTimeout(this.retry);
    this.subscription.dispose();
    this.changed.dispose();
  }
}
