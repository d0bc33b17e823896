// @profile-dependent: busy answers are each server's own bodies (test/emulator/busy.ts).
import { strict as assert } from 'node:assert';
import { emptyUsage, newId, usageParts, type AssistantTurn, type Turn, type UserTurn, type WireFormat } from '../../src/common/conversation';
import { ContextLengthError, errorFromResponse, StreamError, ValidationError } from '../../src/gateway/core/errors';
import { Breaker, busyReason, chainOf, modelsToTry, runWithFallback, StallError, type FallbackRecord } from '../../src/runtime/core/fallback';
import { runTurn, type EngineFallback, type ModelOptions } from '../../src/runtime/core/engine';
import { toGeminiContents, toMessagesRequest, toResponsesInput } from '../../src/runtime/core/wire';
import { clientFor, useEmulator } from './helpers';
import { TOOL_DEFINITIONS } from '../../src/tools/workspaceTools';
import { InlineCompleter } from '../../src/completions/core/completer';

const status = (code: number, body: unknown, headers: Record<string, string> = {}) => errorFromResponse(code, JSON.stringify(body), headers);

describe('fallback: when a model is busy', () => {
  describe('busyReason: what moves on and what never does', () => {
    const moves: [string, unknown, string][] = [
      [
        '429 of new-api’s model limit (no Retry-After)',
        status(429, { error: { message: '您已达到请求数限制：1分钟内最多请求3次', type: 'new_api_error', code: '' } }),
        'rate-limit',
      ],
      [
        '429 relayed with Retry-After',
        status(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '20' }),
        'rate-limit',
      ],
      [
        '503 no channel (new-api, English)',
        status(503, {
          error: { message: 'No available channel for model x under group default (distributor)', type: 'new_api_error', code: 'model_not_found' },
        }),
        'no-channel',
      ],
      ['503 no channel (one-api)', status(503, { error: { message: '当前分组 default 下对于模型 x 无可用渠道', type: 'one_api_error' } }), 'no-channel'],
      ['529 overloaded (messages)', status(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), 'overloaded'],
      [
        '529 as new-api relays it on /v1/messages',
        status(529, { type: 'error', error: { type: '<nil>', message: 'Overloaded (request id: 1)' } }),
        'overloaded',
      ],
      ['502 upstream', status(502, { error: { message: 'bad gateway', type: 'upstream_error' } }), 'server-error'],
      ['500 after the gateway’s retries', status(500, { error: { message: 'upstream failed', type: 'new_api_error' } }), 'server-error'],
      ['an overloaded error event before any token', new StreamError('mid-stream', { type: 'overloaded_error' }), 'overloaded'],
      ['no first token in time', new StallError('m', 30_000), 'stalled'],
    ];
    for (const [what, err, kind] of moves) it(`moves on: ${what}`, () => assert.equal(busyReason(err)?.kind, kind));

    const stays: [string, unknown][] = [
      ['400', status(400, { error: { message: 'bad field', type: 'invalid_request_error' } })],
      ['401', status(401, { error: { message: 'invalid token', type: 'new_api_error' } })],
      ['403 balance', status(403, { error: { message: '用户额度不足', type: 'new_api_error' } })],
      ['404 model', status(404, { error: { message: 'model not found', code: 'model_not_found' } })],
      ['413', status(413, { error: { message: 'Request body too large.' } })],
      ['a prompt too long', new ContextLengthError(400, 'maximum context length', 'too long')],
      ['a content refusal on a 5xx', status(500, { error: { message: 'The response was filtered due to content_filter', type: 'content_policy_violation' } })],
      ['a request refused before it went', new ValidationError([{ path: 'messages', message: 'empty' }])],
      ['a stop', Object.assign(new Error('stopped'), { name: 'AbortError' })],
      ['a cut stream', new StreamError('the stream was cut')],
    ];
    for (const [what, err] of stays) it(`never moves on: ${what}`, () => assert.equal(busyReason(err), undefined));
  });

  describe('the chain and the breaker', () => {
    it('a chain leaves out the model itself and repeats, at most three long; the default chain for the others', () => {
      const s = { chains: { a: ['a', 'b', 'b', 'c', 'd', 'e'] }, defaultChain: ['z', 'y'] };
      assert.deepEqual(chainOf('a', s), ['b', 'c', 'd']);
      assert.deepEqual(chainOf('q', s), ['z', 'y']);
      assert.deepEqual(chainOf('z', s), ['y']);
    });

    it('two fallbacks within five minutes trip a model for five; one, or two far apart, do not', () => {
      let now = 1_000_000;
      const b = new Breaker(() => now);
      b.record('a');
      assert.equal(b.trippedUntil('a'), undefined);
      now += 6 * 60_000;
      b.record('a');
      assert.equal(b.trippedUntil('a'), undefined, 'the first was more than five minutes before');
      now += 60_000;
      b.record('a');
      assert.equal(b.trippedUntil('a'), now + 5 * 60_000);
      assert.deepEqual(modelsToTry('a', { chains: { a: ['b', 'c'] }, defaultChain: [] }, b), ['b', 'c', 'a'], 'tried last');
      now += 5 * 60_000;
      assert.equal(b.trippedUntil('a'), undefined, 'first again after five minutes');
      assert.deepEqual(modelsToTry('a', { chains: { a: ['b', 'c'] }, defaultChain: [] }, b), ['a', 'b', 'c']);
    });
  });

  it('while a turn runs after a switch, the tokens since it count to the model answering now (the cost limit sees them)', () => {
    const u = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0 });
    const parts = usageParts({ model: 'a', answeredBy: 'b', usage: u(25, 9), usageBy: { a: u(10, 4) } });
    assert.deepEqual(parts, [
      ['a', u(10, 4)],
      ['b', u(15, 5)],
    ]);
    assert.deepEqual(usageParts({ model: 'a', usage: u(3, 1) }), [['a', u(3, 1)]]);
  });

  describe('runWithFallback', () => {
    const settings = { rateLimitWaitMs: 0, firstTokenMs: 0 };
    it('asks each model once, in order, until one answers; the moves are recorded', async () => {
      const asked: string[] = [];
      const moved: FallbackRecord[] = [];
      const out = await runWithFallback({
        models: ['a', 'b', 'c'],
        settings,
        onFallback: (f) => moved.push(f),
        attempt: (a) => {
          asked.push(a.model);
          // While a next model waits, a busy answer is not sent again to the same model; the last is sent as ever.
          assert.deepEqual(a.retry, a.model === 'c' ? undefined : { statuses: false, maxRetryAfterMs: 0 });
          return a.model === 'c' ? Promise.resolve('answer') : Promise.reject(status(503, { error: { message: '无可用渠道' } }));
        },
      });
      assert.deepEqual(asked, ['a', 'b', 'c']);
      assert.equal(out.model, 'c');
      assert.deepEqual(
        moved.map((f) => [f.from, f.to, f.kind]),
        [
          ['a', 'b', 'no-channel'],
          ['b', 'c', 'no-channel'],
        ],
      );
    });

    it('a refused request, or a busy one once something was shown, ends it with the moves so far', async () => {
      const refused = runWithFallback({ models: ['a', 'b'], settings, attempt: () => Promise.reject(status(401, { error: { message: 'invalid' } })) });
      await assert.rejects(refused, { name: 'AuthenticationError' });
      let shown = false;
      const asked: string[] = [];
      const partial = runWithFallback({
        models: ['a', 'b'],
        settings,
        shown: () => shown,
        attempt: (a) => {
          asked.push(a.model);
          shown = true;
          return Promise.reject(status(503, { error: { message: 'no available channel' } }));
        },
      });
      await assert.rejects(partial, { name: 'ServiceUnavailableError' });
      assert.deepEqual(asked, ['a'], 'nothing moves on once the answer began to show');
    });

    it('a model that sends no first token in time is left; one that has sent one is not', async () => {
      const asked: string[] = [];
      const out = await runWithFallback({
        models: ['slow', 'quick'],
        settings: { rateLimitWaitMs: 0, firstTokenMs: 50 },
        attempt: (a) =>
          new Promise<string>((resolve, reject) => {
            asked.push(a.model);
            if (a.model === 'quick') {
              a.heard();
              return resolve('ok');
            }
            a.signal!.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
          }),
      });
      assert.equal(out.model, 'quick');
      assert.equal(out.fallbacks[0].kind, 'stalled');
      // The last model of the chain has no timer: nothing waits after it.
      const lastAlone = await runWithFallback({
        models: ['only'],
        settings: { rateLimitWaitMs: 0, firstTokenMs: 10 },
        attempt: (a) => new Promise<string>((resolve) => setTimeout(() => resolve(a.signal ? 'signal' : 'none'), 40)),
      });
      assert.equal(lastAlone.value, 'none');
    });
  });

  describe('what only the first model can read stays with it', () => {
    const q: UserTurn = { id: 'u', role: 'user', text: 'q', images: [], context: [], at: 0 };
    const turn = (model: string, stepModel?: string): AssistantTurn => ({
      id: 'a',
      role: 'assistant',
      model,
      format: 'messages',
      status: 'done',
      usage: emptyUsage(),
      at: 0,
      steps: [
        {
          text: 'looking',
          thinking: 'I should read it',
          thinkingSignature: 'sig-of-claude',
          reasoningItems: [{ id: 'rs_1', summary: ['s'], encrypted: 'enc-of-gpt5' }],
          textSignature: 'gem-text-sig',
          ...(stepModel ? { model: stepModel } : {}),
          toolCalls: [{ id: 'c1', name: 'read_file', args: '{"path":"a"}', status: 'done', result: 'x', thoughtSignature: 'gem-call-sig' }],
        },
      ],
    });
    it('messages: a thinking signature goes only to the model that wrote it', () => {
      const own = toMessagesRequest('', [q, turn('claude-a')], [], '5m', 'claude-a');
      const other = toMessagesRequest('', [q, turn('claude-a')], [], '5m', 'claude-b');
      const hasThinking = (r: typeof own) => r.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking'));
      assert.ok(hasThinking(own));
      assert.ok(!hasThinking(other));
      // A step a fallback wrote is that model's, whatever the turn's model.
      assert.ok(hasThinking(toMessagesRequest('', [q, turn('gpt-x', 'claude-b')], [], '5m', 'claude-b')));
    });
    it('responses: encrypted reasoning goes only to the model that made it', () => {
      const kinds = (model: string) => toResponsesInput([q, turn('gpt-5-codex-emu')], model).map((i) => ('type' in i ? i.type : 'message'));
      assert.ok(kinds('gpt-5-codex-emu').includes('reasoning'));
      assert.ok(!kinds('o4-mini').includes('reasoning'));
    });
    it('gemini: another model’s calls carry Google’s value for transferred history, never another model’s signature', () => {
      const parts = (model: string) => toGeminiContents([q, turn('gemini-3-pro-emu')], model).flatMap((c) => c.parts);
      assert.equal(parts('gemini-3-pro-emu').find((p) => p.functionCall)?.thoughtSignature, 'gem-call-sig');
      const foreign = parts('gemini-3-flash');
      assert.equal(foreign.find((p) => p.functionCall)?.thoughtSignature, 'skip_thought_signature_validator');
      assert.ok(!foreign.some((p) => p.thoughtSignature === 'gem-text-sig'));
    });
  });
});

