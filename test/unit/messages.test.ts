// @profile-dependent: the Messages format's errors differ (one-api answers them in the Claude shape).
import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { AbortError, MessageStream, StreamError, ValidationError, type Message, type MessagesRequest, type MessageStreamEvent } from '../../src/gateway';
import type { RawResponse } from '../../src/gateway/core/transport';
import { DEMO_KEY, clientFor, useEmulator } from './helpers';

const readFile = {
  name: 'read_file',
  description: 'Read a file of the workspace',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
};

// About 1,500 tokens at the emulator's 4 characters a token: above the 1,024 minimum, below 2,048.
const LONG_SYSTEM = Array.from({ length: 150 }, (_, i) => `Rule ${i}: answer precisely and cite files.`).join('\n');

/** A MessageStream over given bytes (the parser under test; no network involved). */
function streamOver(text: string): MessageStream {
  const bytes = Buffer.from(text, 'utf8');
  const pieces = [bytes.subarray(0, 101), bytes.subarray(101, 250), bytes.subarray(250)];
  const open = (): Promise<RawResponse> => Promise.resolve({ status: 200, headers: {}, body: Readable.from(pieces) as never, endedBy: () => undefined });
  return new MessageStream(open, 'test stream');
}

describe('messages stream folding', () => {
  it('gives the same result for every layout of a delta event (fast path and full parse agree)', async () => {
    const texts = ['plain', ' "quoted" \\ back\\slash \n é 🚀', 'ends with "}}', 'a'];
    const ev = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
    const body =
      ev(
        'message_start',
        JSON.stringify({
          type: 'message_start',
          message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } },
        }),
      ) +
      ev('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') +
      // The documented layout (fast path), with escapes:
      ev('content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: texts[0] } })) +
      ev('content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: texts[1] } })) +
      // Reordered keys and spacing (full parse):
      ev('content_block_delta', `{"index": 0, "type": "content_block_delta", "delta": {"text": ${JSON.stringify(texts[2])}, "type": "text_delta"}}`) +
      // The documented prefix but an extra key after the text (must not be taken as one string):
      ev('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(texts[3])},"x":"}}"}}`) +
      ev('content_block_stop', '{"type":"content_block_stop","index":0}') +
      ev('content_block_start', '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}') +
      ev('content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"q\\": \\"a\\\\\\"b"}}') +
      ev('content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\"}"}}') +
      ev('content_block_stop', '{"type":"content_block_stop","index":1}') +
      ev('message_delta', '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9,"input_tokens":null}}') +
      ev('message_stop', '{"type":"message_stop"}');
    const expectedText = texts.join('');
    const folded = await streamOver(body).finalMessage();
    assert.equal((folded.content[0] as { text: string }).text, expectedText);
    assert.deepEqual((folded.content[1] as { input: unknown }).input, { q: 'a"b' });
    assert.deepEqual(folded.usage, { input_tokens: 3, output_tokens: 9 });
    // Iterating yields the same text in events.
    const iterated = streamOver(body);
    let text = '';
    for await (const e of iterated) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    assert.equal(text, expectedText);
    assert.deepEqual((await iterated.finalMessage()).content, folded.content);
  });
});

describe('messages format against the emulator', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('sends x-api-key and the version header, and returns the message with usage', async () => {
    const { client } = clientFor(ctx.emu);
    const m = await client.messages.create({ model: 'claude-sonnet-emu', max_tokens: 256, messages: [{ role: 'user', content: 'Hi there' }] });
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.content[0].type, 'text');
    assert.match((m.content[0] as { text: string }).text, /Hi there/);
    assert.ok(m.usage.input_tokens > 0 && m.usage.output_tokens > 0);
    const sent = ctx.emu.requestsTo('/v1/messages').at(-1)!;
    assert.equal(sent.headers['x-api-key'], DEMO_KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(sent.headers['anthropic-beta'], undefined);
  });

  it('folds a stream into the same message as the non-streamed call: text, thinking with signature, usage', async () => {
    const { client } = clientFor(ctx.emu);
    const body: MessagesRequest = {
      model: 'claude-sonnet-emu',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Explain streams #words=200' }],
    };
    const whole = await client.messages.create(body);
    const stream = client.messages.stream(body);
    const types = new Set<string>();
    for await (const ev of stream) types.add(ev.type);
    const final = await stream.finalMessage();
    for (const t of ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']) {
      assert.ok(types.has(t), `saw no ${t}`);
    }
    assert.ok(!types.has('ping'), 'pings are not handed to the caller');
    assert.deepEqual(
      final.content.map((b) => b.type),
      ['thinking', 'text'],
    );
    assert.equal((final.content[1] as { text: string }).text, (whole.content[1] as { text: string }).text);
    assert.ok((final.content[0] as { signature: string }).signature.length > 10);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
    assert.equal(final.usage.input_tokens, whole.usage.input_tokens);
  });

  it('streams tool_use input as JSON fragments and parses it at the block end', async () => {
    const { client } = clientFor(ctx.emu);
    const final = await client.messages
      .stream({
        model: 'claude-sonnet-emu',
        max_tokens: 512,
        tools: [readFile],
        messages: [{ role: 'user', content: 'Please read the file src/main.ts and lib/util.ts' }],
      })
      .finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const uses = final.content.filter((b) => b.type === 'tool_use') as { id: string; name: string; input: unknown }[];
    assert.deepEqual(
      uses.map((u) => u.input),
      [{ path: 'src/main.ts' }, { path: 'lib/util.ts' }],
    );

    const answer = await client.messages.create({
      model: 'claude-sonnet-emu',
      max_tokens: 512,
      tools: [readFile],
      messages: [
        { role: 'user', content: 'Please read the file src/main.ts and lib/util.ts' },
        { role: 'assistant', content: final.content.map((b) => ({ ...b })) },
        {
          role: 'user',
          content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: `contents of ${String((u.input as { path: string }).path)}` })),
        },
      ],
    });
    assert.equal(answer.stop_reason, 'end_turn');
    assert.match((answer.content[0] as { text: string }).text, /contents of src\/main\.ts/);
  });

  it('obeys tool_choice any and tool', async () => {
    const { client } = clientFor(ctx.emu);
    const any = await client.messages.create({
      model: 'claude-sonnet-emu',
      tools: [readFile],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'nothing here' }],
    });
    assert.equal(any.stop_reason, 'tool_use');
    const none = await client.messages.create({
      model: 'claude-sonnet-emu',
      tools: [readFile],
      tool_choice: { type: 'none' },
      messages: [{ role: 'user', content: 'read_file a.ts' }],
    });
    assert.equal(none.stop_reason, 'end_turn');
  });

  it('keeps the partial message when the stream is cut, and maps an error event', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'cut', afterEvents: 12 } });
    const err = await client.messages
      .stream({ model: 'claude-sonnet-emu', messages: [{ role: 'user', content: 'long #words=300' }] })
      .finalMessage()
      .then(
        () => assert.fail('expected a cut'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof StreamError);
    const partial = err.partial as Message;
    assert.equal(partial.content[0].type, 'text');
    assert.ok((partial.content[0] as { text: string }).text.length > 10);
    assert.equal(partial.stop_reason, null);

    ctx.emu.inject({ fault: { kind: 'streamError', afterEvents: 5, message: 'Overloaded' } });
    await assert.rejects(
      client.messages.stream({ model: 'claude-sonnet-emu', messages: [{ role: 'user', content: 'x #words=100' }] }).finalMessage(),
      (e: unknown) => e instanceof StreamError && e.type === 'overloaded_error' && /Overloaded/.test(e.message),
    );
  });

  it('aborts mid-stream and keeps the text so far', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'delayEvents', ms: 15 } });
    const stream = client.messages.stream({ model: 'claude-sonnet-emu', messages: [{ role: 'user', content: 'slow #words=300' }] });
    let n = 0;
    const err = await (async () => {
      try {
        for await (const ev of stream as AsyncIterable<MessageStreamEvent>) if (ev.type === 'content_block_delta' && ++n === 4) stream.abort();
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof AbortError);
    assert.ok(((err.partial as Message).content[0] as { text: string }).text.length > 0);
  });

  describe('prompt caching (the spec state table)', () => {
    const system = [{ type: 'text' as const, text: LONG_SYSTEM, cache_control: { type: 'ephemeral' as const } }];
    const conversation = (turns: string[]): MessagesRequest['messages'] => {
      const out: MessagesRequest['messages'] = [];
      turns.forEach((t, i) => {
        if (i > 0) out.push({ role: 'assistant', content: `Answer ${i}` });
        const last = i === turns.length - 1;
        out.push({ role: 'user', content: [{ type: 'text', text: t, ...(last ? { cache_control: { type: 'ephemeral' as const } } : {}) }] });
      });
      return out;
    };

    it('turn 2 reads what turn 1 wrote; after the 5-minute TTL the prefix is written again', async () => {
      const { emu } = ctx;
      const user = emu.store.addUser({ username: 'cache-org' });
      const key = emu.store.addKey({ userId: user.id, name: 'cache', unlimitedQuota: true });
      const { client } = clientFor(emu, { apiKey: key.secret });
      const ask = (turns: string[]) => client.messages.create({ model: 'claude-sonnet-emu', max_tokens: 256, system, messages: conversation(turns) });

      const t1 = await ask(['What does rule 3 say?']);
      assert.equal(t1.usage.cache_read_input_tokens, 0);
      assert.ok((t1.usage.cache_creation_input_tokens ?? 0) >= 1024, `turn 1 wrote ${t1.usage.cache_creation_input_tokens}`);

      const t2 = await ask(['What does rule 3 say?', 'And rule 4?']);
      assert.equal(t2.usage.cache_read_input_tokens, t1.usage.cache_creation_input_tokens, 'turn 2 reads all that turn 1 wrote');
      assert.ok((t2.usage.cache_creation_input_tokens ?? 0) > 0 && (t2.usage.cache_creation_input_tokens ?? 0) < 50, 'only the new turn is written');

      // Another organisation never sees this cache.
      const other = emu.store.addKey({ userId: emu.store.addUser({ username: 'other-org' }).id, name: 'o', unlimitedQuota: true });
      const { client: otherClient } = clientFor(emu, { apiKey: other.secret });
      const o = await otherClient.messages.create({ model: 'claude-sonnet-emu', system, messages: conversation(['What does rule 3 say?']) });
      assert.equal(o.usage.cache_read_input_tokens, 0);

      emu.clock.advance(4 * 60_000);
      const t3 = await ask(['What does rule 3 say?', 'And rule 4?']);
      assert.ok((t3.usage.cache_read_input_tokens ?? 0) > 1024, 'a hit within the TTL');
      emu.clock.advance(4 * 60_000); // 8 minutes after turn 2, 4 after the refreshing hit
      const t4 = await ask(['What does rule 3 say?', 'And rule 4?']);
      assert.ok((t4.usage.cache_read_input_tokens ?? 0) > 1024, 'the hit refreshed the TTL');
      emu.clock.advance(6 * 60_000);
      const t5 = await ask(['What does rule 3 say?', 'And rule 4?']);
      assert.equal(t5.usage.cache_read_input_tokens, 0, 'expired after 5 minutes without a hit');
      assert.equal(t5.usage.cache_creation_input_tokens, t2.usage.cache_read_input_tokens! + t2.usage.cache_creation_input_tokens!);
    });

    it('the 1-hour TTL sends the beta header and survives 30 minutes', async () => {
      const { emu } = ctx;
      const { client } = clientFor(emu);
      const longSystem = [{ type: 'text' as const, text: `${LONG_SYSTEM}\nhour`, cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];
      const body: MessagesRequest = { model: 'claude-sonnet-emu', system: longSystem, messages: [{ role: 'user', content: 'q' }] };
      const first = await client.messages.create(body);
      assert.equal(emu.requestsTo('/v1/messages').at(-1)!.headers['anthropic-beta'], 'extended-cache-ttl-2025-04-11');
      assert.ok((first.usage.cache_creation_input_tokens ?? 0) >= 1024);
      assert.equal(
        (first.usage as { cache_creation?: { ephemeral_1h_input_tokens: number } }).cache_creation?.ephemeral_1h_input_tokens,
        first.usage.cache_creation_input_tokens,
      );
      emu.clock.advance(30 * 60_000);
      const second = await client.messages.create(body);
      assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
      emu.clock.advance(61 * 60_000);
      assert.equal((await client.messages.create(body)).usage.cache_read_input_tokens, 0);
    });

    it('the smallest model series needs 2,048 tokens before anything is cached', async () => {
      const { client } = clientFor(ctx.emu);
      const body: MessagesRequest = { model: 'claude-haiku-emu', system, messages: [{ role: 'user', content: 'q' }] };
      assert.equal((await client.messages.create(body)).usage.cache_creation_input_tokens, 0);
      const bigger = [{ type: 'text' as const, text: LONG_SYSTEM + LONG_SYSTEM, cache_control: { type: 'ephemeral' as const } }];
      assert.ok(((await client.messages.create({ ...body, system: bigger })).usage.cache_creation_input_tokens ?? 0) >= 2048);
    });

    it('the emulator itself refuses a 1-hour TTL without the beta header', async () => {
      const res = await fetch(`${ctx.emu.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-emu',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
        }),
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /requires the anthropic-beta header/);
    });
  });

  describe('validation before sending', () => {
    const cc = { type: 'ephemeral' as const };
    const text = (t: string, mark = false) => ({ type: 'text' as const, text: t, ...(mark ? { cache_control: cc } : {}) });
    const cases: [string, unknown, RegExp][] = [
      ['temperature 0', { model: 'm', temperature: 0, messages: [{ role: 'user', content: 'x' }] }, /temperature: must be greater than 0\.0 and at most 1\.0/],
      ['temperature 1.5', { model: 'm', temperature: 1.5, messages: [{ role: 'user', content: 'x' }] }, /temperature: must be greater than 0\.0/],
      ['system role in messages', { model: 'm', messages: [{ role: 'system', content: 'x' }] }, /messages\[0\]\.role: role must be "user" or "assistant"/],
      [
        'five breakpoints',
        { model: 'm', system: [text('a', true), text('b', true)], messages: [{ role: 'user', content: [text('c', true), text('d', true), text('e', true)] }] },
        /messages\[0\]\.content\[2\]\.cache_control: at most 4 cache_control breakpoints are allowed per request \(found 5\)/,
      ],
      [
        'cache_control on a thinking block',
        {
          model: 'm',
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's', cache_control: cc }] },
          ],
        },
        /messages\[1\]\.content\[0\]\.cache_control: thinking blocks cannot carry cache_control/,
      ],
      [
        'an empty cached text block',
        { model: 'm', messages: [{ role: 'user', content: [text('', true)] }] },
        /messages\[0\]\.content\[0\]\.cache_control: empty text blocks cannot be cached/,
      ],
      [
        'a 1-hour breakpoint after a 5-minute one',
        {
          model: 'm',
          system: [text('a', true)],
          messages: [{ role: 'user', content: [{ type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
        },
        /messages\[0\]\.content\[0\]\.cache_control: a 1-hour breakpoint must come before every 5-minute one/,
      ],
      [
        'a bad ttl',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'b', cache_control: { type: 'ephemeral', ttl: '2h' } }] }] },
        /ttl must be "5m" or "1h"/,
      ],
      [
        'a GIF image',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD' } }] }] },
        /messages\[0\]\.content\[0\]\.source: GIF images are not supported/,
      ],
      [
        'thinking budget over max_tokens',
        { model: 'm', max_tokens: 1000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'x' }] },
        /thinking\.budget_tokens: must be less than max_tokens/,
      ],
      [
        'a marked sub-block of a tool result',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [text('r', true)] }] }] },
        /put cache_control on the tool_result block itself/,
      ],
    ];
    for (const [name, body, pattern] of cases) {
      it(`refuses ${name}, naming the field and rule, sending nothing`, async () => {
        const { client } = clientFor(ctx.emu);
        const before = ctx.emu.requests.length;
        await assert.rejects(client.messages.create(body as MessagesRequest), (e: unknown) => e instanceof ValidationError && pattern.test(e.message));
        assert.throws(
          () => client.messages.stream(body as MessagesRequest),
          (e: unknown) => e instanceof ValidationError && pattern.test(e.message),
        );
        assert.equal(ctx.emu.requests.length, before);
      });
    }
  });
});
