/**
 * What a model costs: the user's own prices first (setting `modelGateway.prices`), then the
 * gateway's (`/api/pricing`). A model the gateway lists on its placeholder ratio, or does not list,
 * has no price: costs show as unknown, never as $0. (The image family's per-image prices are the
 * spec's, shown before each generation: `imagePrice` in the client.)
 */
import * as l10n from '@vscode/l10n';
import { imagePrice, LEGACY_EDIT_MODELS, LEGACY_MODELS, RENDERING_SPEEDS, V3_OPERATIONS, type V3Operation } from './imagePrices';
import type { ModelPrice } from './usageTypes';

/** Dollars per million tokens, as a user writes them in settings. */
export interface PriceOverride {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface TokenUsage {
  /** Every prompt token, cache reads and writes included (as the chat records them in every format). */
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
 * What one image costs, for the models a gateway logs the image family under
 * (`imagegen-v3-<operation>`, `imagegen-<operation>`): the spec's prices, as the client quotes them.
 */
export function imageFamilyPrice(model: string): string | undefined {
  const usd = (d: number | undefined) => `$${(d ?? 0).toFixed(2)}`;
  const range = (ds: (number | undefined)[]) => {
    const known = ds.filter((d): d is number => d !== undefined);
    return `${usd(Math.min(...known))}–${usd(Math.max(...known))}`;
  };
  const v3 = /^imagegen-v3-(.+)$/.exec(model)?.[1] as V3Operation | undefined;
  if (v3 && V3_OPERATIONS.includes(v3)) {
    return l10n.t(
      '{0} an image (Turbo / Default / Quality; published prices)',
      RENDERING_SPEEDS.map((speed) => usd(imagePrice({ generation: 'v3', operation: v3, rendering_speed: speed }))).join(' / '),
    );
  }
  const op = /^imagegen-(generate|remix|edit|upscale)$/.exec(model)?.[1];
  if (op === 'upscale') return l10n.t('{0} an image (published prices)', usd(imagePrice({ generation: 'legacy', operation: 'upscale' })));
  if (op === 'edit')
    return l10n.t(
      '{0} an image by model (published prices)',
      range(LEGACY_EDIT_MODELS.map((m) => imagePrice({ generation: 'legacy', operation: 'edit', model: m }))),
    );
  if (op === 'generate' || op === 'remix')
    return l10n.t('{0} an image by model (published prices)', range(LEGACY_MODELS.map((m) => imagePrice({ generation: 'legacy', operation: op, model: m }))));
  return undefined;
}

/** A model's price in a line: "$3.00 in · $15.00 out per M tokens", or "$0.0100 a request". */
export function priceText(p: ModelPrice): string {
  if (p.kind === 'request') return l10n.t('${0} a request', (p.perRequest ?? 0).toFixed(4));
  return l10n.t('${0} in · ${1} out per M tokens', dollarsText(p.inputPerMTok ?? 0), dollarsText(p.outputPerMTok ?? 0));
}

function dollarsText(n: number): string {
  return n >= 1 ? n.toFixed(2) : n.toPrecision(2);
}

export class PriceBook {
  private readonly gateway = new Map<string, ModelPrice>();

  constructor(
    gatewayPrices: readonly ModelPrice[] | undefined,
    private readonly overrides: Readonly<Record<string, PriceOverride>> = {},
  ) {
    for (const p of gatewayPrices ?? []) this.gateway.set(p.model, p);
  }

  /** The wire formats the gateway lists for a model (new-api's `supported_endpoint_types`). */
  endpoints(model: string): string[] | undefined {
    return this.gateway.get(model)?.endpoints;
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
        price: {
          model,
          kind: 'tokens',
          inputPerMTok: o.input,
          outputPerMTok: o.output,
          cacheReadPerMTok: o.cacheRead,
          cacheWritePerMTok: o.cacheWrite,
          unknown: false,
        },
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
    const uncached = Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
    const dollars = (uncached * input + usage.output * (p.outputPerMTok ?? input) + usage.cacheRead * read + usage.cacheWrite * write) / 1e6;
    const savedDollars = (usage.cacheRead * (input - read) - usage.cacheWrite * (write - input)) / 1e6;
    return { dollars, savedDollars, source: found.source };
  }
}