function user(text: string): UserTurn {
  return { id: newId('u'), role: 'user', text, images: [], context: [], at: Date.now() };
}
function assistant(model: string, format: WireFormat): AssistantTurn {
  return { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
}

/** Each emulator model's wire format and whether it takes images, as the runtime's profile would say. */
const FORMATS: Record<string, WireFormat> = {
  'gpt-4o-mini': 'chat',
  'gpt-4o': 'chat',
  'claude-sonnet-emu': 'messages',
  'claude-haiku-emu': 'messages',
  'gpt-5-codex-emu': 'responses',
  'gemini-3-pro-emu': 'gemini',
  'deepseek-reasoner-emu': 'chat',
};
const optionsFor = (model: string): ModelOptions => ({ model, format: FORMATS[model] ?? 'chat', cacheTtl: '5m', imageInput: !/deepseek/.test(model) });

describe('fallback in the agent loop, against the emulator', () => {
  const ctx = useEmulator();
  const system = 'You are a coding agent.';
  const tools = {
    definitions: TOOL_DEFINITIONS.filter((d) => d.name === 'read_file'),
    run: () => Promise.resolve({ content: 'export const x = 1;', isError: false }),
  };
  const chain = (models: string[], o: Partial<EngineFallback['settings']> = {}): EngineFallback & { moves: FallbackRecord[] } => {
    const moves: FallbackRecord[] = [];
    return { models, settings: { rateLimitWaitMs: 0, firstTokenMs: 0, ...o }, optionsFor, onFallback: (f) => moves.push(f), moves };
  };
  const sentTo = (model: string, since: number) =>
    ctx.emu.requests.slice(since).filter((r) => (r.body as { model?: string } | undefined)?.model === model || r.path.includes(`/models/${model}:`));
  afterEach(() => ctx.emu.faults.clear());

  const cases: { from: string; to: string; fault: Record<string, unknown>; kind: string }[] = [
    { from: 'gpt-4o-mini', to: 'claude-sonnet-emu', fault: { kind: 'busy', reason: 'no-channel' }, kind: 'no-channel' },
    { from: 'claude-sonnet-emu', to: 'gpt-4o-mini', fault: { kind: 'busy', reason: 'overloaded' }, kind: 'overloaded' },
    { from: 'gpt-5-codex-emu', to: 'claude-haiku-emu', fault: { kind: 'busy', reason: 'rate-limit' }, kind: 'rate-limit' },
    { from: 'gemini-3-pro-emu', to: 'gpt-4o', fault: { kind: 'status', status: 502, message: 'bad gateway' }, kind: 'server-error' },
  ];
  for (const c of cases)
    it(`${FORMATS[c.from]} → ${FORMATS[c.to]}: ${c.kind} on ${c.from} after a tool step; ${c.to} answers from the same history, once`, async function () {
      // reason: one-api serves neither /v1/responses nor /v1beta (those models go by chat completions there)
      if (process.env.MODEL_GATEWAY_EMULATOR_PROFILE === 'one-api' && (FORMATS[c.from] === 'responses' || FORMATS[c.from] === 'gemini')) this.skip();
      const { client, waits } = clientFor(ctx.emu);
      // The first request (a tool call) goes through; the second finds the model busy.
      ctx.emu.faults.add({ model: c.from, after: 1, times: 5, fault: c.fault as never });
      const since = ctx.emu.requests.length;
      const fb = chain([c.to]);
      const turn = assistant(c.from, FORMATS[c.from]);
      const history: Turn[] = [user('Please read the file src/a.ts')];
      const seen: string[] = [];
      await runTurn({
        client,
        ...optionsFor(c.from),
        system,
        history,
        turn,
        tools,
        maxSteps: 6,
        fallback: fb,
        onEvent: (e) => e.type === 'fallback' && seen.push(e.fallback.to),
      });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(sentTo(c.from, since).length, 2, 'the busy model was asked once for the step it failed (no retry)');
      assert.equal(sentTo(c.to, since).length, 1);
      assert.deepEqual(seen, [c.to]);
      assert.deepEqual(
        turn.fallbacks?.map((f) => [f.from, f.to, f.kind]),
        [[c.from, c.to, c.kind]],
      );
      assert.equal(turn.answeredBy, c.to);
      assert.equal(turn.format, FORMATS[c.to]);
      assert.equal(turn.steps[0].toolCalls[0]?.name, 'read_file');
      assert.equal(turn.steps[0].model, undefined, 'the first step is the turn model’s');
      assert.equal(turn.steps[1].model, c.to);
      assert.ok(turn.steps[1].text.length > 0);
      // The next model got the tool round in its own format.
      const sent = JSON.stringify(sentTo(c.to, since)[0].body);
      assert.match(sent, /export const x = 1;/);
      assert.ok(!sent.includes('encrypted_content') && !sent.includes('"signature"'), 'nothing only the first model could read');
      // Each model's tokens are its own.
      assert.deepEqual(Object.keys(turn.usageBy ?? {}).sort(), [c.from, c.to].sort());
      assert.ok(turn.usageBy![c.from].input > 0 && turn.usageBy![c.to].input > 0);
      assert.equal(turn.usageBy![c.from].input + turn.usageBy![c.to].input, turn.usage.input);
      assert.deepEqual(waits, [], 'no wait before the next model');
    });

  it('a 429 whose Retry-After is within the person’s wait is waited out on the same model', async () => {
    const { client, waits } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'busy', reason: 'rate-limit', retryAfter: 1 } as never });
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({
      client,
      ...optionsFor('gpt-4o-mini'),
      system,
      history: [user('hello')],
      turn,
      maxSteps: 2,
      fallback: chain(['gpt-4o'], { rateLimitWaitMs: 2000 }),
    });
    assert.equal(turn.status, 'done');
    assert.equal(turn.fallbacks, undefined);
    assert.deepEqual(
      waits.map((w) => Math.round(w)),
      [1000],
    );
  });

  it('never on a refusal: a 400 ends the turn on the first model with nothing sent to the next', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 3, fault: { kind: 'status', status: 400, message: 'Invalid parameter' } });
    const since = ctx.emu.requests.length;
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({ client, ...optionsFor('gpt-4o-mini'), system, history: [user('hello')], turn, maxSteps: 2, fallback: chain(['gpt-4o']) });
    assert.equal(turn.status, 'error');
    assert.equal(turn.error?.status, 400);
    assert.equal(sentTo('gpt-4o', since).length, 0);
  });

  it('a stall before the first token moves on; the stalled request is given up', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'stall', afterEvents: 1 } as never });
    const since = ctx.emu.requests.length;
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({
      client,
      ...optionsFor('gpt-4o-mini'),
      system,
      history: [user('hello')],
      turn,
      maxSteps: 2,
      fallback: chain(['gpt-4o'], { firstTokenMs: 300 }),
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.fallbacks?.[0].kind, 'stalled');
    assert.equal(turn.answeredBy, 'gpt-4o');
    const stalled = sentTo('gpt-4o-mini', since)[0];
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(stalled.aborted, true);
  });

  it('a stall after the first token keeps the partial answer and offers the next model, without moving on', async () => {
    const { client } = clientFor(ctx.emu, { streamIdleTimeoutMs: 300 });
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'stall', afterEvents: 3 } as never });
    const since = ctx.emu.requests.length;
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({
      client,
      ...optionsFor('gpt-4o-mini'),
      system,
      history: [user('hello')],
      turn,
      maxSteps: 2,
      fallback: chain(['gpt-4o'], { firstTokenMs: 5000 }),
    });
    assert.equal(turn.status, 'error');
    assert.ok(turn.steps[0].text.length > 0, 'the partial answer is kept');
    assert.equal(turn.fallbacks, undefined);
    assert.equal(turn.error?.continueWith, 'gpt-4o');
    assert.equal(sentTo('gpt-4o', since).length, 0);
  });

  it('with tools offered, a next model that takes none is skipped', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'busy', reason: 'overloaded' } as never });
    const since = ctx.emu.requests.length;
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({
      client,
      ...optionsFor('gpt-4o-mini'),
      system,
      history: [user('hello')],
      turn,
      tools,
      maxSteps: 3,
      fallback: chain(['gpt-3.5-turbo-instruct-emu', 'gpt-4o']),
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.answeredBy, 'gpt-4o');
    assert.equal(sentTo('gpt-3.5-turbo-instruct-emu', since).length, 0);
  });

  it('the next model’s context window holds: a long conversation is condensed to fit it first', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'busy', reason: 'no-channel' } as never });
    // About 45,000 tokens of earlier turns: within gpt-4o-mini's 128,000, over small-context-emu's 32,000.
    const history: Turn[] = [];
    for (let i = 0; i < 15; i++) {
      history.push(user(`Part ${i}: ${'the ledger keeps every posting with its account and amount. '.repeat(190)}`));
      history.push({ ...assistant('gpt-4o-mini', 'chat'), status: 'done', steps: [{ text: `Noted part ${i}.`, toolCalls: [] }] });
    }
    history.push(user('Sum it up in one line.'));
    const events: string[] = [];
    const turn = assistant('gpt-4o-mini', 'chat');
    const small = (model: string): ModelOptions => ({ ...optionsFor(model), contextWindow: model === 'small-context-emu' ? 32_000 : 128_000 });
    await runTurn({
      client,
      ...small('gpt-4o-mini'),
      system,
      history,
      turn,
      maxSteps: 2,
      fallback: { ...chain(['small-context-emu']), optionsFor: small },
      onEvent: (e) => events.push(e.type),
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.answeredBy, 'small-context-emu');
    assert.ok(events.includes('condensed') || events.includes('condense-failed'), events.join(','));
  });

  it('a question with an image skips a next model that takes none', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({ model: 'gpt-4o-mini', times: 1, fault: { kind: 'busy', reason: 'no-channel' } as never });
    const since = ctx.emu.requests.length;
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const q: UserTurn = { ...user('What is in this picture?'), images: [{ mediaType: 'image/png', data: png, name: 'a.png', detail: 'auto' }] };
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({ client, ...optionsFor('gpt-4o-mini'), system, history: [q], turn, maxSteps: 2, fallback: chain(['deepseek-reasoner-emu', 'gpt-4o']) });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.answeredBy, 'gpt-4o');
    assert.equal(sentTo('deepseek-reasoner-emu', since).length, 0);
  });
});

