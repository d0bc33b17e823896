import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { TokenUsage } from '../../common/prices';
import { numberSetting } from '../../shell/settingsSchema';
import type { PromptSource, PriceSource, LogSource } from '../../shell/services';
import { formatCost } from '../../common/money';
import { addSpend, classifyInitiator, FALLBACK_PRICE_PER_MTOK, RateLimit, spentOn, localDay, type DaySpend } from '../../runtime/core/limits';

const SPEND = 'modelGateway.lm.spendToday';
const DECISIONS = 'modelGateway.lm.extensionAccess';
const DaySpendSchema = z.object({ day: z.string(), dollars: z.number() });
const Decisions = z.record(z.string(), z.boolean());

/** Free tools other agents may call: at most this many calls a minute each. */
const FREE_TOOL_CALLS_PER_MINUTE = 20;

/**
 * What reaches the gateway from outside our own chat (other extensions and VS Code's chat, through
 * `vscode.lm`): a daily spending cap, a question to the person the first time another extension
 * uses our models (where VS Code names the caller), and a rate limit for the free tools.
 */
export class LmAccess {
  private readonly limits = new Map<string, RateLimit>();

  constructor(
    private readonly services: PromptSource & PriceSource & LogSource,
    private readonly state: vscode.Memento,
    private readonly ownId: string,
  ) {}

  /** The cap from the user settings only (a workspace cannot raise it). */
  capDollars(): number {
    return numberSetting('modelGateway.lm.dailyCapDollars', vscode.workspace.getConfiguration('modelGateway').inspect('lm.dailyCapDollars')?.globalValue);
  }

  spentToday(now = Date.now()): number {
    const parsed = DaySpendSchema.safeParse(this.state.get(SPEND));
    return spentOn(parsed.success ? parsed.data : undefined, localDay(now));
  }

  /** Why a request must not be sent (the cap is reached), or undefined. */
  capRefusal(): string | undefined {
    const cap = this.capDollars();
    const spent = this.spentToday();
    if (spent < cap) return undefined;
    return `Model Gateway: today's spending cap for requests from other extensions and VS Code's chat is reached (${formatCost(spent)} of ${formatCost(cap)}). It starts again at midnight; raise it with the setting modelGateway.lm.dailyCapDollars.`;
  }

  async record(dollars: number): Promise<void> {
    if (!(dollars > 0)) return;
    const parsed = DaySpendSchema.safeParse(this.state.get(SPEND));
    const next: DaySpend = addSpend(parsed.success ? parsed.data : undefined, dollars, Date.now());
    await this.state.update(SPEND, next);
    this.services.log.info(
      `language models: ${formatCost(dollars)} spent by another caller; ${formatCost(next.dollars)} today of the ${formatCost(this.capDollars())} cap`,
    );
  }

  /** The cost of a reply: the gateway's or the user's price, else a deliberately high fallback. */
  async costOf(model: string, usage: TokenUsage): Promise<number> {
    // Prices are read through the client, which may refuse (a withheld credential): then the fallback counts.
    const book = await this.services.prices.book().catch(() => undefined);
    const cost = book?.cost(model, usage);
    if (cost?.dollars !== undefined) return cost.dollars;
    return (usage.input * FALLBACK_PRICE_PER_MTOK.input + usage.output * FALLBACK_PRICE_PER_MTOK.output) / 1e6;
  }

  decisions(): Record<string, boolean> {
    const parsed = Decisions.safeParse(this.state.get(DECISIONS));
    return parsed.success ? parsed.data : {};
  }

  /**
   * Whether the caller may use our models. Another extension is asked about once (a modal only
   * the person answers); the answer is remembered until revoked. VS Code's own chat, and callers
   * an older VS Code does not name, are allowed (the cap still applies).
   */
  async callerRefusal(initiator: unknown): Promise<string | undefined> {
    const who = classifyInitiator(initiator, this.ownId);
    if (who.kind !== 'extension') return undefined;
    const decided = this.decisions()[who.id];
    if (decided !== undefined) return decided ? undefined : this.refusedText(who.id);
    const name = this.extensionName(who.id);
    const allow = vscode.l10n.t('Allow');
    const answer = await this.services.prompts.choose(
      vscode.l10n.t('The extension "{0}" wants to use your Model Gateway models.', name),
      vscode.l10n.t(
        'Its requests are paid from your gateway balance, up to {0} a day for everything outside Model Gateway\'s own chat (modelGateway.lm.dailyCapDollars). Your answer is remembered; change it with "Model Gateway: Manage Extension Access to Models".',
        formatCost(this.capDollars()),
      ),
      [allow, vscode.l10n.t('Deny')],
    );
    if (answer === undefined) return `Model Gateway: the person did not allow "${name}" to use its models.`;
    await this.state.update(DECISIONS, { ...this.decisions(), [who.id]: answer === allow });
    this.services.log.info(`language models: ${who.id} ${answer === allow ? 'allowed' : 'denied'}`);
    return answer === allow ? undefined : this.refusedText(who.id);
  }

  private refusedText(id: string): string {
    return `Model Gateway: "${this.extensionName(id)}" is not allowed to use its models (run "Model Gateway: Manage Extension Access to Models" to change that).`;
  }

  private extensionName(id: string): string {
    // VS Code's name for code it cannot tie to an extension (loaded from outside any extension folder).
    if (id === 'nullextensiondescription') return vscode.l10n.t('an extension VS Code does not name');
    const ext = vscode.extensions.all.find((e) => e.id.toLowerCase() === id);
    const name = (ext?.packageJSON as { displayName?: unknown } | undefined)?.displayName;
    return typeof name === 'string' && name ? `${name} (${id})` : id;
  }

  /** Forgets the answers for these extensions: they are asked again next time. */
  async forget(ids: readonly string[]): Promise<void> {
    const next = { ...this.decisions() };
    for (const id of ids) delete next[id];
    await this.state.update(DECISIONS, next);
  }

  /** Why a free tool call is refused now (too many in the last minute), or undefined. */
  rateRefusal(tool: string): string | undefined {
    let limit = this.limits.get(tool);
    if (!limit) {
      limit = new RateLimit(FREE_TOOL_CALLS_PER_MINUTE, 60_000);
      this.limits.set(tool, limit);
    }
    const taken = limit.take();
    return taken.ok
      ? undefined
      : `Error: ${tool} was called ${FREE_TOOL_CALLS_PER_MINUTE} times in the last minute; try again in ${Math.ceil(taken.retryInMs / 1000)} s.`;
  }
}

/** *Manage Extension Access to Models*: the remembered answers, and revoking them. */
export async function manageAccess(access: LmAccess): Promise<void> {
  const entries = Object.entries(access.decisions());
  if (!entries.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No extension has asked to use your Model Gateway models yet.'));
    return;
  }
  const picks = await vscode.window.showQuickPick(
    entries.map(([id, allowed]) => ({ label: id, description: allowed ? vscode.l10n.t('allowed') : vscode.l10n.t('denied') })),
    { title: vscode.l10n.t('Forget the answer (the extension is asked again next time)'), canPickMany: true },
  );
  if (picks?.length) await access.forget(picks.map((p) => p.label));
}
