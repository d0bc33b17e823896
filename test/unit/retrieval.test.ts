import { strict as assert } from 'node:assert';
import {
  AuthenticationError,
  BadRequestError,
  decodeFloat32Base64,
  flaggedCategories,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from '../../src/gateway';
import { clientFor, useEmulator, refusedBeforeSending } from './helpers';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);

describe('embeddings', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('orders by index when a gateway lists the entries in another order', async () => {
    const { client } = clientFor(ctx.emu);
    const vec = (v: number) => Buffer.from(new Float32Array([v, v, v]).buffer).toString('base64');
    const data = [2, 0, 1].map((index) => ({ object: 'embedding', index, embedding: vec(index) }));
    ctx.emu.inject({
      path: '/v1/embeddings',
      fault: { kind: 'status', status: 200, body: { object: 'list', data, model: 'embed-emu-256', usage: { prompt_tokens: 3, total_tokens: 3 } } },
    });
    const res = await client.embeddings.create({ model: 'embed-emu-256', input: ['a', 'b', 'c'] });
    assert.deepEqual(
      res.data.map((d) => [d.index, d.embedding[0]]),
      [
        [0, 0],
        [1, 1],
        [2, 2],
      ],
    );
  });

  it('asks for base64 on the wire, returns Float32Arrays in input order, and lexically similar texts are close', async () => {
    const { client } = clientFor(ctx.emu);
    const texts = ['parse the SSE stream', 'parse an SSE stream quickly', 'bake a chocolate cake'];
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts });
    assert.equal((ctx.emu.requestsTo('/v1/embeddings').at(-1)!.body as { encoding_format: string }).encoding_format, 'base64');
    assert.equal(res.data.length, 3);
    res.data.forEach((d, i) => {
      assert.equal(d.index, i);
      assert.ok(d.embedding instanceof Float32Array);
      assert.equal(d.embedding.length, 1536);
    });
    const [a, b, c] = res.data.map((d) => d.embedding);
    assert.ok(cosine(a, b) > 0.5, `similar texts: ${cosine(a, b)}`);
    assert.ok(cosine(a, c) < 0.2, `unrelated texts: ${cosine(a, c)}`);
    assert.ok(res.usage.prompt_tokens > 0);
    // One buffer for the answer, each vector a view of its own part (a large index keeps few buffers).
    assert.ok(
      res.data.every((d) => d.embedding.buffer === a.buffer),
      'the vectors share one buffer',
    );
    assert.deepEqual(
      res.data.map((d) => d.embedding.byteOffset),
      [0, 1536 * 4, 2 * 1536 * 4],
    );
    const float = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts, encoding_format: 'float' });
    float.data.forEach((d, i) => assert.deepEqual(Array.from(d.embedding), Array.from(res.data[i].embedding), 'the same numbers either way'));
  });

  it('gives the same numbers over float and base64 wire formats', async () => {
    const { client } = clientFor(ctx.emu);
    const viaFloat = await client.embeddings.create({ model: 'embed-emu-256', input: 'same text', encoding_format: 'float' });
    const viaB64 = await client.embeddings.create({ model: 'embed-emu-256', input: 'same text' });
    assert.deepEqual(Array.from(viaFloat.data[0].embedding), Array.from(viaB64.data[0].embedding));
  });

  it('decodes little-endian float32 base64 exactly', () => {
    const bytes = Buffer.alloc(12);
    [1.5, -2.25, 3.0000001].forEach((v, i) => bytes.writeFloatLE(v, i * 4));
    assert.deepEqual(Array.from(decodeFloat32Base64(bytes.toString('base64'))), [1.5, -2.25, Math.fround(3.0000001)]);
    assert.throws(() => decodeFloat32Base64(Buffer.alloc(6).toString('base64')), /not a whole number of float32/);
  });

  it('embeds many texts in bounded batches', async () => {
    const { client } = clientFor(ctx.emu);
    const texts = Array.from({ length: 1000 }, (_, i) => `document number ${i} about topic ${i % 7}`);
    const before = ctx.emu.stats.embeddingRequests;
    const progress: number[] = [];
    const out = await client.embeddings.createBatched('embed-emu-256', texts, { batchSize: 64, concurrency: 3, onProgress: (d) => progress.push(d) });
    assert.equal(out.vectors.length, 1000);
    assert.equal(out.requests, 16);
    assert.equal(ctx.emu.stats.embeddingRequests - before, 16);
    assert.equal(progress.at(-1), 1000);
    const single = await client.embeddings.create({ model: 'embed-emu-256', input: texts[500] });
    assert.deepEqual(Array.from(out.vectors[500]), Array.from(single.data[0].embedding));
  });

  it('refuses bad input before sending, and maps gateway errors', async () => {
    const { client } = clientFor(ctx.emu, { maxRetries: 0 });
    await refusedBeforeSending(ctx.emu, () => client.embeddings.create({ model: 'e', input: [] }), /input: must hold at least one text/);
    await refusedBeforeSending(ctx.emu, () => client.embeddings.create({ model: 'e', input: ['ok', ''] }), /input\[1\]: must not be an empty string/);
    await refusedBeforeSending(ctx.emu, () => client.embeddings.create({ model: '', input: 'x' }), /model: model must not be empty/);
    await refusedBeforeSending(
      ctx.emu,
      () => client.embeddings.create({ model: 'e', input: 'x', encoding_format: 'hex' as never }),
      /encoding_format must be "float" or "base64"/,
    );
    await assert.rejects(client.embeddings.create({ model: 'no-such-embedder', input: 'x' }), ServiceUnavailableError);
    await assert.rejects(
      client.embeddings.create({ model: 'gpt-4o', input: 'x' }),
      (e: unknown) => e instanceof BadRequestError && /chat model/.test(e.message),
    );
    ctx.emu.inject({ fault: { kind: 'status', status: 429, retryAfter: '1' } });
    await assert.rejects(client.embeddings.create({ model: 'embed-emu-256', input: 'x' }), RateLimitError);
  });
});

