/**
 * What a model costs: the user's own prices first (setting `modelGateway.prices`), then the
 * gateway's (`/api/pricing`). A model the gateway lists on its placeholder ratio, or does not list,
 * has no price: costs show as unknown, never as $0. (The image family's per-image prices are the
 * spec's, shown before each generation: `imagePrice` in the client.)
 */
import type { ModelPrice } from '../gateway/usageTypes';

/** Dollars per million tokens, as a user writes them in settings. */
export interface PriceOverride {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Cost {
  /** Dollars; undefined when the model has no known price. */
  dollars?: number;
  /** What the cache reads saved against paying full input price (net of the writes' surcharge). */
  savedDollars?: number;
  source: 'settings' | 'gateway' | 'unknown';
}

/** The spec's cache multipliers, for a price that does not state its own (Limits: read 0.1, 5-minute write 1.25). */
const CACHE_READ = 0.1;
const CACHE_WRITE = 1.25;

/**
 * The image family's published prices (the spec's Limits), for the models a gateway logs those
 * calls under (`imagegen-v3-<operation>`, `imagegen-<operation>`): what one image costs.
 */
export function imageFamilyPrice(model: string): string | undefined {
  const v3 = /^imagegen-v3-(generate|remix|edit|replace-background)$/.exec(model);
  if (v3) return v3[1] === 'generate' || v3[1] === 'remix' ? '$0.03 / $0.06 / $0.09 an image (Turbo / Default / Quality; published prices)' : '$0.06 / $0.06 / $0.09 an image (Turbo / Default / Quality; published prices)';
  const legacy = /^imagegen-(generate|edit|remix|upscale)$/.exec(model);
  if (!legacy) return undefined;
  return { generate: '$0.02–$0.08 an image by model', edit: '$0.05–$0.08 an image by model', remix: '$0.02–$0.08 an image by model', upscale: '$0.06 an image' }[legacy[1] as 'generate'] + ' (published prices)';
}

export class PriceBook {
  private readonly gateway = new Map<string, ModelPrice>();

  constructor(
    gatewayPrices: readonly ModelPrice[] | undefined,
    private readonly overrides: Readonly<Record<string, PriceOverride>> = {},
  ) {
    for (const p of gatewayPrices ?? []) this.gateway.set(p.model, p);
  }

  /** Whether the gateway published prices at all (one-api does not). */
  get hasGatewayPrices(): boolean {
    return this.gateway.size > 0;
  }

  price(model: string): { price: ModelPrice; source: 'settings' | 'gateway' } | undefined {
    const o = this.overrides[model];
    if (o) {
      return {
        source: 'settings',
        price: { model, kind: 'tokens', inputPerMTok: o.input, outputPerMTok: o.output, cacheReadPerMTok: o.cacheRead, cacheWritePerMTok: o.cacheWrite, unknown: false },
      };
    }
    const g = this.gateway.get(model);
    return g && !g.unknown ? { price: g, source: 'gateway' } : undefined;
  }

  /**
   * The cost of one reply (or a sum of replies of one model) from its token usage. Cache writes
   * with a 1-hour lifetime cost twice the input price (the spec's Limits), 5-minute ones the
   * gateway's write price.
   */
  cost(model: string, usage: TokenUsage, requests = 1, cacheTtl: '5m' | '1h' = '5m'): Cost {
    const found = this.price(model);
    if (!found) return { source: 'unknown' };
    const p = found.price;
    if (p.kind === 'request') return { dollars: (p.perRequest ?? 0) * requests, savedDollars: 0, source: found.source };
    const input = p.inputPerMTok ?? 0;
    const read = p.cacheReadPerMTok ?? input * CACHE_READ;
    const write = cacheTtl === '1h' ? input * 2 : (p.cacheWritePerMTok ?? input * CACHE_WRITE);
    const dollars = (usage.input * input + usage.output * (p.outputPerMTok ?? input) + usage.cacheRead * read + usage.cacheWrite * write) / 1e6;
    const savedDollars = (usage.cacheRead * (input - read) - usage.cacheWrite * (write - input)) / 1e6;
    return { dollars, savedDollars, source: found.source };
  }
}
