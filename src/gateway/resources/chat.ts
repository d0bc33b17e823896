import { randomBytes } from 'node:crypto';
import * as z from '../core/z';
import { BadRequestError, errorFromStreamPayload } from '../core/errors';
import { checkImageUrl } from '../../common/imageRules';
import { SSEStream } from '../core/stream';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { parseResponse, validateRequest } from '../core/validate';

// ---------- request ----------

const imageUrl = z.string().superRefine((url, ctx) => {
  const problem = checkImageUrl(url);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: imageUrl,
    detail: z.enum(['low', 'high', 'auto'], { error: 'must be "low", "high" or "auto"' }).optional(),
  }),
});
const ContentPart = z.discriminatedUnion('type', [TextPart, ImagePart], {
  error: 'each content part needs type "text" or "image_url"',
});

const ToolCallSchema = z.looseObject({
  id: z.string().min(1, 'tool call id must not be empty'),
  type: z.literal('function').default('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const MessageSchema = z.discriminatedUnion(
  'role',
  [
    z.looseObject({ role: z.literal('system'), content: z.union([z.string(), z.array(TextPart)]) }),
    z.looseObject({ role: z.literal('developer'), content: z.union([z.string(), z.array(TextPart)]) }),
    z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(ContentPart).min(1, 'must hold at least one part')]) }),
    z.looseObject({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(TextPart), z.null()]).optional(),
      tool_calls: z.array(ToolCallSchema).optional(),
    }),
    z.looseObject({
      role: z.literal('tool'),
      content: z.union([z.string(), z.array(TextPart)]),
      tool_call_id: z.string().min(1, 'a tool message needs the tool_call_id it answers'),
    }),
  ],
  { error: 'role must be one of user, assistant, tool, system or developer' },
);

const ToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(TOOL_NAME, 'tool name must be 1 to 64 letters, digits, "_" or "-"'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const ToolChoiceSchema = z.union(
  [z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) })],
  { error: 'tool_choice must be "auto", "none", "required" or {type:"function", function:{name}}' },
);

export const ChatCompletionRequestSchema = z
  .looseObject({
    model: z.string({ error: 'model is required (a model id string)' }).min(1, 'model must not be empty'),
    messages: z.array(MessageSchema, { error: 'messages is required (an array)' }).min(1, 'must hold at least one message'),
    temperature: z.number().min(0, 'must be between 0 and 2').max(2, 'must be between 0 and 2').optional(),
    top_p: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
    max_tokens: z.number().int('must be a whole number').positive('must be at least 1').optional(),
    stream: z.boolean().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
    tools: z.array(ToolSchema).optional(),
    tool_choice: ToolChoiceSchema.optional(),
  })
  .superRefine((req, ctx) => {
    const names = new Set((req.tools ?? []).map((t) => t.function.name));
    if (req.tool_choice !== undefined && req.tool_choice !== 'none' && names.size === 0) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'needs tools: no tools are given' });
    }
    if (typeof req.tool_choice === 'object' && !names.has(req.tool_choice.function.name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tool_choice', 'function', 'name'],
        message: `forces "${req.tool_choice.function.name}", which is not among the tools`,
      });
    }
    if (names.size !== (req.tools ?? []).length) {
      ctx.addIssue({ code: 'custom', path: ['tools'], message: 'tool names must be unique' });
    }
  });

export type ChatCompletionRequest = z.input<typeof ChatCompletionRequestSchema>;
export type ChatMessage = z.input<typeof MessageSchema>;
export type ChatTool = z.input<typeof ToolSchema>;

// ---------- response ----------

