import * as z from '../core/z';
import { errorFromStreamPayload } from '../core/errors';
import { checkImageUrl } from '../../common/imageRules';
import { SSEStream } from '../core/stream';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { parseResponse, validateRequest } from '../core/validate';

/**
 * `POST /v1/responses`, the third wire format (new-api relays it; one-api has none), as the
 * official SDK types it: input items in, output items out, function tools both ways, reasoning
 * summaries and encrypted reasoning items for stateless tool loops (`store: false`).
 */

// ---------- request ----------

const InputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const InputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().superRefine((url, ctx) => {
    const problem = checkImageUrl(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  detail: z.enum(['low', 'high', 'auto']).optional(),
});
const OutputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });

const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([z.string(), z.array(z.union([InputText, InputImage, OutputText]))]),
});
const FunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  id: z.string().optional(),
});
const FunctionCallOutputItem = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: z.string() });
const SummaryText = z.looseObject({ type: z.literal('summary_text'), text: z.string() });
const ReasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(SummaryText),
  encrypted_content: z.string().nullable().optional(),
});
/** What `/v1/responses/compact` returns in place of older items: opaque, only the Responses format reads it. */
const CompactionItem = z.looseObject({ type: z.literal('compaction'), id: z.string().optional(), encrypted_content: z.string().min(1) });
const InputItem = z.union([FunctionCallItem, FunctionCallOutputItem, ReasoningItem, CompactionItem, MessageItem]);

const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, { error: 'must be 1-64 letters, digits, _ or -' }),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

export const ResponseCreateSchema = z
  .looseObject({
    model: z.string().min(1),
    input: z.union([z.string().min(1), z.array(InputItem).min(1)]),
    instructions: z.string().optional(),
    tools: z.array(FunctionTool).optional(),
    tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), name: z.string() })]).optional(),
    parallel_tool_calls: z.boolean().optional(),
    reasoning: z
      .looseObject({ effort: z.enum(['minimal', 'low', 'medium', 'high']).optional(), summary: z.enum(['auto', 'concise', 'detailed']).optional() })
      .optional(),
    include: z.array(z.string()).optional(),
    store: z.boolean().optional(),
    max_output_tokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    stream: z.boolean().optional(),
  })
  .superRefine((req, ctx) => {
    if (req.tool_choice && typeof req.tool_choice === 'object' && !req.tools?.some((t) => t.name === (req.tool_choice as { name: string }).name)) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'name'], message: 'must name one of the tools' });
    }
  });
export type ResponseCreateRequest = z.input<typeof ResponseCreateSchema>;
export type ResponseInputItem = z.input<typeof InputItem>;

/** `POST /v1/responses/compact` (OpenAI's; new-api relays it as `OpenAIResponsesCompactionRequest`). */
export const CompactRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string().min(1), z.array(InputItem).min(1)]),
  instructions: z.string().optional(),
  previous_response_id: z.string().optional(),
});
export type CompactRequest = z.input<typeof CompactRequestSchema>;

const CompactionSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  /** The compacted window: the user messages kept, then one `compaction` item; sent as the next request's input. */
  output: z.array(z.looseObject({ type: z.string().optional() })).min(1),
  usage: z.looseObject({ input_tokens: z.number(), output_tokens: z.number() }).nullish(),
});
export type Compaction = z.output<typeof CompactionSchema>;
export type ResponseFunctionTool = z.input<typeof FunctionTool>;

// ---------- response ----------

const OutputMessage = z.looseObject({
  type: z.literal('message'),
  id: z.string(),
  role: z.literal('assistant'),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() })),
});
const OutputFunctionCall = z.looseObject({
  type: z.literal('function_call'),
  id: z.string().optional(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});
const OutputReasoning = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string(),
  summary: z.array(SummaryText),
  encrypted_content: z.string().nullable().optional(),
});
const OutputOther = z.looseObject({ type: z.string() });
const OutputItem = z.union([OutputMessage, OutputFunctionCall, OutputReasoning, OutputOther]);

const UsageSchema = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  total_tokens: z.number().optional(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullable().optional(),
  output_tokens_details: z.looseObject({ reasoning_tokens: z.number().optional() }).nullable().optional(),
});

