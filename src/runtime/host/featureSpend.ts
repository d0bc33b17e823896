import type * as vscode from 'vscode';
import type { CompletionSpendByDay } from '../../common/usageReport';
import { FALLBACK_PRICE_PER_MTOK } from '../core/limits';
import { addRequest, dayOf, readLedger, type CompletionDay } from '../core/spendLedger';
import type { GatewayConnection, PriceSource } from '../../shell/services';

/**
 * What one of this extension's own uses of the gateway spent (commit messages, reviews, next-edit
 * suggestions), counted per local day and model in global state: the Usage view carves it out of
 * its model's figures as a series of its own.
 */
export class FeatureSpend {
  constructor(
    /** The series' name in the Usage view. */
    readonly series: string,
    private readonly key: string,
    private readonly state: vscode.Memento,
    private readonly services: GatewayConnection & PriceSource,
  ) {}

  spendByDay(): CompletionSpendByDay {
    return readLedger(this.state.get(this.key));
  }

  today(): CompletionDay {
    return dayOf(readLedger(this.state.get(this.key)), Date.now());
  }

  /** Records one answered request; returns what it cost (at the gateway's price, else the cap's deliberately high fallback). */
  async add(model: string, tokens: { input: number; output: number }): Promise<{ dollars: number; priced: boolean }> {
    const book = await this.services.prices.book().catch(() => undefined);
    const priced = book?.cost(model, { input: tokens.input, output: tokens.output, cacheRead: 0, cacheWrite: 0 }).dollars;
    const dollars = priced ?? (tokens.input * FALLBACK_PRICE_PER_MTOK.input + tokens.output * FALLBACK_PRICE_PER_MTOK.output) / 1e6;
    await this.state.update(this.key, addRequest(readLedger(this.state.get(this.key)), Date.now(), model, dollars, tokens.input + tokens.output));
    if (dollars > 0) this.services.notifySpend();
    return { dollars, priced: priced !== undefined };
  }

  /** What a request of `inputTokens` would cost (output as given), or undefined when the gateway has no price for the model. */
  async estimate(model: string, inputTokens: number, outputTokens: number): Promise<number | undefined> {
    const book = await this.services.prices.book().catch(() => undefined);
    return book?.cost(model, { input: inputTokens, output: outputTokens, cacheRead: 0, cacheWrite: 0 }).dollars;
  }
}
