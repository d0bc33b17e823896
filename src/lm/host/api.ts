/**
 * The parts of VS Code's language-model API that came after our oldest supported version: the
 * Language Model Chat Provider API (finalized in 1.104) and `LanguageModelDataPart`. Declared
 * here (our `@types/vscode` is the oldest version's) and found at run time: on an older VS Code
 * they are absent and nothing is registered.
 */
import * as vscode from 'vscode';

export interface ChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: { readonly imageInput?: boolean; readonly toolCalling?: boolean | number };
  /** Shown in the picker (1.139 reads it without a proposal; older versions ignore it). */
  readonly isUserSelectable?: boolean;
  /** Free text for the Pricing column of VS Code's Language Models editor (1.139; its number fields are GitHub credits, not dollars). */
  readonly pricing?: string;
}

export interface RequestMessage {
  readonly role: vscode.LanguageModelChatMessageRole;
  readonly content: ReadonlyArray<unknown>;
  readonly name: string | undefined;
}

export interface ResponseOptions {
  readonly modelOptions?: { readonly [name: string]: unknown };
  readonly tools?: readonly vscode.LanguageModelChatTool[];
  /** `LanguageModelChatToolMode`: 1 auto, 2 required. */
  readonly toolMode: number;
  /** Who asks (1.10x+): the calling extension's id, or "core" for VS Code itself; absent on older versions. */
  readonly requestInitiator?: string;
}

export interface ChatProvider {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  provideLanguageModelChatInformation(options: { readonly silent: boolean }, token: vscode.CancellationToken): vscode.ProviderResult<ChatInformation[]>;
  provideLanguageModelChatResponse(
    model: ChatInformation,
    messages: readonly RequestMessage[],
    options: ResponseOptions,
    progress: vscode.Progress<unknown>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(model: ChatInformation, text: string | RequestMessage, token: vscode.CancellationToken): Thenable<number>;
}

interface ProviderApi {
  registerLanguageModelChatProvider(vendor: string, provider: ChatProvider): vscode.Disposable;
}

/** The provider registration, when this VS Code has it (1.104 and later). */
export function chatProviderApi(): ProviderApi | undefined {
  const lm = vscode.lm as unknown as Partial<ProviderApi> | undefined;
  return typeof lm?.registerLanguageModelChatProvider === 'function' ? (lm as ProviderApi) : undefined;
}

/** Whether this VS Code has language-model tools (`vscode.lm.registerTool`, 1.95 and later). */
export function hasToolsApi(): boolean {
  return typeof (vscode.lm as { registerTool?: unknown } | undefined)?.registerTool === 'function';
}
