import * as vscode from 'vscode';
import { isChatModel, resolveFormat, type FormatChoice, type WireFormat } from '../../common/conversation';
import { chatSettings } from '../../shell/config';
import type { PricedFeature } from '../../shell/services';
import { builtInModes, modeOf, type ModeInfo } from '../../runtime/core/modes';
import type { AgentToolbox } from '../../runtime/host/toolbox';

/** The model a turn can start with, or why not (said to the person), or the gateway's refusal to list models. */
export type Readiness = { text: string } | { model: string } | { failure: unknown };

/**
 * What the chat answers with, per workspace: the model (the person's pick, a custom agent's, the
 * default), its wire format and the mode (Agent, Ask, Plan, or a custom agent of the workspace);
 * and the gateway's list of chat models they are picked from.
 */
export class ChatChoices {
  /** The gateway's chat models, read once (again after a connection change or a failed start). */
  models: string[] = [];
  /** Why the model list could not be read (a refused key, an unreachable gateway), if it could not. */
  private modelsError: unknown;

  constructor(
    private readonly services: PricedFeature,
    private readonly state: vscode.Memento,
    private readonly agent: AgentToolbox | undefined,
    /** The price list came: it says which wire formats each model speaks (the format shown before a send). */
    private readonly onPrices: () => Promise<void>,
  ) {}

  /** The list is read again when next needed. */
  forget(): void {
    this.models = [];
  }

  async load(): Promise<void> {
    if (this.models.length > 0 || !this.services.isConfigured()) return;
    try {
      this.models = (await this.services.client().models.list())
        .map((m) => m.id)
        .filter(isChatModel)
        .sort();
      void this.services.prices.book().then(
        () => this.onPrices(),
        () => undefined,
      );
      this.modelsError = undefined;
    } catch (err) {
      this.modelsError = err;
      this.services.log.error('chat: could not list models', err);
    }
  }

  /** The model to answer with, or why not (the list read first when it is not). */
  async ready(): Promise<Readiness> {
    if (!this.services.isConfigured()) return { text: vscode.l10n.t('Set the gateway URL and API key first (Model Gateway: Set API Key).') };
    await this.load();
    const model = this.model();
    // No model because the gateway refused the list (a wrong key, say): that is the error to show.
    if (!model && this.modelsError !== undefined) return { failure: this.modelsError };
    if (!model) return { text: vscode.l10n.t('No chat model is available: pick one or set modelGateway.defaultModels.chat.') };
    return { model };
  }

  model(): string {
    // A custom agent's model, when the gateway lists it (VS Code's names, "GPT-4o (copilot)", are not the gateway's ids).
    const mode = this.mode();
    const wanted = mode.startsWith('custom:') ? this.agent?.customizations?.modelOf(mode) : undefined;
    if (wanted && this.models.includes(wanted)) return wanted;
    const chosen = this.state.get<string>('modelGateway.chat.model');
    return chosen || this.services.settings().defaultModels.chat || this.models[0] || '';
  }

  formatChoice(model: string): FormatChoice {
    return this.state.get<FormatChoice>(`modelGateway.chat.format:${model}`) ?? 'auto';
  }

  /** The wire format a request to this model takes now (the person's choice, else the pattern and the gateway's list). */
  format(model: string, choice = this.formatChoice(model)): WireFormat {
    return resolveFormat(model, choice, chatSettings().pattern, this.services.formatFacts(model));
  }

  /** The chat mode, per workspace like the model. */
  mode(): string {
    return this.knownMode(this.state.get<string>('modelGateway.chat.mode'));
  }

  /** A custom agent's id while its file is there; else the built-in mode the id names (Agent for none). */
  private knownMode(id: string | undefined): string {
    return id?.startsWith('custom:') && this.agent?.customizations?.modePrompt(id) !== undefined ? id : modeOf(id);
  }

  /** The modes the picker lists: the built-in ones, then the workspace's custom agents. */
  modes(): ModeInfo[] {
    return [...builtInModes(), ...(this.agent?.customizations?.modes() ?? [])];
  }

  async setMode(mode: string): Promise<void> {
    await this.state.update('modelGateway.chat.mode', this.knownMode(mode));
  }

  async setModel(model: string): Promise<void> {
    await this.state.update('modelGateway.chat.model', model);
  }

  async setFormat(format: FormatChoice): Promise<void> {
    await this.state.update(`modelGateway.chat.format:${this.model()}`, format);
  }

  /** The model quick pick, the list read again; true when the person picked one. */
  async pick(): Promise<boolean> {
    this.models = [];
    await this.load();
    // Each model with the wire format it would use (a Gemini model in its own format where the gateway offers it).
    const pattern = chatSettings().pattern;
    const formatNames: Record<string, string> = {
      messages: vscode.l10n.t('messages format'),
      responses: vscode.l10n.t('Responses format'),
      gemini: vscode.l10n.t("Gemini's own format"),
    };
    const items = this.models.map((label) => ({ label, description: formatNames[resolveFormat(label, 'auto', pattern, this.services.formatFacts(label))] }));
    const chosen = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Chat model'), placeHolder: this.model(), matchOnDescription: true });
    const pick = chosen?.label;
    if (!pick) return false;
    await this.setModel(pick);
    return true;
  }
}
