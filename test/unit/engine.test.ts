// @profile-dependent: the agent loop's costs and errors as each server answers them.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyUsage, newId, type AssistantTurn, type Condensation, type Turn, type UserTurn, type WireFormat } from '../../src/common/conversation';
import { runTurn, type EngineEvent, type ToolRunner, type TurnLimit } from '../../src/runtime/core/engine';
import { systemPrompt } from '../../src/runtime/core/prompt';
import { toChatMessages, toMessagesRequest, toResponsesInput } from '../../src/runtime/core/wire';
import { fitToWindow, IMAGE_TOKENS } from '../../src/runtime/core/budget';
import { TOOL_DEFINITIONS, WorkspaceTools, type Approver } from '../../src/tools/workspaceTools';
import { clientFor, useEmulator } from './helpers';
import { PriceBook } from '../../src/common/prices';

/** Sample projects made by this suite, removed after it. */
const projects: string[] = [];
after(() => {
  for (const p of projects.splice(0)) rmSync(p, { recursive: true, force: true });
});

function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-engine-'));
  projects.push(root);
  mkdirSync(join(root, 'src'));
  for (let i = 0; i < 10; i++) {
    const body = Array.from({ length: 12 }, (_, j) => `export const value${i}_${j} = ${i * 100 + j}; // line ${j} of module ${i}`).join('\n');
    writeFileSync(join(root, 'src', `m${i}.ts`), `${body}\n`);
  }
  writeFileSync(join(root, 'README.md'), '# Demo\n');
  return root;
}

function user(text: string): UserTurn {
  return { id: newId('u'), role: 'user', text, images: [], context: [], at: Date.now() };
}