describe('fallback of inline completions: a fill-in-the-middle model to a chat model', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('a busy code model hands the hole to the chain’s chat model, asked with the chat prompt at once', async () => {
    const { client } = clientFor(ctx.emu);
    const answered: string[] = [];
    const moved: FallbackRecord[] = [];
    const completer = new InlineCompleter(
      {
        client: () => client,
        learnedPath: () => undefined,
        remember: () => undefined,
        answered: (model) => void answered.push(model),
        fellBack: (f) => void moved.push(f),
      },
      { cache: false },
    );
    ctx.emu.faults.add({ model: 'codestral-emu', times: 2, fault: { kind: 'busy', reason: 'rate-limit' } as never });
    const since = ctx.emu.requests.length;
    const outcome = await completer.complete(
      {
        before: "import { greet } from './greet';\n\nexport function welcome(name: string): string {\n  return gre",
        after: '\n}\n',
        language: 'typescript',
        path: 'src/add.ts',
        model: 'codestral-emu',
        maxPrefixTokens: 500,
        maxSuffixTokens: 200,
        maxLines: 4,
        automatic: false,
        fallbackModels: ['gpt-4o-mini'],
      },
      new AbortController().signal,
    );
    assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
    assert.equal(outcome.kind === 'answer' && outcome.path, 'chat');
    assert.deepEqual(answered, ['gpt-4o-mini'], 'the answering model is the one priced');
    assert.deepEqual(
      moved.map((f) => [f.from, f.to, f.kind]),
      [['codestral-emu', 'gpt-4o-mini', 'rate-limit']],
    );
    const sent = ctx.emu.requests.slice(since).map((r) => `${r.path} ${(r.body as { model: string }).model}`);
    assert.deepEqual(sent, ['/v1/completions codestral-emu', '/v1/chat/completions gpt-4o-mini'], 'one request each: no retry, no FIM try on the chat model');
  });
});