const UsageSchema = z.looseObject({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

const ResponseToolCall = z.looseObject({
  id: z.string(),
  type: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const ChatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  created: z.number().optional(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number(),
      message: z.looseObject({
        role: z.string(),
        content: z.string().nullable().optional(),
        tool_calls: z.array(ResponseToolCall).optional(),
      }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: UsageSchema.nullable().optional(),
});

export type ChatCompletion = z.output<typeof ChatCompletionSchema>;
export type ChatCompletionUsage = z.output<typeof UsageSchema>;
export type ChatToolCall = z.output<typeof ResponseToolCall>;

/** One streamed chunk (shape per the wire notes; unknown fields pass through). */
export interface ChatCompletionChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices: {
    index: number;
    delta?: {
      role?: string;
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      tool_calls?: { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: ChatCompletionUsage | null;
  [key: string]: unknown;
}

// ---------- stream merging ----------

interface ToolCallState {
  id: string;
  type: string;
  name: string;
  args: string[];
}

interface ChoiceState {
  role: string;
  content: string[];
  reasoning: string[];
  refusal: string[];
  tools: ToolCallState[];
  finishReason: string | null;
}

const MAX_TOOL_CALL_INDEX = 128;
let generatedIds = 0;

/** Generates an id for a streamed tool call that arrived without one. */
export function generateToolCallId(): string {
  generatedIds = (generatedIds + 1) % 1_000_000;
  return `call_gen_${Date.now().toString(36)}${generatedIds.toString(36)}${randomBytes(4).toString('hex')}`;
}

/**
 * Folds chunks into a completion: text concatenated, tool-call deltas merged by `index`
 * (arguments concatenated, id/name set when present, a missing id generated), finish reason and
 * usage kept. Strings are collected in arrays and joined once, so the cost is linear.
 */
export class ChatCompletionAccumulator {
  id = '';
  model = '';
  created = 0;
  usage: ChatCompletionUsage | null = null;
  private readonly choices: ChoiceState[] = [];

  add(chunk: ChatCompletionChunk): void {
    if (!this.id && typeof chunk.id === 'string') this.id = chunk.id;
    if (!this.model && typeof chunk.model === 'string') this.model = chunk.model;
    if (!this.created && typeof chunk.created === 'number') this.created = chunk.created;
    if (chunk.usage) this.usage = chunk.usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return;
    for (let c = 0; c < choices.length; c++) {
      const choice = choices[c];
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let st = this.choices[index];
      if (!st) st = this.choices[index] = { role: 'assistant', content: [], reasoning: [], refusal: [], tools: [], finishReason: null };
      const d = choice.delta;
      if (d) {
        if (typeof d.content === 'string' && d.content.length > 0) st.content.push(d.content);
        if (typeof d.role === 'string') st.role = d.role;
        if (typeof d.reasoning_content === 'string') st.reasoning.push(d.reasoning_content);
        if (typeof d.refusal === 'string') st.refusal.push(d.refusal);
        const calls = d.tool_calls;
        if (Array.isArray(calls)) {
          for (let t = 0; t < calls.length; t++) {
            const call = calls[t];
            const ti = call.index;
            if (!Number.isSafeInteger(ti) || ti < 0 || ti >= MAX_TOOL_CALL_INDEX) continue;
            let ts = st.tools[ti];
            if (!ts) ts = st.tools[ti] = { id: '', type: 'function', name: '', args: [] };
            if (call.id) ts.id = call.id;
            if (call.type) ts.type = call.type;
            const fn = call.function;
            if (fn) {
              if (fn.name) ts.name = fn.name;
              if (typeof fn.arguments === 'string' && fn.arguments.length > 0) ts.args.push(fn.arguments);
            }
          }
        }
      }
      if (choice.finish_reason) st.finishReason = choice.finish_reason;
    }
  }

  /** Whether every choice seen so far has a finish reason. */
  get finished(): boolean {
    let any = false;
    for (const st of this.choices) {
      if (!st) continue;
      any = true;
      if (!st.finishReason) return false;
    }
    return any;
  }

  /** The completion so far (or final, once the stream ended). */
  snapshot(): ChatCompletion {
    const choices: ChatCompletion['choices'] = [];
    this.choices.forEach((st, index) => {
      if (!st) return;
      const message: ChatCompletion['choices'][number]['message'] = {
        role: st.role,
        content: st.content.length > 0 || st.tools.length === 0 ? st.content.join('') : null,
      };
      if (st.reasoning.length > 0) message.reasoning_content = st.reasoning.join('');
      if (st.refusal.length > 0) message.refusal = st.refusal.join('');
      const calls: ChatToolCall[] = [];
      for (const ts of st.tools) {
        if (!ts) continue;
        if (!ts.id) ts.id = generateToolCallId();
        calls.push({ id: ts.id, type: ts.type, function: { name: ts.name, arguments: ts.args.join('') } });
      }
      if (calls.length > 0) message.tool_calls = calls;
      choices.push({ index, message, finish_reason: st.finishReason });
    });
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices,
      usage: this.usage,
    };
  }
}

export class ChatCompletionStream extends SSEStream<ChatCompletionChunk, ChatCompletion> {
  private readonly acc = new ChatCompletionAccumulator();
  private sawDone = false;

  protected onEvent(event: string, data: string, out: ChatCompletionChunk[] | null): void {
    if (data === '[DONE]') {
      this.sawDone = true;
      this.terminated = true;
      return;
    }
    const json = this.parseJson(data) as ChatCompletionChunk & { error?: unknown };
    if (event === 'error' || (json && typeof json === 'object' && json.error)) {
      throw errorFromStreamPayload(json, this.snapshot());
    }
    if (!json || typeof json !== 'object') return;
    this.acc.add(json);
    if (out) out.push(json);
  }

  protected isComplete(): boolean {
    return this.sawDone || this.acc.finished;
  }

  /** The completion so far. */
  snapshot(): ChatCompletion {
    return this.acc.snapshot();
  }

  /** Reads the stream to its end; the merged completion with finish reason and usage. */
  finalCompletion(): Promise<ChatCompletion> {
    return this.settle();
  }
}

// ---------- resource ----------

export type { RequestOptions } from '../core/requestOptions';

export interface ChatOptions {
  /** Send `stream_options.include_usage` on streams (default true; some gateways reject it). */
  streamUsage: boolean;
  /** Called when a gateway refused `stream_options` and the stream was sent again without it. */
  onStreamOptionsRefused?: (baseUrl: string) => void;
}

export class Completions {
  constructor(
    private readonly transport: Transport,
    private readonly options: ChatOptions,
  ) {}

  async create(body: ChatCompletionRequest, opts: RequestOptions = {}): Promise<ChatCompletion> {
    const req = validateRequest(ChatCompletionRequestSchema, { ...body, stream: false });
    const { data } = await this.transport.json({
      method: 'POST',
      path: '/v1/chat/completions',
      auth: 'bearer',
      json: req,
      signal: opts.signal,
      retry: opts.retry,
    });
    return parseResponse(ChatCompletionSchema, data, 'a chat completion');
  }

  /**
   * Streams a completion. `stream_options.include_usage` is asked for unless the caller set
   * `stream_options` or this gateway refused it before: some upstreams answer 400 to the field.
   * Then the request is sent once more without it, and the gateway is remembered (for this
   * process, and through `onStreamOptionsRefused` for the caller to keep).
   */
  stream(body: ChatCompletionRequest, opts: RequestOptions = {}): ChatCompletionStream {
    const wire: Record<string, unknown> = { ...body, stream: true };
    const gateway = this.transport.baseUrl;
    const added = this.options.streamUsage && body.stream_options === undefined && !refusesStreamOptions.has(gateway);
    if (added) wire.stream_options = { include_usage: true };
    const req = validateRequest(ChatCompletionRequestSchema, wire);
    const send = (json: unknown, signal: AbortSignal) =>
      this.transport.send({ method: 'POST', path: '/v1/chat/completions', auth: 'bearer', json, accept: 'text/event-stream', signal, retry: opts.retry });
    return new ChatCompletionStream(
      async (signal) => {
        try {
          return await send(req, signal);
        } catch (err) {
          if (!added || !(err instanceof BadRequestError) || !/stream_options/i.test(err.serverMessage)) throw err;
          refusesStreamOptions.add(gateway);
          this.options.onStreamOptionsRefused?.(gateway);
          const { stream_options: _dropped, ...without } = req as Record<string, unknown>;
          return send(without, signal);
        }
      },
      'Chat completion stream',
      opts.signal,
    );
  }
}

/** Gateways (base URLs) that refused `stream_options` in this process. */
const refusesStreamOptions = new Set<string>();

/** Tells the client a gateway refuses `stream_options` (remembered from an earlier session). */
export function rememberStreamOptionsRefused(baseUrl: string): void {
  refusesStreamOptions.add(baseUrl);
}

export class Chat {
  readonly completions: Completions;
  constructor(transport: Transport, options: ChatOptions) {
    this.completions = new Completions(transport, options);
  }
}
