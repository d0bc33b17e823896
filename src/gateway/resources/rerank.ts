import * as z from '../core/z';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

export const RerankRequestSchema = z
  .looseObject({
    model: z.string({ error: 'model is required (a rerank model id)' }).min(1, 'model must not be empty'),
    query: z.string({ error: 'query is required' }).min(1, 'query must not be empty'),
    documents: z.array(z.string(), { error: 'documents is required (an array of strings)' }).min(1, 'must hold at least one document'),
    top_n: z.number().int('must be a whole number').positive('must be at least 1').optional(),
    return_documents: z.boolean().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.top_n !== undefined && r.top_n > r.documents.length) {
      ctx.addIssue({ code: 'custom', path: ['top_n'], message: `is ${r.top_n}, more than the ${r.documents.length} documents` });
    }
  });

export type RerankRequest = z.input<typeof RerankRequestSchema>;

const ResultSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  relevance_score: z.number(),
  document: z.looseObject({ text: z.string() }).nullable().optional(),
});
const ResponseSchema = z.looseObject({ results: z.array(ResultSchema) });

export type RerankResult = z.output<typeof ResultSchema>;

export class Rerank {
  constructor(private readonly transport: Transport) {}

  /** Scores documents against the query; results come most relevant first. */
  async create(body: RerankRequest, opts: RequestOptions = {}): Promise<{ results: RerankResult[]; usage?: unknown }> {
    const req = validateRequest(RerankRequestSchema, body);
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/rerank', auth: 'bearer', json: req, signal: opts.signal });
    const parsed = parseResponse(ResponseSchema, data, 'a rerank request');
    const results = [...parsed.results].sort((a, b) => b.relevance_score - a.relevance_score);
    return { results, usage: (parsed as { usage?: unknown }).usage };
  }
}
