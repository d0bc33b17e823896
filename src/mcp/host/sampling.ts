import * as vscode from 'vscode';
import { askWithFallback } from '../../runtime/host/fallbackChain';
import type { ActionApprover } from '../../runtime/core/approval';
import { isChatModel } from '../../common/conversation';
import { formatCost } from '../../common/money';
import type { CompletionSpendByDay } from '../../common/usageReport';
import { addRequest, dayOf, readLedger, type CompletionLedger } from '../../runtime/core/spendLedger';
import { numberSetting } from '../../shell/settingsSchema';
import type { CredentialSource, PricedFeature } from '../../shell/services';
import {
  chooseModel,
  describeRequest,
  fallbackDollars,
  SamplingRefusal,
  stopReasonOf,
  toChatRequest,
  worstCaseDollars,
  type SamplingParams,
} from '../core/sampling';
import { loadMcpSdk } from './sdk';

/** Servers whose sampling runs unasked (under the daily cap): by name, with the command line allowed. */
const ALLOWED_KEY = 'modelGateway.mcp.samplingAllowed';
/** What each server's sampling spent, per local day and model. */
const SPEND_KEY = 'modelGateway.mcp.samplingSpend';
/** The chat's chosen model (its panel's picker). */
const CHAT_MODEL_KEY = 'modelGateway.chat.model';
/** JSON-RPC's code for a request the person turned down (the MCP spec's example). */
const DECLINED_CODE = -1;

/** The server a request comes from, as the hub knows it. */
export interface SamplingServer {
  name: string;
  source: 'user' | 'workspace';
  /** Its command line or URL: an "always allow" holds for this exact one. */
  fingerprint: string;
}

/** The chat turn whose tool call of this server is running: its approval bar is where the person decides. */
export interface ChatTurnLink {
  approver: ActionApprover;
  callId: string | undefined;
  signal: AbortSignal | undefined;
}

type SamplingResult = { role: 'assistant'; content: { type: 'text'; text: string }; model: string; stopReason: string };

/**
 * Sampling for MCP servers: a server's `sampling/createMessage` runs through the gateway with the
 * person's key, so it never runs without a yes (in the chat's approval bar when the request comes
 * during one of the server's tool calls, else a modal), or an "always allow" for that server,
 * which holds under a daily dollar cap from the user settings. What it spends is counted per
 * server for the Usage view.
 */
export class McpSampling {
  private asked = 0;

