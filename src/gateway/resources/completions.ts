import * as z from '../core/z';
import { errorFromStreamPayload } from '../core/errors';
import { SSEStream } from '../core/stream';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { parseResponse, validateRequest } from '../core/validate';

/**
 * `POST /v1/completions`, the legacy text-completion interface, used here for fill-in-the-middle:
 * `prompt` is the code before the cursor and `suffix` the code after it (new-api passes both
 * through; an upstream without FIM refuses `suffix`, and the caller then asks without it).
 */

export const CompletionRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string(),
  suffix: z.string().optional(),
  max_tokens: z.number().int().positive().max(32_768).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  // OpenAI allows up to 4 stop sequences.
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).optional(),
  stream: z.boolean().optional(),
  n: z.literal(1).optional(),
});
export type CompletionRequest = z.input<typeof CompletionRequestSchema>;

const CompletionUsage = z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number().optional() });

export const CompletionSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z.array(z.looseObject({ text: z.string(), index: z.number().optional(), finish_reason: z.string().nullable().optional() })).min(1),
  usage: CompletionUsage.nullable().optional(),
});
export type Completion = z.output<typeof CompletionSchema>;

/** One streamed chunk: `choices[0].text` is the next piece. */
export interface CompletionChunk {
  id?: string;
  choices: { text?: string; index?: number; finish_reason?: string | null }[];
  usage?: z.output<typeof CompletionUsage> | null;
}

export class CompletionStream extends SSEStream<CompletionChunk, Completion> {
  private readonly parts: string[] = [];
  private finish: string | null = null;
  private usage: Completion['usage'] = undefined;
  private id: string | undefined;

  protected onEvent(event: string, data: string, out: CompletionChunk[] | null): void {
    if (data === '[DONE]') {
      this.terminated = true;
      return;
    }
    const json = this.parseJson(data) as CompletionChunk & { error?: unknown };
    if (event === 'error' || (json && typeof json === 'object' && json.error)) throw errorFromStreamPayload(json, this.snapshot());
    if (!json || typeof json !== 'object') return;
    this.id ??= json.id;
    const c = json.choices?.[0];
    if (c?.text) this.parts.push(c.text);
    if (c?.finish_reason) this.finish = c.finish_reason;
    if (json.usage) this.usage = json.usage;
    if (out) out.push(json);
  }

  protected isComplete(): boolean {
    return this.finish !== null;
  }

  snapshot(): Completion {
    return { id: this.id, choices: [{ text: this.parts.join(''), index: 0, finish_reason: this.finish }], usage: this.usage };
  }

  /** Reads the stream to its end: the whole text, its finish reason and usage. */
  finalCompletion(): Promise<Completion> {
    return this.settle();
  }
}

export class TextCompletions {
  constructor(private readonly transport: Transport) {}

  async create(body: CompletionRequest, opts: RequestOptions = {}): Promise<Completion> {
    const req = validateRequest(CompletionRequestSchema, { ...body, stream: false });
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/completions', auth: 'bearer', json: req, signal: opts.signal, retry: opts.retry });
    return parseResponse(CompletionSchema, data, 'a completion');
  }

  /** Streams a completion (`stream_options.include_usage` asked, as for chat). */
  stream(body: CompletionRequest, opts: RequestOptions = {}): CompletionStream {
    const req = validateRequest(CompletionRequestSchema, { ...body, stream: true, stream_options: { include_usage: true } });
    return new CompletionStream(
      (signal) =>
        this.transport.send({ method: 'POST', path: '/v1/completions', auth: 'bearer', json: req, accept: 'text/event-stream', signal, retry: opts.retry }),
      'Completion stream',
      opts.signal,
    );
  }
}
