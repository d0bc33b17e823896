import { strict as assert } from 'node:assert';
import OpenAI from 'openai';
import {
  AbortError,
  BadRequestError,
  NotFoundError,
  StreamError,
  ValidationError,
  outputText,
  type ResponseInputItem,
  type ResponseStreamEvent,
} from '../../src/gateway';
import { png as pngBytes } from '../emulator/media';
import { DEMO_KEY, clientFor, useEmulator } from './helpers';

const readFile = {
  type: 'function' as const,
  name: 'read_file',
  description: 'Read a file of the workspace',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

describe('the Responses format (/v1/responses, new-api)', function () {
  this.timeout(30_000);
  const ctx = useEmulator();
  let profile: typeof ctx.emu.profile;
  before(() => {
    profile = ctx.emu.profile;
    ctx.emu.profile = 'new-api';
  });
  after(() => {
    ctx.emu.profile = profile;
    ctx.emu.faults.clear();
  });

  it('streams output text; the events come in the SDK order and fold into the response with usage', async () => {
    const { client } = clientFor(ctx.emu);
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Say hello to the Responses API', store: false });
    const types: string[] = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(types.indexOf('response.output_item.added') < types.indexOf('response.output_text.delta'));
    assert.ok(text.length > 0);
    assert.equal(outputText(final), text);
    assert.ok((final.usage?.input_tokens ?? 0) > 0 && (final.usage?.output_tokens ?? 0) > 0);
  });

  it('a tool round trip with a reasoning model, stateless: encrypted reasoning items are carried to the next step', async () => {
    const { client } = clientFor(ctx.emu);
    const common = {
      model: 'gpt-5-codex-emu',
      tools: [readFile],
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low' as const, summary: 'auto' as const },
    };
    const first = client.responses.stream({ ...common, input: [{ role: 'user', content: 'Read the file `src/app.ts` and tell me what it does' }] });
    const events: ResponseStreamEvent[] = [];
    for await (const ev of first) events.push(ev);
    const step1 = first.snapshot();
    const reasoning = step1.output.find((i) => i.type === 'reasoning') as { id: string; summary: { text: string }[]; encrypted_content?: string };
    const call = step1.output.find((i) => i.type === 'function_call') as { call_id: string; name: string; arguments: string };
    assert.ok(reasoning?.encrypted_content, 'the reasoning item carries encrypted content');
    assert.ok(reasoning.summary[0]?.text, 'a reasoning summary was streamed');
    assert.ok(events.some((e) => e.type === 'response.reasoning_summary_text.delta'));
    assert.ok(events.some((e) => e.type === 'response.function_call_arguments.delta'));
    assert.equal(call.name, 'read_file');
    assert.deepEqual(JSON.parse(call.arguments), { path: 'src/app.ts' });
    assert.ok((step1.usage?.output_tokens_details?.reasoning_tokens ?? 0) > 0);

    const history: ResponseInputItem[] = [
      { role: 'user', content: 'Read the file `src/app.ts` and tell me what it does' },
      {
        type: 'reasoning',
        id: reasoning.id,
        summary: reasoning.summary.map((s) => ({ type: 'summary_text' as const, text: s.text })),
        encrypted_content: reasoning.encrypted_content,
      },
      { type: 'function_call', id: (call as { id?: string }).id, call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'export function main() { console.log("serves the app"); }' },
    ];
    const step2 = await client.responses.create({ ...common, input: history });
    assert.match(outputText(step2), /\S/);
    assert.ok(!step2.output.some((i) => i.type === 'function_call'), 'answered from the result');

    // An output item sent back by id without the reasoning item before it is refused (as OpenAI does).
    const err = await client.responses.create({ ...common, input: history.filter((i) => i.type !== 'reasoning') }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof BadRequestError, String(err));
    assert.match(err.message, /without its required 'reasoning' item/);
  });

  it('cached input tokens are reported when a long prefix repeats', async () => {
    const { client } = clientFor(ctx.emu);
    const long = 'Context line for the cache. '.repeat(900);
    const input: ResponseInputItem[] = [
      { role: 'developer', content: long },
      { role: 'user', content: 'first question' },
    ];
    const a = await client.responses.create({ model: 'gpt-4o-mini', input, store: false });
    const b = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [...input, { role: 'assistant', content: outputText(a) }, { role: 'user', content: 'second' }],
      store: false,
    });
    assert.equal(a.usage?.input_tokens_details?.cached_tokens ?? 0, 0);
    assert.ok((b.usage?.input_tokens_details?.cached_tokens ?? 0) >= 1024, JSON.stringify(b.usage));
  });

  it('cancellation ends the request at the gateway and keeps the partial response', async () => {
    ctx.emu.inject({ path: '/v1/responses', fault: { kind: 'delayEvents', ms: 40 } });
    const { client } = clientFor(ctx.emu);
    const closedBefore = ctx.emu.clientClosedStreams;
    const controller = new AbortController();
    const stream = client.responses.stream(
      { model: 'gpt-4o-mini', input: 'Tell me a long story about gateways and proxies', store: false },
      { signal: controller.signal },
    );
    let deltas = 0;
    const err = await (async () => {
      for await (const ev of stream) if (ev.type === 'response.output_text.delta' && ++deltas === 2) controller.abort();
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    ctx.emu.faults.clear();
    assert.ok(err instanceof AbortError, String(err));
    assert.ok(outputText(stream.snapshot()).length > 0, 'the partial text is kept');
    for (let i = 0; i < 50 && ctx.emu.clientClosedStreams === closedBefore; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(ctx.emu.clientClosedStreams, closedBefore + 1, 'the emulator saw the connection closed');
  });

  it('errors: bad requests are refused before the wire; an error event mid-stream is a StreamError; one-api has no route', async () => {
    const { client } = clientFor(ctx.emu);
    assert.throws(
      () => client.responses.stream({ model: 'gpt-4o-mini', input: 'x', tools: [{ ...readFile, name: 'bad name!' }] }),
      (e: unknown) => e instanceof ValidationError && /tools\[0\]\.name/.test(e.message),
    );
    assert.throws(() => client.responses.stream({ model: 'gpt-4o-mini', input: [] }), ValidationError);
    const chatOnly = await client.chat.completions.create({ model: 'gpt-5-codex-emu', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(chatOnly instanceof BadRequestError && /only supported in v1\/responses/.test(chatOnly.message));
    ctx.emu.inject({ path: '/v1/responses', fault: { kind: 'streamError', afterEvents: 3 } });
    const broken = client.responses.stream({ model: 'gpt-4o-mini', input: 'hello there', store: false });
    const mid = await broken.finalResponse().then(
      () => undefined,
      (e: unknown) => e,
    );
    ctx.emu.faults.clear();
    assert.ok(mid instanceof StreamError, String(mid));
    ctx.emu.profile = 'one-api';
    try {
      const missing = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(missing instanceof NotFoundError, String(missing));
    } finally {
      ctx.emu.profile = 'new-api';
    }
  });

  it('images go in as input_image (checked before the wire); the price list says which formats each model speaks', async () => {
    const { client } = clientFor(ctx.emu);
    const png = `data:image/png;base64,${pngBytes(8, 8, 1).toString('base64')}`;
    const withImage = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this picture?' },
            { type: 'input_image', image_url: png, detail: 'low' },
          ],
        },
      ],
      store: false,
    });
    const without = await client.responses.create({
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is in this picture?' }] }],
      store: false,
    });
    assert.ok((withImage.usage?.input_tokens ?? 0) > (without.usage?.input_tokens ?? 0), 'the image was counted');
    const gif = `data:image/gif;base64,${Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1').toString('base64')}`;
    assert.throws(
      () => client.responses.stream({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image', image_url: gif }] }] }),
      ValidationError,
    );
    const prices = await client.account.usage.pricing();
    assert.deepEqual(prices?.find((p) => p.model === 'gpt-5-codex-emu')?.endpoints, ['openai-response']);
    assert.deepEqual(prices?.find((p) => p.model === 'claude-sonnet-emu')?.endpoints, ['anthropic', 'openai']);
  });

  it("the official openai SDK's responses.stream reads the emulator's events and final response", async () => {
    const openai = new OpenAI({ baseURL: `${ctx.emu.url}/v1`, apiKey: DEMO_KEY, maxRetries: 0 });
    const stream = openai.responses.stream({
      model: 'gpt-5-codex-emu',
      input: 'Read the file `README.md`',
      tools: [{ ...readFile, strict: false }],
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
    });
    const seen = new Set<string>();
    for await (const ev of stream) seen.add(ev.type);
    const final = await stream.finalResponse();
    assert.ok(seen.has('response.completed') && seen.has('response.function_call_arguments.done') && seen.has('response.reasoning_summary_text.done'));
    const call = final.output.find((i) => i.type === 'function_call');
    assert.equal(call?.type === 'function_call' ? call.name : undefined, 'read_file');
    assert.ok(final.usage && final.usage.output_tokens_details.reasoning_tokens > 0);
  });
});
