// @profile-dependent: chat completions' usage and cached-token prices differ (new-api discounts cache reads).
import { strict as assert } from 'node:assert';
import { getEventListeners } from 'node:events';
import { AbortError, ChatCompletionAccumulator, StreamError, ValidationError, type ChatCompletion, type ChatCompletionChunk } from '../../src/gateway';
import { DEMO_KEY, clientFor, listDirTool, readFileTool, until, useEmulator } from './helpers';

describe('chat completions against the emulator', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('creates a completion whose reply is derived from the conversation, with usage', async () => {
    const { client } = clientFor(ctx.emu);
    const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.match(c.choices[0].message.content ?? '', /Hello there/);
    assert.ok(c.usage && c.usage.prompt_tokens > 0 && c.usage.completion_tokens > 0);
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
    const sent = ctx.emu.requestsTo('/v1/chat/completions').at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${DEMO_KEY}`);
  });

  it('streams chunks and folds them into the same text as the non-streamed reply, usage included', async () => {
    const { client } = clientFor(ctx.emu);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Tell me a story #words=300' }] };
    const whole = await client.chat.completions.create(body);
    const stream = client.chat.completions.stream(body);
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalCompletion();
    assert.ok(chunks.length > 50, `only ${chunks.length} chunks`);
    assert.equal(final.choices[0].message.content, whole.choices[0].message.content);
    assert.equal(final.choices[0].finish_reason, 'stop');
    assert.deepEqual(final.usage, whole.usage);
    const sent = ctx.emu.requestsTo('/v1/chat/completions').at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(sent.stream_options, { include_usage: true });
  });

  it('does not send stream_options when usage chunks are switched off', async () => {
    const { client } = clientFor(ctx.emu, { streamUsage: false });
    const final = await client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).finalCompletion();
    const sent = ctx.emu.requestsTo('/v1/chat/completions').at(-1)!.body as Record<string, unknown>;
    assert.equal(sent.stream_options, undefined);
    assert.equal(final.usage, null);
    assert.equal(final.choices[0].finish_reason, 'stop');
  });

  it('merges parallel tool-call deltas by index into complete calls', async () => {
    const { client } = clientFor(ctx.emu);
    const final = await client.chat.completions
      .stream({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Please read the file src/a.ts and docs/b.md' }],
        tools: [readFileTool, listDirTool],
      })
      .finalCompletion();
    const calls = final.choices[0].message.tool_calls ?? [];
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(
      calls.map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown]),
      [
        ['read_file', { path: 'src/a.ts' }],
        ['read_file', { path: 'docs/b.md' }],
      ],
    );
    assert.equal(new Set(calls.map((c) => c.id)).size, 2);
  });

  it('obeys required and forced tool_choice, and answers with the tool results afterwards', async () => {
    const { client } = clientFor(ctx.emu);
    const forced = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'What is in the project?' }],
      tools: [readFileTool, listDirTool],
      tool_choice: { type: 'function', function: { name: 'list_dir' } },
    });
    const call = forced.choices[0].message.tool_calls![0];
    assert.equal(call.function.name, 'list_dir');
    const required = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Nothing in particular' }],
      tools: [readFileTool],
      tool_choice: 'required',
    });
    assert.equal(required.choices[0].message.tool_calls?.length, 1);
    const none = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'read_file src/a.ts' }],
      tools: [readFileTool],
      tool_choice: 'none',
    });
    assert.equal(none.choices[0].message.tool_calls, undefined);

    // Asked about the project, it reads the files the listing showed, as an agent would…
    const history = [
      { role: 'user' as const, content: 'What is in the project?' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: call.id, type: 'function' as const, function: call.function }] },
      { role: 'tool' as const, tool_call_id: call.id, content: 'workspace root: 3 entries\nsrc/\nREADME.md\npackage.json' },
    ];
    const reads = await client.chat.completions.create({ model: 'gpt-4o-mini', tools: [readFileTool, listDirTool], messages: history });
    assert.equal(reads.choices[0].finish_reason, 'tool_calls');
    const readCalls = reads.choices[0].message.tool_calls!;
    assert.deepEqual(
      readCalls.map((c) => [c.function.name, (JSON.parse(c.function.arguments) as { path: string }).path]),
      [
        ['read_file', 'README.md'],
        ['read_file', 'package.json'],
      ],
    );
    // …then answers from what it read.
    const answer = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools: [readFileTool, listDirTool],
      messages: [
        ...history,
        { role: 'assistant', content: null, tool_calls: readCalls.map((c) => ({ id: c.id, type: 'function' as const, function: c.function })) },
        { role: 'tool', tool_call_id: readCalls[0].id, content: 'README.md — lines 1-1 of 1\n    1  # Demo' },
        { role: 'tool', tool_call_id: readCalls[1].id, content: 'package.json — lines 1-1 of 1\n    1  {"name":"demo"}' },
      ],
    });
    assert.equal(answer.choices[0].finish_reason, 'stop');
    assert.match(answer.choices[0].message.content ?? '', /From the tool results \(2\)[\s\S]*`README\.md` and `package\.json` hold what you asked about/);
  });

  it('accumulator: merges out-of-order indices, concatenates arguments, generates missing ids', () => {
    const acc = new ChatCompletionAccumulator();
    const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: string | null = null): ChatCompletionChunk => ({
      id: 'x',
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    acc.add(chunk({ role: 'assistant', content: null }));
    acc.add(chunk({ tool_calls: [{ index: 1, type: 'function', function: { name: 'b', arguments: '{"q"' } }] }));
    acc.add(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{' } }] }));
    acc.add(
      chunk({
        tool_calls: [
          { index: 1, function: { arguments: ':"x"}' } },
          { index: 0, function: { arguments: '}' } },
        ],
      }),
    );
    acc.add(chunk({ tool_calls: [{ index: -1, function: { arguments: 'ignored' } }] }));
    acc.add(chunk({}, 'tool_calls'));
    const final: ChatCompletion = acc.snapshot();
    const calls = final.choices[0].message.tool_calls!;
    assert.equal(calls.length, 2);
    assert.deepEqual([calls[0].id, calls[0].function.name, calls[0].function.arguments], ['call_a', 'a', '{}']);
    assert.equal(calls[1].function.name, 'b');
    assert.equal(calls[1].function.arguments, '{"q":"x"}');
    assert.match(calls[1].id, /^call_gen_/);
    assert.equal(final.choices[0].message.content, null);
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    // The generated id is stable across snapshots.
    assert.equal(acc.snapshot().choices[0].message.tool_calls![1].id, calls[1].id);
  });

  it('skips keep-alive comments', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'keepAlive', every: 2 } });
    const final = await client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ping test' }] }).finalCompletion();
    assert.match(final.choices[0].message.content ?? '', /ping test/);
  });

  it('keeps the partial answer when the stream is cut, and does not retry', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'cut', afterEvents: 10 } });
    const before = ctx.emu.requestsTo('/v1/chat/completions').length;
    const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'long one #words=200' }] });
    let seen = '';
    const err = await (async () => {
      try {
        for await (const c of stream) seen += c.choices[0]?.delta?.content ?? '';
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof StreamError, String(err));
    const partial = err.partial as ChatCompletion;
    assert.ok(seen.length > 0);
    assert.equal(partial.choices[0].message.content, seen);
    assert.equal(partial.choices[0].finish_reason, null);
    assert.equal(ctx.emu.requestsTo('/v1/chat/completions').length, before + 1, 'a started stream is never retried');
    await assert.rejects(stream.finalCompletion(), (e) => e === err);
  });

  it('reports a stream that ends cleanly without its terminator as cut', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'end', afterEvents: 5 } });
    await assert.rejects(
      client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x #words=50' }] }).finalCompletion(),
      (e: unknown) =>
        e instanceof StreamError && /ended before the answer was complete/.test(e.message) && !!(e.partial as ChatCompletion).choices[0].message.content,
    );
  });

  it('turns a malformed event into a StreamError with the partial answer', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'malformed', afterEvents: 3 } });
    await assert.rejects(
      client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x #words=50' }] }).finalCompletion(),
      (e: unknown) => e instanceof StreamError && /malformed/.test(e.message) && e.partial !== undefined,
    );
  });

  it('maps an error object sent inside the stream', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'streamError', afterEvents: 4, message: 'upstream exploded' } });
    await assert.rejects(
      client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x #words=50' }] }).finalCompletion(),
      (e: unknown) => e instanceof StreamError && /upstream exploded/.test(e.message) && e.code === 'stream_failed',
    );
  });

  it('aborts mid-stream: AbortError with the partial answer, and the server sees the socket close', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'delayEvents', ms: 20 } });
    const closedBefore = ctx.emu.clientClosedStreams;
    const controller = new AbortController();
    const stream = client.chat.completions.stream(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow #words=400' }] },
      { signal: controller.signal },
    );
    let text = '';
    let count = 0;
    const err = await (async () => {
      try {
        for await (const c of stream) {
          text += c.choices[0]?.delta?.content ?? '';
          if (++count === 5) controller.abort();
        }
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof AbortError, String(err));
    assert.equal((err.partial as ChatCompletion).choices[0].message.content, text);
    assert.ok(count < 20, `kept reading ${count} chunks after abort`);
    await until(() => ctx.emu.clientClosedStreams === closedBefore + 1);
  });

  it('stream.abort() before any byte ends in AbortError without a request body read', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'slowFirstByte', ms: 300 } });
    const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    setTimeout(() => stream.abort(), 30);
    await assert.rejects(stream.finalCompletion(), AbortError);
  });

  it("leaves no listener on a caller's AbortSignal that is reused across requests", async () => {
    const { client } = clientFor(ctx.emu);
    const shared = new AbortController();
    for (let i = 0; i < 15; i++) {
      await client.chat.completions
        .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n${i}` }] }, { signal: shared.signal })
        .finalCompletion();
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `c${i}` }] }, { signal: shared.signal });
    }
    await new Promise((r) => setImmediate(r));
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
  });

  describe('validation before sending', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['missing model', { messages: [{ role: 'user', content: 'x' }] }, /model: model is required/],
      ['empty messages', { model: 'm', messages: [] }, /messages: must hold at least one message/],
      ['bad role', { model: 'm', messages: [{ role: 'robot', content: 'x' }] }, /messages\[0\]\.role: role must be one of/],
      ['tool message without id', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, /messages\[0\]\.tool_call_id/],
      [
        'GIF image',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGOD' } }] }] },
        /messages\[0\]\.content\[0\]\.image_url\.url: GIF images are not supported/,
      ],
      [
        'image over 20 MB',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(28_000_000)}` } }] }] },
        /image is 20\.0 MB; the limit is 20 MB per image|the limit is 20 MB per image/,
      ],
      [
        'bad detail',
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'ultra' } }] }] },
        /image_url\.detail: must be "low", "high" or "auto"/,
      ],
      ['temperature above 2', { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, /temperature: must be between 0 and 2/],
      ['max_tokens 0', { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, /max_tokens: must be at least 1/],
      ['tool_choice without tools', { model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' }, /tool_choice: needs tools/],
      [
        'forced unknown tool',
        { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [readFileTool], tool_choice: { type: 'function', function: { name: 'nope' } } },
        /tool_choice\.function\.name: forces "nope"/,
      ],
      [
        'bad tool name',
        { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'has space' } }] },
        /tools\[0\]\.function\.name: tool name must be/,
      ],
    ];
    for (const [name, body, pattern] of cases) {
      it(`refuses ${name} with a message naming the field, sending nothing`, async () => {
        const { client } = clientFor(ctx.emu);
        const before = ctx.emu.requests.length;
        await assert.rejects(client.chat.completions.create(body as never), (e: unknown) => e instanceof ValidationError && pattern.test(e.message));
        assert.throws(
          () => client.chat.completions.stream(body as never),
          (e: unknown) => e instanceof ValidationError && pattern.test(e.message),
        );
        assert.equal(ctx.emu.requests.length, before);
      });
    }
  });
});
