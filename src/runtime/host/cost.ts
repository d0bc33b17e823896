/**
 * What a model turn costs, for every surface, with one bounded price lookup
 * (`Prices.bookWithin`): an answer's cost (its subagents at their own models' prices included),
 * and the running figure a turn's cost limit is checked against.
 */
import { usageParts, type AssistantTurn, type TurnCost, type Usage } from '../../common/conversation';
import type { Cost, PriceBook } from '../../common/prices';
import type { GatewayFeature, PriceSource } from '../../shell/services';

/** What pricing a turn needs of the platform. */
type PricedTurn = GatewayFeature & Pick<PriceSource, 'prices'>;

/** What these tokens cost at the model's price (unknown without a price, or when the price list is slow). */
export async function costOf(services: PricedTurn, model: string, usage: Usage, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  if (usage.input + usage.output + usage.cacheRead + usage.cacheWrite === 0) return undefined;
  const book = await services.prices.bookWithin();
  return book ? { ...book.cost(model, usage, 1, cacheTtl), estimated: !!usage.estimated } : undefined;
}

/**
 * Tokens that went to several models (a fallback answered) at each model's own price: a model
 * without a price makes the whole unknown (a total that leaves it out would understate the bill).
 */
export function partsCost(book: PriceBook, parts: [string, Usage][], cacheTtl: '5m' | '1h'): Cost {
  const costs = parts.map(([model, usage]) => book.cost(model, usage, 1, cacheTtl));
  if (costs.length === 1) return costs[0];
  const known = costs.every((c) => c.dollars !== undefined);
  const saved = costs.reduce((n, c) => n + (c.savedDollars ?? 0), 0);
  return {
    ...costs[costs.length - 1],
    dollars: known ? costs.reduce((n, c) => n + (c.dollars ?? 0), 0) : undefined,
    ...(saved ? { savedDollars: saved } : {}),
  };
}

/** What these tokens cost, each model's share at its own price. */
export async function costOfParts(services: PricedTurn, parts: [string, Usage][], cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  if (parts.every(([, u]) => u.input + u.output + u.cacheRead + u.cacheWrite === 0)) return undefined;
  const book = await services.prices.bookWithin();
  const estimated = parts.some(([, u]) => u.estimated);
  return book ? { ...partsCost(book, parts, cacheTtl), estimated } : undefined;
}

/** What a turn's subagents cost together, at their own models' prices (dollars): ended ones by their cost, running ones by their tokens so far. */
export function subagentDollars(turn: AssistantTurn, book?: PriceBook, cacheTtl: '5m' | '1h' = '5m'): number {
  let sum = 0;
  for (const s of turn.steps)
    for (const c of s.toolCalls) {
      const run = c.subagent;
      if (!run) continue;
      sum += run.cost?.dollars ?? (book ? (partsCost(book, usageParts(run), cacheTtl).dollars ?? 0) : 0);
    }
  return sum;
}

/** An answer's cost: its own tokens at its model's price plus its subagents'. */
export async function answerCost(services: PricedTurn, turn: AssistantTurn, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  const u = turn.usage;
  if (u.input + u.output + u.cacheRead + u.cacheWrite === 0) return undefined;
  const book = await services.prices.bookWithin();
  if (!book) return undefined;
  const c = partsCost(book, usageParts(turn), cacheTtl);
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
    const own = this.book ? partsCost(this.book, usageParts(this.turn), this.cacheTtl).dollars : undefined;
    return own === undefined ? undefined : this.spentBefore + own + subagentDollars(this.turn, this.book, this.cacheTtl);
  }
}
