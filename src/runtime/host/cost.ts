/**
 * What a model turn costs, for every surface, with one bounded price lookup
 * (`Prices.bookWithin`): an answer's cost (its subagents at their own models' prices included),
 * and the running figure a turn's cost limit is checked against.
 */
import type { AssistantTurn, TurnCost, Usage } from '../../common/conversation';
import type { PriceBook } from '../../common/prices';
import type { GatewayFeature, PriceSource } from '../../shell/services';

/** What pricing a turn needs of the platform. */
type PricedTurn = GatewayFeature & Pick<PriceSource, 'prices'>;

/** What these tokens cost at the model's price (unknown without a price, or when the price list is slow). */
export async function costOf(services: PricedTurn, model: string, usage: Usage, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  if (usage.input + usage.output + usage.cacheRead + usage.cacheWrite === 0) return undefined;
  const book = await services.prices.bookWithin();
  return book ? { ...book.cost(model, usage, 1, cacheTtl), estimated: !!usage.estimated } : undefined;
}

/** What a turn's subagents cost together, at their own models' prices (dollars): ended ones by their cost, running ones by their tokens so far. */
export function subagentDollars(turn: AssistantTurn, book?: PriceBook, cacheTtl: '5m' | '1h' = '5m'): number {
  let sum = 0;
  for (const s of turn.steps)
    for (const c of s.toolCalls) {
      const run = c.subagent;
      if (!run) continue;
      sum += run.cost?.dollars ?? (book ? (book.cost(run.model, run.usage, 1, cacheTtl).dollars ?? 0) : 0);
    }
  return sum;
}

/** An answer's cost: its own tokens at its model's price plus its subagents'. */
export async function answerCost(services: PricedTurn, turn: AssistantTurn, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  const u = turn.usage;
  if (u.input + u.output + u.cacheRead + u.cacheWrite === 0) return undefined;
  const book = await services.prices.bookWithin();
  if (!book) return undefined;
  const c = book.cost(turn.model, u, 1, cacheTtl);
  const subagents = subagentDollars(turn, book, cacheTtl);
  return { ...c, ...(c.dollars !== undefined && subagents > 0 ? { dollars: c.dollars + subagents } : {}), estimated: !!u.estimated };
}

/**
 * The running cost of one answer, for its limit: the price list is not waited for (the limit
 * applies once it is here); `dollars()` counts the answer's own tokens and every subagent's as
 * they stream, plus what earlier turns of the same budget spent (`spentBefore`: a background
 * session's earlier turns).
 */
export class CostMeter {
  private book: PriceBook | undefined;

  constructor(
    services: PricedTurn,
    private readonly turn: AssistantTurn,
    private readonly cacheTtl: '5m' | '1h',
    private readonly spentBefore = 0,
  ) {
    services.prices
      .book()
      .then((b) => (this.book = b))
      .catch((err: unknown) => services.log.warn(`cost: no prices for the cost limit (${err instanceof Error ? err.message : String(err)})`));
  }

  /** Dollars so far, or undefined while the prices are unknown (or the model has none). */
  dollars(): number | undefined {
    const own = this.book?.cost(this.turn.model, this.turn.usage, 1, this.cacheTtl).dollars;
    return own === undefined ? undefined : this.spentBefore + own + subagentDollars(this.turn, this.book, this.cacheTtl);
  }
}
