/**
 * Prices as VS Code's own chat shows them: its Language Models editor has a free-text Pricing
 * column (its number fields are GitHub credits, not dollars, so they stay empty). Pure: no `vscode`.
 */
import type { ModelPrice } from '../../common/usageTypes';

/**
 * A price for the Pricing column of VS Code's Language Models editor, input first (the cell shows
 * its start, the hover all of it): "$0.15 in · $0.6 out per M tokens".
 */
export function compactPrice(p: ModelPrice): string {
  const usd = (n: number) => `$${Number(n.toPrecision(3))}`;
  if (p.kind === 'request') return `${usd(p.perRequest ?? 0)} a request`;
  return `${usd(p.inputPerMTok ?? 0)} in · ${usd(p.outputPerMTok ?? p.inputPerMTok ?? 0)} out per M tokens`;
}

/** The input price per M tokens read back from `compactPrice`'s text, for cheapest-first order; unknown last. */
export function inputPriceOf(pricing: string | undefined): number {
  const m = /^\$([\d.]+) in\b/.exec(pricing ?? '');
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}
