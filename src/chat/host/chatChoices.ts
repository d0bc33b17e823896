import * as vscode from 'vscode';
import { isChatModel, resolveFormat, type FormatChoice, type WireFormat } from '../../common/conversation';
import { formatTime } from '../../common/locale';
import { priceText, type PriceBook } from '../../common/prices';
import { chatSettings, fallbackSettings } from '../../shell/config';
import type { PricedFeature } from '../../shell/services';
import { chainOf, MAX_FALLBACKS } from '../../runtime/core/fallback';
import { builtInModes, modeOf, type ModeInfo } from '../../runtime/core/modes';
import { breaker } from '../../runtime/host/fallbackChain';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import { chainWrite, pickOrder } from '../core/fallbackChoices';

type ModelItem = vscode.QuickPickItem & { chain?: true };

/** A model the breaker tripped: "busy: tried last until 14:05". */
function busyNote(until: number | undefined): string | undefined {
  return until ? vscode.l10n.t('busy: tried last until {0}', formatTime(until)) : undefined;
}

function priceOf(book: PriceBook | undefined, model: string): string {
  const p = book?.price(model);
  return p ? priceText(p.price) : vscode.l10n.t('no price');
}

/** The person's own chains (user settings), as written there: anything else in the value is left out. */
function userChains(): Record<string, string[]> {
  const raw = vscode.workspace.getConfiguration('modelGateway').inspect('fallbackModels')?.globalValue;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  return Object.fromEntries(
    Object.entries(raw as Record<string, unknown>).filter((e): e is [string, string[]] => Array.isArray(e[1]) && e[1].every((m) => typeof m === 'string')),
  );
}

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

  /**
   * The model quick pick, the list read again; true when the person picked one. A model the
   * breaker tripped says until when it is tried last; the last item sets the current model's
   * fallback chain.
   */
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
    const tripped = new Map(breaker.tripped().map((t) => [t.model, t.until]));
    const current = this.model();
    const items: ModelItem[] = this.models.map((label) => ({
      label,
      description:
        [formatNames[resolveFormat(label, 'auto', pattern, this.services.formatFacts(label))], busyNote(tripped.get(label))].filter(Boolean).join(' · ') ||
        undefined,
    }));
    if (current)
      items.push(
        { label: '', kind: vscode.QuickPickItemKind.Separator },
        { label: `$(list-ordered) ${vscode.l10n.t('Fallback chain for {0}…', current)}`, description: this.chainDescription(current), chain: true },
      );
    const chosen = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Chat model'), placeHolder: current, matchOnDescription: true });
    if (!chosen) return false;
    if (chosen.chain) {
      await this.pickChain(current);
      return false;
    }
    await this.setModel(chosen.label);
    return true;
  }

  /** The chain the model has now: its own, the default one (said), or none. */
  private chainDescription(model: string): string {
    const s = fallbackSettings();
    const chain = chainOf(model, s);
    if (!chain.length) return vscode.l10n.t('none: only {0} is asked', model);
    return s.chains[model] ? chain.join(' → ') : vscode.l10n.t('{0} (the default chain)', chain.join(' → '));
  }

  /**
   * The models that answer, in the order picked, when `model` is busy: at most `MAX_FALLBACKS`,
   * written to the person's user settings (a repository never sets where requests go).
   */
  async pickChain(model: string): Promise<void> {
    const s = fallbackSettings();
    const before = chainOf(model, s);
    const book = await this.services.prices.bookWithin();
    const tripped = new Map(breaker.tripped().map((t) => [t.model, t.until]));
    // A model of the chain the gateway no longer lists stays in the list, to be taken out.
    const listed = [...this.models.filter((m) => m !== model), ...before.filter((m) => !this.models.includes(m))];
    const items: vscode.QuickPickItem[] = listed.map((label) => ({
      label,
      description: [this.models.includes(label) ? priceOf(book, label) : vscode.l10n.t('not listed by the gateway'), busyNote(tripped.get(label))]
        .filter(Boolean)
        .join(' · '),
    }));
    const qp = vscode.window.createQuickPick();
    qp.canSelectMany = true;
    qp.matchOnDescription = true;
    // Short: the "N Selected" badge covers the end of a long placeholder (the title names the model).
    qp.placeholder = vscode.l10n.t('Pick up to {0}, in order', MAX_FALLBACKS);
    qp.items = items;
    let order = [...before];
    const title = () =>
      order.length > MAX_FALLBACKS
        ? vscode.l10n.t('Fallback chain for {0}: {1} picked, only the first {2} are kept', model, order.length, MAX_FALLBACKS)
        : vscode.l10n.t('Fallback chain for {0}: {1}', model, order.join(' → ') || vscode.l10n.t('none'));
    qp.title = title();
    qp.selectedItems = items.filter((i) => before.includes(i.label));
    const picked = await new Promise<string[] | undefined>((resolve) => {
      qp.onDidChangeSelection((sel) => {
        order = pickOrder(
          order,
          sel.map((i) => i.label),
        );
        qp.title = title();
      });
      qp.onDidAccept(() => {
        resolve(order);
        qp.hide();
      });
      qp.onDidHide(() => resolve(undefined));
      qp.show();
    });
    qp.dispose();
    // Closed, or accepted as it was shown (the default chain is not copied into a chain of the model's own).
    if (!picked || (!s.chains[model] && picked.join() === before.join())) return;
    const { chains, kept, dropped } = chainWrite(userChains(), model, picked);
    await vscode.workspace.getConfiguration('modelGateway').update('fallbackModels', chains, vscode.ConfigurationTarget.Global);
    this.services.log.info(`chat: fallback chain for ${model} set to ${kept.join(', ') || '(none)'}`);
    if (dropped.length)
      void vscode.window.showWarningMessage(
        vscode.l10n.t('At most {0} models answer for a busy one: kept {1}; left out {2}.', MAX_FALLBACKS, kept.join(' → '), dropped.join(', ')),
      );
    else
      vscode.window.setStatusBarMessage(
        kept.length ? vscode.l10n.t('Fallback chain for {0}: {1}', model, kept.join(' → ')) : vscode.l10n.t('{0} has no fallback chain of its own now.', model),
        5000,
      );
  }
}