export const ResponseSchema = z.looseObject({
  id: z.string(),
  status: z.string().optional(),
  model: z.string().optional(),
  output: z.array(OutputItem),
  usage: UsageSchema.nullable().optional(),
  error: z.looseObject({ code: z.string().nullable().optional(), message: z.string() }).nullable().optional(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullable().optional(),
});
export type ResponseObject = z.output<typeof ResponseSchema>;
export type ResponseOutputItem = ResponseObject['output'][number];
export type ResponseUsage = z.output<typeof UsageSchema>;

/** The text of a response's output messages, joined (the SDK's `output_text`). */
export function outputText(r: Pick<ResponseObject, 'output'>): string {
  return r.output
    .flatMap((i) => (i.type === 'message' ? (i as z.output<typeof OutputMessage>).content : []))
    .map((c) => (c.type === 'output_text' ? (c.text ?? '') : ''))
    .join('');
}

// ---------- stream ----------

/** One streamed event (`type` names it; fields per the SDK's `ResponseStreamEvent`). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number?: number;
  output_index?: number;
  item_id?: string;
  summary_index?: number;
  delta?: string;
  text?: string;
  arguments?: string;
  item?: Record<string, unknown>;
  response?: Record<string, unknown>;
  [k: string]: unknown;
}

interface ItemState {
  item: Record<string, unknown>;
  text: string[];
  args: string[];
  summary: string[][];
}

/** Folds events into the response: items by output index, text and argument deltas joined once. */
export class ResponseAccumulator {
  private readonly items: ItemState[] = [];
  private base: Record<string, unknown> = { id: '', output: [] };
  completed = false;
  failed: { code?: string | null; message: string } | undefined;

  add(ev: ResponseStreamEvent): void {
    const at = ev.output_index ?? 0;
    switch (ev.type) {
      case 'response.created':
      case 'response.in_progress':
        if (ev.response) this.base = { ...ev.response };
        break;
      case 'response.output_item.added':
        this.items[at] = { item: { ...(ev.item ?? {}) }, text: [], args: [], summary: [] };
        break;
      case 'response.output_text.delta':
        this.state(at).text.push(ev.delta ?? '');
        break;
      case 'response.function_call_arguments.delta':
        this.state(at).args.push(ev.delta ?? '');
        break;
      case 'response.reasoning_summary_text.delta': {
        const s = this.state(at).summary;
        (s[ev.summary_index ?? 0] ??= []).push(ev.delta ?? '');
        break;
      }
      case 'response.output_item.done':
        if (ev.item) this.items[at] = { item: { ...ev.item }, text: [], args: [], summary: [] };
        break;
      case 'response.completed':
      case 'response.incomplete':
        if (ev.response) this.base = { ...ev.response };
        this.completed = true;
        break;
      case 'response.failed': {
        const err = (ev.response as { error?: { code?: string; message?: string } } | undefined)?.error;
        this.failed = { code: err?.code, message: err?.message ?? 'the response failed' };
        break;
      }
    }
  }

  private state(at: number): ItemState {
    return (this.items[at] ??= { item: { type: 'message', role: 'assistant', content: [] }, text: [], args: [], summary: [] });
  }

  /** The response so far: finished items as the server sent them, open ones from their deltas. */
  snapshot(): ResponseObject {
    const output = this.items.filter(Boolean).map((s): ResponseOutputItem => {
      const item = { ...s.item } as Record<string, unknown>;
      if (s.text.length && item.type === 'message') item.content = [{ type: 'output_text', text: s.text.join('') }];
      if (s.args.length && item.type === 'function_call') item.arguments = s.args.join('');
      if (s.summary.length && item.type === 'reasoning') item.summary = s.summary.map((parts) => ({ type: 'summary_text', text: parts.join('') }));
      return item as ResponseOutputItem;
    });
    const done = this.completed && Array.isArray(this.base.output) && (this.base.output as unknown[]).length > 0;
    return {
      ...(this.base as ResponseObject),
      id: typeof this.base.id === 'string' ? this.base.id : '',
      output: done ? (this.base.output as ResponseOutputItem[]) : output,
    };
  }
}

export class ResponseStream extends SSEStream<ResponseStreamEvent, ResponseObject> {
  private readonly acc = new ResponseAccumulator();

  protected onEvent(event: string, data: string, out: ResponseStreamEvent[] | null): void {
    if (data === '[DONE]') {
      this.terminated = true;
      return;
    }
    const json = this.parseJson(data) as ResponseStreamEvent & { error?: unknown };
    if (!json || typeof json !== 'object') return;
    if (event === 'error' || json.type === 'error' || (json.error && !json.type))
      throw errorFromStreamPayload(json.type === 'error' ? { error: json } : json, this.snapshot());
    this.acc.add(json);
    if (this.acc.failed) throw errorFromStreamPayload({ error: this.acc.failed }, this.snapshot());
    if (out) out.push(json);
    if (this.acc.completed) this.terminated = true;
  }

  protected isComplete(): boolean {
    return this.acc.completed;
  }

  snapshot(): ResponseObject {
    return this.acc.snapshot();
  }

  /** Reads the stream to its end: the whole response with its usage. */
  finalResponse(): Promise<ResponseObject> {
    return this.settle();
  }
}

// ---------- resource ----------

export class Responses {
  constructor(private readonly transport: Transport) {}

  async create(body: ResponseCreateRequest, opts: RequestOptions = {}): Promise<ResponseObject> {
    const req = validateRequest(ResponseCreateSchema, { ...body, stream: false });
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/responses', auth: 'bearer', json: req, signal: opts.signal, retry: opts.retry });
    return parseResponse(ResponseSchema, data, 'a response');
  }

  /**
   * Compacts a conversation on the server: the items in, a shorter window out (the user messages
   * and one opaque `compaction` item that keeps what the model knew, encrypted reasoning
   * included). A gateway without the route answers 404 (`NotFoundError`).
   */
  async compact(body: CompactRequest, opts: RequestOptions = {}): Promise<Compaction> {
    const req = validateRequest(CompactRequestSchema, body);
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/responses/compact', auth: 'bearer', json: req, signal: opts.signal });
    return parseResponse(CompactionSchema, data, 'a compaction');
  }

  stream(body: ResponseCreateRequest, opts: RequestOptions = {}): ResponseStream {
    const req = validateRequest(ResponseCreateSchema, { ...body, stream: true });
    return new ResponseStream(
      (signal) =>
        this.transport.send({ method: 'POST', path: '/v1/responses', auth: 'bearer', json: req, accept: 'text/event-stream', signal, retry: opts.retry }),
      'Response stream',
      opts.signal,
    );
  }
}
