import * as z from '../core/z';
import { errorFromStreamPayload } from '../core/errors';
import { SSEStream } from '../core/stream';
import type { Transport } from '../core/transport';
import type { RequestOptions } from '../core/requestOptions';
import { parseResponse, validateRequest } from '../core/validate';

/**
 * Gemini's own format, the fourth wire format: `POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse` (new-api relays both, with the key in `x-goog-api-key`), as
 * the official `@google/genai` SDK sends them. What the other formats lack: a thinking budget,
 * thought summaries (`thought: true` parts) and the `thoughtSignature` a thinking model puts on
 * its function calls, which must come back unchanged on the next request (Gemini 3 refuses a
 * tool round without it).
 */

// ---------- request ----------

const InlineData = z.looseObject({
  mimeType: z.string().regex(/^(image|audio|video|application)\/[\w.+-]+$/, { error: 'must be a MIME type' }),
  data: z.string().min(1),
});
const FunctionCall = z.looseObject({ name: z.string().min(1), args: z.record(z.string(), z.unknown()).optional(), id: z.string().optional() });
const FunctionResponse = z.looseObject({ name: z.string().min(1), response: z.record(z.string(), z.unknown()), id: z.string().optional() });
const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: InlineData.optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
});
const Content = z.looseObject({ role: z.enum(['user', 'model']), parts: z.array(Part).min(1) });
const FunctionDeclaration = z.looseObject({
  name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/, { error: 'must start with a letter or _ and have at most 64 letters, digits, _, . or -' }),
  description: z.string().optional(),
  parametersJsonSchema: z.record(z.string(), z.unknown()).optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

export const GenerateContentSchema = z.looseObject({
  contents: z.array(Content).min(1),
  systemInstruction: z.looseObject({ parts: z.array(z.looseObject({ text: z.string() })).min(1) }).optional(),
  tools: z.array(z.looseObject({ functionDeclarations: z.array(FunctionDeclaration).optional() })).optional(),
  toolConfig: z.looseObject({ functionCallingConfig: z.looseObject({ mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED']).optional() }).optional() }).optional(),
  generationConfig: z
    .looseObject({
      maxOutputTokens: z.number().int().positive().optional(),
      temperature: z.number().min(0).max(2).optional(),
      // -1: the model decides; 0: no thinking (where the model allows it).
      thinkingConfig: z.looseObject({ thinkingBudget: z.number().int().min(-1).max(32_768).optional(), includeThoughts: z.boolean().optional() }).optional(),
    })
    .optional(),
});
export type GenerateContentRequest = z.input<typeof GenerateContentSchema>;
export type GeminiContent = z.input<typeof Content>;
export type GeminiPart = z.input<typeof Part>;
export type GeminiFunctionDeclaration = z.input<typeof FunctionDeclaration>;

// ---------- response ----------

const UsageMetadata = z.looseObject({
  promptTokenCount: z.number().optional(),
  candidatesTokenCount: z.number().optional(),
  totalTokenCount: z.number().optional(),
  thoughtsTokenCount: z.number().optional(),
  cachedContentTokenCount: z.number().optional(),
});
const Candidate = z.looseObject({
  content: z.looseObject({ role: z.string().optional(), parts: z.array(Part).optional() }).optional(),
  finishReason: z.string().optional(),
  index: z.number().optional(),
});
export const GenerateContentResponseSchema = z.looseObject({
  candidates: z.array(Candidate).optional(),
  usageMetadata: UsageMetadata.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
  promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
});
export type GenerateContentResponse = z.output<typeof GenerateContentResponseSchema>;
export type GeminiUsage = z.output<typeof UsageMetadata>;
export type GeminiOutputPart = z.output<typeof Part>;

/** The answer's parts, its text (thoughts left out) and its function calls with their signatures. */
export function geminiOutput(r: GenerateContentResponse): {
  parts: GeminiOutputPart[];
  text: string;
  thoughts: string;
  calls: { name: string; args: Record<string, unknown>; id?: string; signature?: string }[];
} {
  const parts = r.candidates?.[0]?.content?.parts ?? [];
  return {
    parts,
    text: parts
      .filter((p) => p.text && !p.thought)
      .map((p) => p.text)
      .join(''),
    thoughts: parts
      .filter((p) => p.text && p.thought)
      .map((p) => p.text)
      .join(''),
    calls: parts
      .filter((p) => p.functionCall)
      .map((p) => ({ name: p.functionCall!.name, args: p.functionCall!.args ?? {}, id: p.functionCall!.id, signature: p.thoughtSignature })),
  };
}

// ---------- stream ----------

/**
 * A stream of `GenerateContentResponse` chunks (SSE `data:` lines, no terminator: a finish reason
 * ends it). Text parts are deltas; a function call comes whole in one chunk, with its signature;
 * a signature may also arrive on an empty text part, which is kept to be sent back.
 */
export class GeminiStream extends SSEStream<GenerateContentResponse, GenerateContentResponse> {
  private readonly parts: GeminiOutputPart[] = [];
  private usage: GeminiUsage | undefined;
  private finishReason: string | undefined;
  private meta: Pick<GenerateContentResponse, 'modelVersion' | 'responseId'> = {};

  protected onEvent(_event: string, data: string, out: GenerateContentResponse[] | null): void {
    const json = this.parseJson(data) as Record<string, unknown> | null;
    if (!json || typeof json !== 'object') return;
    if (json.error) throw errorFromStreamPayload(json, this.snapshot());
    const chunk = GenerateContentResponseSchema.safeParse(json);
    if (!chunk.success) return;
    const c = chunk.data;
    if (c.usageMetadata) this.usage = c.usageMetadata;
    if (c.modelVersion) this.meta.modelVersion = c.modelVersion;
    if (c.responseId) this.meta.responseId = c.responseId;
    const candidate = c.candidates?.[0];
    for (const p of candidate?.content?.parts ?? []) this.addPart(p);
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    if (c.promptFeedback?.blockReason)
      throw errorFromStreamPayload({ error: { message: `The prompt was blocked (${c.promptFeedback.blockReason}).`, type: 'blocked' } }, this.snapshot());
    if (out) out.push(c);
  }

  /** Text deltas join the previous part of the same kind; calls and signatures stay parts of their own. */
  private addPart(p: GeminiOutputPart): void {
    const last = this.parts.at(-1);
    const plainText = p.text !== undefined && !p.functionCall && !p.thoughtSignature;
    if (plainText && last && last.text !== undefined && !last.functionCall && !!last.thought === !!p.thought && !last.thoughtSignature) {
      last.text += p.text;
      return;
    }
    this.parts.push({ ...p });
  }

  protected isComplete(): boolean {
    return this.finishReason !== undefined;
  }

  snapshot(): GenerateContentResponse {
    return {
      candidates: [{ content: { role: 'model', parts: this.parts.map((p) => ({ ...p })) }, finishReason: this.finishReason, index: 0 }],
      usageMetadata: this.usage,
      ...this.meta,
    };
  }

  /** Reads the stream to its end: the whole answer (parts joined) with its usage. */
  finalResponse(): Promise<GenerateContentResponse> {
    return this.settle();
  }
}

// ---------- resource ----------

const ModelList = z.looseObject({
  models: z
    .array(
      z.looseObject({
        name: z.string(),
        displayName: z.string().optional(),
        supportedGenerationMethods: z.array(z.string()).optional(),
        inputTokenLimit: z.number().optional(),
        outputTokenLimit: z.number().optional(),
      }),
    )
    .optional(),
  nextPageToken: z.string().nullable().optional(),
});

export interface GeminiModel {
  id: string;
  displayName?: string;
  methods: string[];
  inputTokenLimit?: number;
}

export class Gemini {
  constructor(private readonly transport: Transport) {}

  private path(model: string, action: 'generateContent' | 'streamGenerateContent'): string {
    return `/v1beta/models/${encodeURIComponent(model)}:${action}`;
  }

  async generateContent(model: string, body: GenerateContentRequest, opts: RequestOptions = {}): Promise<GenerateContentResponse> {
    const req = validateRequest(GenerateContentSchema, body);
    const { data } = await this.transport.json({
      method: 'POST',
      path: this.path(checkModel(model), 'generateContent'),
      auth: 'goog',
      json: req,
      signal: opts.signal,
      retry: opts.retry,
    });
    return parseResponse(GenerateContentResponseSchema, data, 'a Gemini answer');
  }

  streamGenerateContent(model: string, body: GenerateContentRequest, opts: RequestOptions = {}): GeminiStream {
    const req = validateRequest(GenerateContentSchema, body);
    const path = this.path(checkModel(model), 'streamGenerateContent');
    return new GeminiStream(
      (signal) =>
        this.transport.send({ method: 'POST', path, query: { alt: 'sse' }, auth: 'goog', json: req, accept: 'text/event-stream', signal, retry: opts.retry }),
      'Gemini stream',
      opts.signal,
    );
  }

  /** The models the gateway offers in this format (`GET /v1beta/models`; ids without `models/`). */
  async models(opts: RequestOptions = {}): Promise<GeminiModel[]> {
    const { data } = await this.transport.json({ method: 'GET', path: '/v1beta/models', auth: 'goog', signal: opts.signal });
    const list = parseResponse(ModelList, data, 'the Gemini model list');
    return (list.models ?? []).map((m) => ({
      id: m.name.replace(/^models\//, ''),
      displayName: m.displayName,
      methods: m.supportedGenerationMethods ?? [],
      inputTokenLimit: m.inputTokenLimit,
    }));
  }
}

/** A model id goes into the path: letters, digits and `.-_:` only, as Gemini's ids are. */
function checkModel(model: string): string {
  return validateRequest(z.string().regex(/^[\w.-]+$/, { error: 'must be a model id (letters, digits, ., - or _)' }), model);
}
