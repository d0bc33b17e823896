/**
 * The image family's published prices (the spec's Limits), with no imports: the gateway client
 * prices a request before sending it, and the Usage view names them for the models a gateway logs.
 */
export const LEGACY_MODELS = ['V_2', 'V_2_TURBO', 'V_2A', 'V_2A_TURBO', 'V_1', 'V_1_TURBO'] as const;
export const LEGACY_EDIT_MODELS = ['V_2', 'V_2_TURBO'] as const;
export const RENDERING_SPEEDS = ['TURBO', 'DEFAULT', 'QUALITY'] as const;

export type RenderingSpeed = (typeof RENDERING_SPEEDS)[number];
export type LegacyModel = (typeof LEGACY_MODELS)[number];

export const V3_OPERATIONS = ['generate', 'remix', 'edit', 'replace-background'] as const;
export type V3Operation = (typeof V3_OPERATIONS)[number];

const V3_PRICES: Record<V3Operation, Record<RenderingSpeed, number>> = {
  generate: { TURBO: 0.03, DEFAULT: 0.06, QUALITY: 0.09 },
  remix: { TURBO: 0.03, DEFAULT: 0.06, QUALITY: 0.09 },
  edit: { TURBO: 0.06, DEFAULT: 0.06, QUALITY: 0.09 },
  'replace-background': { TURBO: 0.06, DEFAULT: 0.06, QUALITY: 0.09 },
};
const LEGACY_GENERATE_PRICES: Record<LegacyModel, number> = { V_2: 0.08, V_2_TURBO: 0.05, V_2A: 0.04, V_2A_TURBO: 0.025, V_1: 0.06, V_1_TURBO: 0.02 };
const LEGACY_EDIT_PRICES: Record<'V_2' | 'V_2_TURBO', number> = { V_2: 0.08, V_2_TURBO: 0.05 };
const UPSCALE_PRICE = 0.06;

export type PriceQuery =
  | { generation: 'v3'; operation: keyof typeof V3_PRICES; rendering_speed?: RenderingSpeed; num_images?: number }
  | { generation: 'legacy'; operation: 'generate' | 'remix' | 'edit'; model?: LegacyModel; num_images?: number }
  | { generation: 'legacy'; operation: 'upscale' | 'describe'; num_images?: number };

/**
 * The price in dollars of a request, from the spec's tables; undefined where the spec gives none
 * (describe). Legacy remix is priced as a generation with the same model (the spec lists no remix
 * price); the legacy default model is V_2, the V3 default speed DEFAULT.
 */
export function imagePrice(q: PriceQuery): number | undefined {
  const n = q.num_images ?? 1;
  let each: number | undefined;
  if (q.generation === 'v3') each = V3_PRICES[q.operation][q.rendering_speed ?? 'DEFAULT'];
  else if (q.operation === 'upscale') each = UPSCALE_PRICE;
  else if (q.operation === 'describe') each = undefined;
  else {
    const model: LegacyModel = ('model' in q ? q.model : undefined) ?? 'V_2';
    each = q.operation === 'edit' ? LEGACY_EDIT_PRICES[model as 'V_2' | 'V_2_TURBO'] : LEGACY_GENERATE_PRICES[model];
  }
  return each === undefined ? undefined : Math.round(each * n * 1000) / 1000;
}