describe('rerank', () => {
  const ctx = useEmulator();

  it('ranks the relevant documents first, with top_n and return_documents', async () => {
    const { client } = clientFor(ctx.emu);
    const documents = [
      'How to bake bread at home',
      'Parsing server-sent events in TypeScript',
      'Gardening tips for spring',
      'A TypeScript SSE parser that handles CRLF',
    ];
    const res = await client.rerank.create({ model: 'rerank-emu', query: 'TypeScript SSE parser', documents, top_n: 2, return_documents: true });
    assert.equal(res.results.length, 2);
    assert.deepEqual(res.results.map((r) => r.index).sort(), [1, 3]);
    assert.ok(res.results[0].relevance_score >= res.results[1].relevance_score);
    assert.equal(res.results[0].document?.text, documents[res.results[0].index]);
    const bare = await client.rerank.create({ model: 'rerank-emu', query: 'bread', documents });
    assert.equal(bare.results.length, 4);
    assert.equal(bare.results[0].index, 0);
    assert.equal(bare.results[0].document, undefined);
  });

  it('refuses bad input before sending', async () => {
    const { client } = clientFor(ctx.emu);
    await refusedBeforeSending(ctx.emu, () => client.rerank.create({ model: 'r', query: 'q', documents: [] }), /documents: must hold at least one document/);
    await refusedBeforeSending(ctx.emu, () => client.rerank.create({ model: 'r', query: '', documents: ['a'] }), /query: query must not be empty/);
    await refusedBeforeSending(ctx.emu, () => client.rerank.create({ model: 'r', query: 'q', documents: ['a'], top_n: 0 }), /top_n: must be at least 1/);
    await refusedBeforeSending(
      ctx.emu,
      () => client.rerank.create({ model: 'r', query: 'q', documents: ['a'], top_n: 3 }),
      /top_n: is 3, more than the 1 documents/,
    );
  });
});

describe('moderations', () => {
  const ctx = useEmulator();
  const pngWithWords = (words: string) =>
    `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(`tEXt${words}`)]).toString('base64')}`;

  it('flags categories from the text, with scores, on both models', async () => {
    const { client } = clientFor(ctx.emu);
    const omni = await client.moderations.create({ model: 'omni-moderation-latest', input: 'I will kill the process, you idiot' });
    const flagged = flaggedCategories(omni.results[0])
      .map((c) => c.category)
      .sort();
    assert.deepEqual(flagged, ['harassment', 'violence']);
    assert.ok(omni.results[0].flagged);
    assert.ok(omni.results[0].category_scores.violence > 0.5 && omni.results[0].category_scores.hate < 0.1);
    assert.deepEqual(omni.results[0].category_applied_input_types?.violence, ['text']);
    const text = await client.moderations.create({ model: 'text-moderation-latest', input: 'a friendly greeting' });
    assert.equal(text.results[0].flagged, false);
    assert.equal(text.results[0].categories.illicit, null);
    assert.equal(text.results[0].category_applied_input_types, undefined);
  });

  it('moderates image parts on the multimodal model and lists, for every category, the input types it was scored on', async () => {
    const { client } = clientFor(ctx.emu);
    const res = await client.moderations.create({
      model: 'omni-moderation-latest',
      input: [
        { type: 'text', text: 'describe this picture' },
        { type: 'image_url', image_url: { url: pngWithWords('gore and blood') } },
      ],
    });
    const r = res.results[0];
    assert.ok(r.flagged);
    assert.deepEqual(r.category_applied_input_types?.['violence/graphic'], ['text', 'image']);
    assert.deepEqual(r.category_applied_input_types?.harassment, ['text'], 'categories that read no images list text only, flagged or not');
    assert.equal(r.categories.harassment, false);
    assert.equal(Object.keys(r.category_applied_input_types ?? {}).length, Object.keys(r.categories).length, 'every category is listed');
  });

  it('refuses an image with the text-only model before sending', async () => {
    const { client } = clientFor(ctx.emu);
    const input = [{ type: 'image_url' as const, image_url: { url: pngWithWords('x') } }];
    await refusedBeforeSending(
      ctx.emu,
      () => client.moderations.create({ model: 'text-moderation-latest', input }),
      /model: image input needs the multimodal model "omni-moderation-latest"/,
    );
    await refusedBeforeSending(ctx.emu, () => client.moderations.create({ input }), /image input needs the multimodal model/);
    await refusedBeforeSending(
      ctx.emu,
      () => client.moderations.create({ model: 'omni-moderation-latest', input: [{ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lG' } }] }),
      /GIF images are not supported/,
    );
  });

  it('maps 401 and 403', async () => {
    const { emu } = ctx;
    const { client: bad } = clientFor(emu, { apiKey: 'sk-wrong' });
    await assert.rejects(bad.moderations.create({ input: 'x' }), AuthenticationError);
    const poor = emu.store.addKey({ userId: emu.store.addUser({ username: 'broke', quota: 0 }).id, name: 'k' });
    const { client } = clientFor(emu, { apiKey: poor.secret });
    await assert.rejects(client.moderations.create({ input: 'x' }), PermissionDeniedError);
  });
});
