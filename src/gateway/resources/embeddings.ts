import { endianness } from 'node:os';
import * as z from '../core/z';
import { GatewayError } from '../core/errors';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

const nonEmpty = z.string().min(1, 'must not be an empty string');

export const EmbeddingRequestSchema = z.looseObject({
  model: z.string({ error: 'model is required (an embedding model id)' }).min(1, 'model must not be empty'),
  input: z.union([nonEmpty, z.array(nonEmpty).min(1, 'must hold at least one text').max(2048, 'at most 2,048 texts per request')], {
    error: 'input must be a string or an array of strings',
  }),
  encoding_format: z.enum(['float', 'base64'], { error: 'encoding_format must be "float" or "base64"' }).optional(),
  dimensions: z.number().int().positive().optional(),
});

export type EmbeddingRequest = z.input<typeof EmbeddingRequestSchema>;

const ResponseSchema = z.looseObject({
  data: z.array(z.looseObject({ index: z.number().int().nonnegative(), embedding: z.union([z.array(z.number()), z.string()]) })),
  model: z.string().optional(),
  usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }).optional(),
});

export interface Embedding {
  index: number;
  embedding: Float32Array;
}

export interface EmbeddingList {
  model: string;
  data: Embedding[];
  usage: { prompt_tokens: number; total_tokens: number };
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** Decodes a base64 string of little-endian float32 values. */
export function decodeFloat32Base64(b64: string): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length % 4 !== 0)
    throw new GatewayError(`An embedding is ${bytes.length} bytes, not a whole number of float32 values.`, { type: 'invalid_response' });
  const out = new Float32Array(bytes.length / 4);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  }
  return out;
}

export interface BatchOptions extends RequestOptions {
  /** Texts per request (default 128). */
  batchSize?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Called after each batch with the number of texts done so far. */
  onProgress?: (done: number, total: number) => void;
  /** Wire format (default base64; the result holds numbers either way). */
  encoding_format?: 'float' | 'base64';
}

export class Embeddings {
  constructor(private readonly transport: Transport) {}

  /**
   * Embeds text(s). The wire format defaults to base64 (about 4x smaller than JSON floats and far
   * cheaper to decode); the result always holds numbers, in input order (by `index`).
   */
  async create(body: EmbeddingRequest, opts: RequestOptions = {}): Promise<EmbeddingList> {
    const req = validateRequest(EmbeddingRequestSchema, { ...body, encoding_format: body.encoding_format ?? 'base64' });
    const { data } = await this.transport.json({ method: 'POST', path: '/v1/embeddings', auth: 'bearer', json: req, signal: opts.signal });
    const parsed = parseResponse(ResponseSchema, data, 'an embeddings request');
    const count = Array.isArray(req.input) ? req.input.length : 1;
    const out = new Array<Embedding>(count);
    // One buffer for the whole answer when every vector has the same length (they do): a large
    // index then holds a few thousand buffers, not one per chunk, which the collector walks.
    const first = parsed.data[0]?.embedding;
    const dim = typeof first === 'string' ? Buffer.byteLength(first, 'base64') / 4 : (first?.length ?? 0);
    const pool = Number.isInteger(dim) && dim > 0 ? new Float32Array(dim * parsed.data.length) : undefined;
    parsed.data.forEach((item, i) => {
      if (item.index >= count)
        throw new GatewayError(`The gateway returned an embedding for input ${item.index}, but only ${count} were sent.`, { type: 'invalid_response' });
      let embedding: Float32Array;
      const slot = pool?.subarray(i * dim, (i + 1) * dim);
      if (slot && LITTLE_ENDIAN && typeof item.embedding === 'string' && Buffer.byteLength(item.embedding, 'base64') === dim * 4) {
        // Decoded straight into its place in the pool: no buffer per vector, not even a temporary one.
        Buffer.from(slot.buffer, slot.byteOffset, dim * 4).write(item.embedding, 'base64');
        embedding = slot;
      } else {
        embedding = typeof item.embedding === 'string' ? decodeFloat32Base64(item.embedding) : Float32Array.from(item.embedding);
        if (slot && embedding.length === dim) {
          slot.set(embedding);
          embedding = slot;
        }
      }
      out[item.index] = { index: item.index, embedding };
    });
    for (let i = 0; i < count; i++) {
      if (!out[i]) throw new GatewayError(`The gateway returned no embedding for input ${i}.`, { type: 'invalid_response' });
    }
    return { model: parsed.model ?? req.model, data: out, usage: parsed.usage ?? { prompt_tokens: 0, total_tokens: 0 } };
  }

  /**
   * Embeds many texts in batches with a bounded number of requests in flight (retries come from
   * the client). Results are in input order; the first failure (or an abort) stops the rest, and
   * the error's `partial` holds what finished.
   */
  async createBatched(
    model: string,
    texts: readonly string[],
    opts: BatchOptions = {},
  ): Promise<{ vectors: Float32Array[]; requests: number; promptTokens: number }> {
    const batchSize = Math.max(1, Math.min(2048, opts.batchSize ?? 128));
    const concurrency = Math.max(1, opts.concurrency ?? 4);
    const vectors = new Array<Float32Array>(texts.length);
    const batches: number[] = [];
    for (let i = 0; i < texts.length; i += batchSize) batches.push(i);
    const inner = new AbortController();
    const onAbort = () => inner.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let next = 0;
    let done = 0;
    let requests = 0;
    let promptTokens = 0;
    const worker = async () => {
      while (next < batches.length) {
        const start = batches[next++];
        const slice = texts.slice(start, start + batchSize);
        requests++;
        const res = await this.create({ model, input: slice, encoding_format: opts.encoding_format }, { signal: inner.signal });
        res.data.forEach((d, i) => (vectors[start + i] = d.embedding));
        promptTokens += res.usage.prompt_tokens;
        done += slice.length;
        opts.onProgress?.(done, texts.length);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    } catch (err) {
      inner.abort();
      // Finished batches are not lost: the error carries them (missing entries are undefined).
      if (err instanceof GatewayError) err.partial = { vectors, requests, promptTokens };
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
    return { vectors, requests, promptTokens };
  }
}
