import * as z from '../core/z';
import { checkImageUrl } from '../../common/imageRules';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

export const MULTIMODAL_MODERATION_MODEL = 'omni-moderation-latest';
export const TEXT_MODERATION_MODEL = 'text-moderation-latest';

const Part = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('text'), text: z.string() }),
    z.looseObject({
      type: z.literal('image_url'),
      image_url: z.looseObject({
        url: z.string().superRefine((url, ctx) => {
          const problem = checkImageUrl(url);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      }),
    }),
  ],
  { error: 'each part needs type "text" or "image_url"' },
);

export const ModerationRequestSchema = z
  .looseObject({
    model: z.string().min(1, 'model must not be empty').optional(),
    input: z.union([z.string().min(1, 'must not be empty'), z.array(z.string()).min(1), z.array(Part).min(1)], {
      error: 'input must be a string, an array of strings, or an array of text/image_url parts',
    }),
  })
  .superRefine((r, ctx) => {
    const hasImage = Array.isArray(r.input) && r.input.some((p) => typeof p === 'object' && p.type === 'image_url');
    if (hasImage && r.model !== MULTIMODAL_MODERATION_MODEL) {
      ctx.addIssue({
        code: 'custom',
        path: ['model'],
        message: `image input needs the multimodal model "${MULTIMODAL_MODERATION_MODEL}"${r.model ? ` ("${r.model}" checks text only)` : ''}`,
      });
    }
  });

export type ModerationRequest = z.input<typeof ModerationRequestSchema>;

const ResultSchema = z.looseObject({
  flagged: z.boolean(),
  categories: z.record(z.string(), z.boolean().nullable()),
  category_scores: z.record(z.string(), z.number()),
  category_applied_input_types: z.record(z.string(), z.array(z.string())).optional(),
});
const ResponseSchema = z.looseObject({ id: z.string().optional(), model: z.string().optional(), results: z.array(ResultSchema) });

export type ModerationResult = z.output<typeof ResultSchema>;
export type ModerationResponse = z.output<typeof ResponseSchema>;

export class Moderations {
  constructor(private readonly transport: Transport) {}

  async create(body: ModerationRequest, opts: RequestOptions = {}): Promise<ModerationResponse> {
    const req = validateRequest(ModerationRequestSchema, body);
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/moderations', auth: 'bearer', json: req, signal: opts.signal });
    return parseResponse(ResponseSchema, data, 'a moderation request');
  }
}

/**
 * Categories flagged in a result, with their scores, most severe first, and the input types each
 * category was scored on (`category_applied_input_types`: for an image-reading category with text
 * and an image, both; the API does not say which of them tripped it).
 */
export function flaggedCategories(result: ModerationResult): { category: string; score: number; inputTypes: string[] }[] {
  return Object.entries(result.categories)
    .filter(([, hit]) => hit === true)
    .map(([category]) => ({
      category,
      score: result.category_scores[category] ?? 0,
      inputTypes: result.category_applied_input_types?.[category] ?? [],
    }))
    .sort((a, b) => b.score - a.score);
}