function assistant(model: string, format: WireFormat): AssistantTurn {
  return { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
}

function runner(root: string, approver: Approver = { approve: () => Promise.resolve({ accepted: true }) }): ToolRunner {
  const tools = WorkspaceTools.forFolders([{ name: 'demo', path: root }], [], { approver });
  return { definitions: TOOL_DEFINITIONS, run: (name, args, signal) => tools.run(name, args, signal) };
}

const MODELS: [WireFormat, string][] = [
  ['chat', 'gpt-4o-mini'],
  ['messages', 'claude-sonnet-emu'],
];

describe('chat engine (agent loop) against the emulator', () => {
  const ctx = useEmulator();
  const root = project();
  const system = systemPrompt({ folders: ['demo'], toolsEnabled: true, date: new Date('2026-11-21') });

  for (const [format, model] of MODELS) {
    it(`${format} format: reads files in parallel with tools, then answers from the results`, async () => {
      const { client } = clientFor(ctx.emu);
      const events: EngineEvent['type'][] = [];
      const turn = assistant(model, format);
      const history: Turn[] = [user('Please read the file src/m1.ts and src/m2.ts')];
      await runTurn({ client, model, format, system, history, turn, tools: runner(root), maxSteps: 8, cacheTtl: '5m', onEvent: (e) => events.push(e.type) });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(turn.steps.length, 2);
      const calls = turn.steps[0].toolCalls;
      assert.deepEqual(
        calls.map((c) => [c.name, (JSON.parse(c.args) as { path: string }).path, c.status]),
        [
          ['read_file', 'src/m1.ts', 'done'],
          ['read_file', 'src/m2.ts', 'done'],
        ],
      );
      assert.match(calls[0].result!, /^src\/m1\.ts — lines 1-12 of 12/);
      assert.match(turn.steps[1].text, /From the tool results \(2\)/);
      assert.match(turn.steps[1].text, /value1_0 = 100/);
      assert.ok(events.includes('text') && events.includes('tool-call') && events.includes('tool-update'));
      assert.ok(turn.usage.input > 0 && turn.usage.output > 0);
      // The follow-up request carried the calls and their results in the format's own shape.
      const sent = ctx.emu.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
      if (format === 'chat')
        assert.deepEqual(
          sent.messages.slice(-3).map((m) => m.role),
          ['assistant', 'tool', 'tool'],
        );
      else {
        const last = sent.messages.at(-1)!;
        assert.equal(last.role, 'user');
        assert.deepEqual(
          (last.content as { type: string }[]).map((b) => b.type),
          ['tool_result', 'tool_result'],
        );
      }
    });

    it(`${format} format: a tool's image goes with its result, and the emulator (as the gateway) takes the request`, async () => {
      const { client } = clientFor(ctx.emu);
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
      const snap: ToolRunner = {
        definitions: [
          { name: 'take_screenshot', description: 'Takes a screenshot', kind: 'read', parameters: { type: 'object', properties: {}, required: [] } },
        ],
        run: () =>
          Promise.resolve({
            content: '[image image/png, 0 KB]',
            isError: false,
            images: [{ name: 'image-1', mediaType: 'image/png', data: png, detail: 'auto' }],
          }),
      };
      for (const imageInput of [true, false]) {
        const turn = assistant(model, format);
        await runTurn({
          client,
          model,
          format,
          system,
          history: [user('Use the take_screenshot tool')],
          turn,
          tools: snap,
          maxSteps: 4,
          cacheTtl: '5m',
          imageInput,
        });
        assert.equal(turn.status, 'done', JSON.stringify(turn.error));
        assert.equal(turn.steps.length, 2, 'one call, then the answer: the images are read as part of the result, not as a new question');
        assert.equal(turn.steps[0].toolCalls[0].images?.length, 1, 'kept for the card either way');
        const sent = JSON.stringify(ctx.emu.requests.at(-1)!.body);
        if (imageInput) assert.match(turn.steps[1].text, /From the tool results \(1\)/);
        assert.equal(sent.includes(png), imageInput, imageInput ? 'sent to a model that reads images' : 'not sent to one that does not');
      }
    });

    it(`${format} format: stops at the step limit and says so, the calls it did not run marked`, async () => {
      const { client } = clientFor(ctx.emu);
      const turn = assistant(model, format);
      await runTurn({
        client,
        model,
        format,
        system,
        history: [user('Read the file src/m3.ts again and again #steps=6')],
        turn,
        tools: runner(root),
        maxSteps: 3,
        cacheTtl: '5m',
      });
      assert.equal(turn.status, 'done');
      assert.equal(turn.stepLimitReached, true);
      assert.equal(turn.steps.length, 3);
      assert.deepEqual(
        turn.steps[2].toolCalls.map((c) => c.status),
        ['not-run'],
      );
      assert.match(turn.steps[2].toolCalls[0].result!, /limit of 3 steps/);
    });

    it(`${format} format: at a limit asks whether to go on: yes grants as many requests again; a cost limit asks once the dollars pass it, and no stops there`, async () => {
      const { client } = clientFor(ctx.emu);
      const asked: TurnLimit[] = [];
      const turn = assistant(model, format);
      await runTurn({
        client,
        model,
        format,
        system,
        history: [user('Read the file src/m3.ts again and again #steps=6')],
        turn,
        tools: runner(root),
        maxSteps: 3,
        cacheTtl: '5m',
        onLimit: (l) => Promise.resolve((asked.push(l), true)),
      });
      assert.equal(turn.status, 'done');
      assert.equal(turn.stepLimitReached, undefined);
      assert.deepEqual(
        asked.map((l) => l.kind),
        ['requests', 'requests'],
        'asked at 3 and again at 6 requests',
      );
      assert.ok(turn.steps.flatMap((s) => s.toolCalls).every((c) => c.status === 'done'));

      // A cost of $1 a request against a limit of $2.50: asked at the third request; no stops it there.
      const priced = assistant(model, format);
      let requests = 0;
      const costs: number[] = [];
      await runTurn({
        client,
        model,
        format,
        system,
        history: [user('Read the file src/m3.ts again and again #steps=6')],
        turn: priced,
        tools: runner(root),
        maxSteps: 50,
        cacheTtl: '5m',
        maxCostDollars: 2.5,
        costSoFar: () => (requests = priced.steps.length),
        onLimit: (l) => Promise.resolve((costs.push(l.kind === 'cost' ? l.dollars : -1), false)),
      });
      assert.deepEqual(costs, [3]);
      assert.equal(requests, 3);
      assert.equal(priced.stepLimitReached, true);
      assert.match(priced.steps[2].toolCalls[0].result!, /limit of \$2\.50 \(it has cost \$3\.00\)/);
    });
  }

  it('a rejected edit is reported to the model, which answers with it; the file is unchanged', async () => {
    const { client } = clientFor(ctx.emu);
    const turn = assistant('gpt-4o-mini', 'chat');
    const before = readFileSync(join(root, 'src', 'm4.ts'), 'utf8');
    const tools = runner(root, { approve: () => Promise.resolve({ accepted: false }) });
    await runTurn({
      client,
      model: 'gpt-4o-mini',
      format: 'chat',
      system,
      history: [user('Use replace_in_file on src/m4.ts to change "value4_0 = 400" to "value4_0 = 401"')],
      turn,
      tools,
      maxSteps: 4,
      cacheTtl: '5m',
    });
    const call = turn.steps[0].toolCalls[0];
    assert.equal(call.name, 'replace_in_file');
    assert.equal(call.status, 'rejected');
    assert.match(turn.steps[1].text, /`replace_in_file`[^:]*: The person rejected the edit to src\/m4\.ts/);
    assert.equal(readFileSync(join(root, 'src', 'm4.ts'), 'utf8'), before);
  });

  it('stopping keeps the partial answer, marked as stopped', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'delayEvents', ms: 10 } });
    const controller = new AbortController();
    const turn = assistant('gpt-4o-mini', 'chat');
    let deltas = 0;
    await runTurn({
      client,
      model: 'gpt-4o-mini',
      format: 'chat',
      system,
      history: [user('Tell me a long story #words=400')],
      turn,
      maxSteps: 4,
      cacheTtl: '5m',
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'text' && ++deltas === 6) controller.abort();
      },
    });
    ctx.emu.faults.clear();
    assert.equal(turn.status, 'stopped');
    assert.ok(turn.steps[0].text.length > 0, 'partial text kept');
    assert.ok(deltas < 20);
  });

  it('a gateway error ends the turn with the error kind, keeping nothing broken', async () => {
    const { client } = clientFor(ctx.emu, { apiKey: 'sk-wrong' });
    const turn = assistant('gpt-4o-mini', 'chat');
    await runTurn({ client, model: 'gpt-4o-mini', format: 'chat', system, history: [user('hi')], turn, maxSteps: 2, cacheTtl: '5m' });
    assert.equal(turn.status, 'error');
    assert.equal(turn.error?.kind, 'AuthenticationError');
    assert.equal(turn.error?.status, 401);
  });

  it('prompt caching: a 10-step tool-using conversation reads at least 80% of its input from the cache', async () => {
    const { emu } = ctx;
    const key = emu.store.addKey({ userId: emu.store.addUser({ username: 'cache-share' }).id, name: 'c', unlimitedQuota: true });
    const { client } = clientFor(emu, { apiKey: key.secret });
    const files = Array.from({ length: 10 }, (_, i) => `src/m${i}.ts`).join(', ');
    const turn = assistant('claude-sonnet-emu', 'messages');
    const perStep: { input: number; read: number }[] = [];
    let last = emptyUsage();
    await runTurn({
      client,
      model: 'claude-sonnet-emu',
      format: 'messages',
      system,
      history: [user(`Use read_file on each of these, one per step: ${files} #steps=10`)],
      turn,
      tools: runner(root),
      maxSteps: 12,
      cacheTtl: '5m',
      onEvent: (e) => {
        if (e.type === 'usage') {
          perStep.push({ input: e.usage.input - last.input, read: e.usage.cacheRead - last.cacheRead });
          last = { ...e.usage };
        }
      },
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.steps.filter((s) => s.toolCalls.length > 0).length, 10, 'ten tool steps');
    const share = turn.usage.cacheRead / turn.usage.input;
    const saved = new PriceBook(undefined, { 'claude-sonnet-emu': { input: 3, output: 15 } }).cost(turn.model, turn.usage).savedDollars ?? 0;
    console.log(
      `      cache-read share over ${perStep.length} requests: ${(share * 100).toFixed(1)}% (${turn.usage.cacheRead} of ${turn.usage.input} input tokens); saved $${saved.toFixed(5)} at $3/M`,
    );
    assert.ok(share >= 0.8, `share ${share}`);
    assert.ok(
      perStep.slice(1).every((s) => s.read > 0),
      'every step after the first reads the cache',
    );
    assert.ok(saved > 0);
  });

  for (const [format, model] of [
    ['chat', 'small-context-emu'],
    ['messages', 'claude-small-context-emu'],
  ] as const) {
    it(`fits a long tool session into a 32,000-token window, learning the window from the gateway's refusal (${format})`, async () => {
      const root = project();
      writeFileSync(
        join(root, 'big.txt'),
        Array.from({ length: 1500 }, (_, i) => `line ${i + 1}: notes about the gateway, the cache and the budget`).join('\n'),
      );
      const { client } = clientFor(ctx.emu);
      const turn = assistant(model, format);
      const learned: number[] = [];
      const uses: number[] = [];
      // The caller believes the window is much larger (as for an unknown model of a big family).
      await runTurn({
        client,
        model,
        format,
        system: 'You help with code.',
        history: [user('Read the file big.txt again and again #steps=8')],
        turn,
        tools: runner(root),
        maxSteps: 12,
        cacheTtl: '5m',
        contextWindow: 200_000,
        onContextWindow: (w) => learned.push(w),
        onEvent: (e) => e.type === 'context' && uses.push(e.use.used),
      });
      assert.equal(turn.error?.message, undefined);
      assert.equal(turn.status, 'done');
      assert.deepEqual(learned, [32_000], 'the window the refusal named, once');
      assert.ok(turn.steps.flatMap((s) => s.toolCalls).length >= 8);
      assert.ok(Math.max(...uses.slice(uses.indexOf(Math.max(...uses)) + 1)) < 32_000, 'after the refusal, every request fits');
      assert.ok(
        turn.steps.flatMap((s) => s.toolCalls).every((c) => (c.result ?? '').length > 20_000),
        'the turn keeps the whole results',
      );
    });
  }

  for (const [format, model] of [
    ['chat', 'small-context-emu'],
    ['messages', 'claude-small-context-emu'],
    ['responses', 'small-context-emu'],
  ] as const) {
    it(`condenses older turns with a model-written summary when stubs are not enough, then sends the summary in their place (${format})`, async () => {
      const { emu } = ctx;
      // /v1/responses exists on new-api only.
      const profile = emu.profile;
      if (format === 'responses') emu.profile = 'new-api';
      try {
        await condensesOlderTurns(format, model);
      } finally {
        emu.profile = profile;
      }
    });
  }

  async function condensesOlderTurns(format: WireFormat, model: string): Promise<void> {
    const { emu } = ctx;
    const key = emu.store.addKey({ userId: emu.store.addUser({ username: `condense-${format}` }).id, name: 'c', unlimitedQuota: true });
    const { client } = clientFor(emu, { apiKey: key.secret });
    const path = format === 'chat' ? '/v1/chat/completions' : format === 'responses' ? '/v1/responses' : '/v1/messages';
    const long = (n: number) => Array.from({ length: 700 }, (_, i) => `point ${i + 1} of answer ${n}: the gateway keeps keys, balances and models`).join('\n');
    // Three earlier exchanges with long answers (no tool results to stub): more than a 32k window leaves for the prompt.
    const history: Turn[] = [];
    for (let n = 1; n <= 3; n++) {
      history.push(user(`Question ${n}: explain part ${n} of the design`), {
        ...assistant(model, format),
        status: 'done',
        steps: [{ text: long(n), toolCalls: [] }],
      });
    }
    history.push(user('Read the file src/m1.ts, then src/m2.ts #steps=2'));
    const turn = assistant(model, format);
    const condensed: Condensation[] = [];
    const before = emu.requestsTo(path).length;
    const options = {
      client,
      model,
      format,
      system,
      history,
      turn,
      tools: runner(root),
      maxSteps: 6,
      cacheTtl: '5m' as const,
      contextWindow: 32_000,
      tokenScale: 1,
      onEvent: (e: EngineEvent) => e.type === 'condensed' && condensed.push(e.condensation),
    };
    await runTurn(options);
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(condensed.length, 1, 'condensed once, not every step');
    const c = condensed[0];
    assert.equal(options.tokenScale === 1, false, "the gateway's counts corrected the estimate");
    assert.match(c.summary, /## Requests\n- Question 1: explain part 1 of the design/);
    assert.ok(c.tokensAfter < c.tokensBefore / 10, `${c.tokensBefore} → ${c.tokensAfter}`);
    const sent = emu.requestsTo(path).slice(before);
    const summariser = sent.filter((r) => JSON.stringify(r.body).includes('Summarise the conversation below'));
    assert.equal(summariser.length, 1, 'one request made the summary');
    const after = sent.slice(sent.indexOf(summariser[0]) + 1);
    assert.ok(after.length >= 2);
    for (const r of after) {
      const text = JSON.stringify(r.body);
      assert.ok(
        text.includes('was condensed to fit the context window') && !text.includes('point 5 of answer 1'),
        'the summary goes instead of the condensed turns',
      );
      assert.ok(text.includes('Read the file src/m1.ts'), 'the question is kept');
    }
    if (format === 'messages') {
      const first = (after[0].body as { messages: { content: { text?: string; cache_control?: unknown }[] }[] }).messages[0].content[0];
      assert.ok(first.text?.includes('was condensed') && first.cache_control, 'the summary carries its own cache breakpoint');
      assert.ok(turn.usage.cacheRead > 0, 'later steps read the summary from the cache');
    }
  }

  it('the 1-hour TTL setting sends the beta header', async () => {
    const { client } = clientFor(ctx.emu);
    const turn = assistant('claude-sonnet-emu', 'messages');
    await runTurn({ client, model: 'claude-sonnet-emu', format: 'messages', system, history: [user('hello')], turn, maxSteps: 2, cacheTtl: '1h' });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(ctx.emu.requests.at(-1)!.headers['anthropic-beta'], 'extended-cache-ttl-2025-04-11');
  });
});