  constructor(
    private readonly services: PricedFeature & CredentialSource,
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The cap from the user settings only: a workspace cannot raise it. */
  capDollars(): number {
    return numberSetting(
      'modelGateway.mcp.sampling.dailyCapDollars',
      vscode.workspace.getConfiguration('modelGateway').inspect('mcp.sampling.dailyCapDollars')?.globalValue,
    );
  }

  private ledgers(): Record<string, CompletionLedger> {
    const stored = this.context.globalState.get<Record<string, unknown>>(SPEND_KEY, {});
    return Object.fromEntries(Object.entries(typeof stored === 'object' && stored ? stored : {}).map(([server, l]) => [server, readLedger(l)]));
  }

  /** What a server's sampling spent today. */
  spentToday(server: string, now = Date.now()): number {
    const ledger = this.ledgers()[server];
    return ledger ? dayOf(ledger, now).dollars : 0;
  }

  /** Each server's spend per day and model, for the Usage view. */
  spendByDay(): Record<string, CompletionSpendByDay> {
    return this.ledgers();
  }

  private store(server: SamplingServer): vscode.Memento {
    return server.source === 'workspace' ? this.context.workspaceState : this.context.globalState;
  }

  isAlwaysAllowed(server: SamplingServer): boolean {
    return this.store(server).get<Record<string, string>>(ALLOWED_KEY, {})[server.name] === server.fingerprint;
  }

  async setAlwaysAllowed(server: SamplingServer, allowed: boolean): Promise<void> {
    const all = { ...this.store(server).get<Record<string, string>>(ALLOWED_KEY, {}) };
    if (allowed) all[server.name] = server.fingerprint;
    else delete all[server.name];
    await this.store(server).update(ALLOWED_KEY, all);
  }

  async handle(server: SamplingServer, params: SamplingParams, turn: ChatTurnLink | undefined, signal: AbortSignal): Promise<SamplingResult> {
    const sdk = loadMcpSdk();
    const refuse = (message: string, code: number = -32602): never => {
      this.log.warn(`[${server.name}] sampling refused: ${message}`);
      throw new sdk.McpError(code, message);
    };
    const listed = await this.services
      .client()
      .models.list({ signal })
      .then((ms) => ms.map((m) => m.id).filter(isChatModel))
      .catch(() => [] as string[]);
    const fallback = this.context.workspaceState.get<string>(CHAT_MODEL_KEY) || this.services.settings().defaultModels.chat || undefined;
    const chosen = chooseModel(params.modelPreferences, listed, fallback);
    if (!chosen) return refuse('no chat model is available on the gateway');
    let request;
    try {
      request = toChatRequest(params, chosen.model);
    } catch (err) {
      if (err instanceof SamplingRefusal) return refuse(err.message);
      throw err;
    }
    const book = await this.services.prices.book().catch(() => undefined);
    const worst = worstCaseDollars(params, (usage) => book?.cost(chosen.model, usage).dollars);
    const price = worst.priced
      ? vscode.l10n.t('at most {0}', formatCost(worst.dollars))
      : vscode.l10n.t('at most {0} (price unknown: counted high)', formatCost(worst.dollars));
    this.log.info(`[${server.name}] asks ${chosen.model} (${chosen.why}), ${price}:\n${describeRequest(params)}`);

    const cap = this.capDollars();
    const spent = this.spentToday(server.name);
    const allowed = this.isAlwaysAllowed(server);
    const underCap = spent + worst.dollars <= cap;
    if (!(allowed && underCap)) {
      const reason = allowed
        ? vscode.l10n.t(
            'today\'s cap for "{0}" ({1}, modelGateway.mcp.sampling.dailyCapDollars) could be passed: {2} spent',
            server.name,
            formatCost(cap),
            formatCost(spent),
          )
        : vscode.l10n.t("an MCP server's request to your model is paid from your balance ({0})", chosen.why);
      const decision = await this.ask(server, params, chosen.model, price, reason, cap, turn, signal);
      if (!decision.accepted) return refuse('the person declined the sampling request', DECLINED_CODE);
      if (decision.always) await this.setAlwaysAllowed(server, true);
    } else this.log.info(`[${server.name}] sampling runs unasked (always allowed; ${formatCost(spent)} of ${formatCost(cap)} spent today)`);

    // A busy model hands the request to the next of its chain; what the person approved is the price of the first.
    const asked = await askWithFallback(this.services, `MCP sampling (${server.name})`, chosen.model, {
      signal,
      attempt: (a) => this.services.client().chat.completions.create({ ...request, model: a.model }, { signal: a.signal, retry: a.retry }),
    });
    const reply = asked.value;
    const usage = { input: reply.usage?.prompt_tokens ?? 0, output: reply.usage?.completion_tokens ?? 0, cacheRead: 0, cacheWrite: 0 };
    const dollars = book?.cost(asked.model, usage).dollars ?? fallbackDollars(usage);
    await this.record(server.name, asked.model, dollars, usage.input + usage.output);
    const choice = reply.choices[0];
    const text = typeof choice?.message.content === 'string' ? choice.message.content : '';
    return { role: 'assistant', content: { type: 'text', text }, model: asked.model, stopReason: stopReasonOf(choice?.finish_reason) };
  }

  private async ask(
    server: SamplingServer,
    params: SamplingParams,
    model: string,
    price: string,
    reason: string,
    cap: number,
    turn: ChatTurnLink | undefined,
    signal: AbortSignal,
  ): Promise<{ accepted: boolean; always: boolean }> {
    const always = vscode.l10n.t('"{0}" ask your model (up to {1} a day)', server.name, formatCost(cap));
    if (turn && !turn.signal?.aborted) {
      const id = `${turn.callId ?? 'mcp'}-sampling-${++this.asked}`;
      const both = turn.signal ? AbortSignal.any([signal, turn.signal]) : signal;
      return turn.approver.approveAction(
        { kind: 'sampling', action: model, where: server.name, args: describeRequest(params), price, reason, always },
        id,
        both,
      );
    }
    // Outside a chat turn (a server asking on its own): a modal only the person answers.
    const allowAlways = vscode.l10n.t('Always Allow for {0}', server.name);
    const answer = await this.services.prompts.choose(
      vscode.l10n.t('The MCP server "{0}" asks {1} for an answer ({2}).', server.name, model, price),
      vscode.l10n.t('{0}\n\nAsks because {1}. "{2}" lets {3}.', describeRequest(params), reason, allowAlways, always),
      [vscode.l10n.t('Allow'), allowAlways],
    );
    return { accepted: answer !== undefined && !signal.aborted, always: answer === allowAlways };
  }

  private async record(server: string, model: string, dollars: number, tokens: number): Promise<void> {
    const all = this.ledgers();
    all[server] = addRequest(all[server] ?? {}, Date.now(), model, dollars, tokens);
    await this.context.globalState.update(SPEND_KEY, all);
    this.services.notifySpend();
    this.log.info(
      `[${server}] sampling spent ${formatCost(dollars)}; ${formatCost(this.spentToday(server))} today of the ${formatCost(this.capDollars())} cap`,
    );
  }
}