describe('wire conversion', () => {
  const defs = TOOL_DEFINITIONS;
  const u1 = user('first question');
  const a1 = assistant('m', 'messages');
  a1.status = 'done';
  a1.steps = [
    { text: 'Looking.', toolCalls: [{ id: 't1', name: 'read_file', args: '{"path":"a.ts"}', status: 'done', result: 'contents' }] },
    { text: 'Done: contents.', toolCalls: [] },
  ];
  const stopped = assistant('m', 'messages');
  stopped.status = 'stopped';
  stopped.steps = [{ text: 'partial ans', toolCalls: [] }];
  const u2: UserTurn = {
    ...user('second'),
    images: [{ name: 'x.png', mediaType: 'image/png', data: 'iVBORw0KGgo=', detail: 'low' }],
    context: [{ label: 'src/a.ts:1-2', text: 'let a;', language: 'ts' }],
  };

  it('messages format: alternating roles, tool results as blocks, at most 4 breakpoints in the right places', () => {
    const req = toMessagesRequest('sys', [u1, a1, u2], defs, '5m');
    assert.deepEqual(
      req.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user'],
    );
    const types = req.messages.map((m) => (m.content as { type: string }[]).map((b) => b.type).join(','));
    assert.deepEqual(types, ['text', 'text,tool_use', 'tool_result', 'text', 'text,image']);
    const marks: string[] = [];
    req.tools!.forEach((t, i) => t.cache_control && marks.push(`tool ${i}`));
    (req.system as { cache_control?: unknown }[]).forEach((b, i) => b.cache_control && marks.push(`system ${i}`));
    req.messages.forEach((m, mi) => (m.content as { cache_control?: unknown }[]).forEach((b, bi) => b.cache_control && marks.push(`message ${mi}.${bi}`)));
    assert.deepEqual(marks, [`tool ${defs.length - 1}`, 'system 0', 'message 2.0', 'message 4.1']);
    assert.match((req.messages[4].content as { text?: string }[])[0].text!, /^Context from src\/a\.ts:1-2:\n```ts\nlet a;\n```\n\nsecond$/);
  });

  it('chat format: tool calls then tool messages; a stopped turn keeps its partial text', () => {
    const msgs = toChatMessages('sys', [u1, a1, u1, stopped, u2]);
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user'],
    );
    assert.equal((msgs[6] as { content: string }).content, 'partial ans');
    const last = msgs[7] as { content: { type: string; image_url?: { url: string; detail: string } }[] };
    assert.equal(last.content[1].image_url?.url, 'data:image/png;base64,iVBORw0KGgo=');
    assert.equal(last.content[1].image_url?.detail, 'low');
  });

  describe("a tool result's images", () => {
    const png = { name: 'image-1', mediaType: 'image/png' as const, data: 'iVBORw0KGgo=', detail: 'auto' as const };
    const withImage = (o: { stubbed?: boolean } = {}): AssistantTurn => {
      const t = assistant('m', 'chat');
      t.status = 'done';
      t.steps = [
        {
          text: '',
          toolCalls: [{ id: 'shot', name: 'browser__screenshot', args: '{}', status: 'done', result: '[image image/png, 0 KB]', images: [png], ...o }],
        },
        { text: 'It shows a login page.', toolCalls: [] },
      ];
      return t;
    };

    it("chat format: text-only tool message, then the images as the user's, each call named", () => {
      const msgs = toChatMessages('sys', [u1, withImage()]);
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['system', 'user', 'assistant', 'tool', 'user', 'assistant'],
      );
      assert.equal((msgs[3] as { content: string }).content, '[image image/png, 0 KB]');
      assert.deepEqual((msgs[4] as { content: unknown }).content, [
        { type: 'text', text: 'Images returned by browser__screenshot (call shot):' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
      ]);
    });

    it("messages format: inside the tool_result block; responses: after the output, as the user's", () => {
      const req = toMessagesRequest('sys', [u1, withImage()], [], '5m');
      const result = (req.messages[2].content as { type: string; content: { type: string }[] }[])[0];
      assert.equal(result.type, 'tool_result');
      assert.deepEqual(
        result.content.map((b) => b.type),
        ['text', 'image'],
      );
      const items = toResponsesInput([u1, withImage()]) as { type?: string; role?: string; content?: { type: string }[] }[];
      const at = items.findIndex((i) => i.type === 'function_call_output');
      assert.deepEqual(
        items[at + 1].content?.map((c) => c.type),
        ['input_text', 'input_image'],
      );
    });

    it('a stubbed result sends none; the budget counts them while sent', () => {
      assert.deepEqual(
        toChatMessages('sys', [u1, withImage({ stubbed: true })]).map((m) => m.role),
        ['system', 'user', 'assistant', 'tool', 'assistant'],
      );
      const sent = fitToWindow({ system: 'sys', toolsText: '', turns: [u1, withImage()], window: 200_000 });
      const stubbed = fitToWindow({ system: 'sys', toolsText: '', turns: [u1, withImage({ stubbed: true })], window: 200_000 });
      assert.equal(sent.use.parts.images, IMAGE_TOKENS);
      assert.equal(stubbed.use.parts.images, 0);
    });
  });
});
