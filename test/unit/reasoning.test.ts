import { strict as assert } from 'node:assert';
import { emptyUsage, newId, resolveFormat, type AssistantTurn, type Turn, type UserTurn, type WireFormat } from '../../src/common/conversation';
import { runTurn, type EngineEvent, type ToolRunner } from '../../src/runtime/core/engine';
import { ThinkTagSplitter } from '../../src/runtime/core/thinkTags';
import { toChatMessages, toResponsesInput } from '../../src/runtime/core/wire';
import { clientFor, useEmulator } from './helpers';

function user(text: string): UserTurn {
  return { id: newId('u'), role: 'user', text, images: [], context: [], at: Date.now() };
}
function assistant(model: string, format: WireFormat): AssistantTurn {
  return { id: newId('a'), role: 'assistant', model, format, steps: [], status: 'streaming', usage: emptyUsage(), at: Date.now() };
}

/** Feeds the chunks through a splitter; what came out as text and as thinking. */
function split(chunks: string[]): { text: string; thinking: string } {
  const s = new ThinkTagSplitter();
  const out = { text: '', thinking: '' };
  for (const c of [...chunks.map((c) => s.push(c)), s.end()]) {
    out.text += c.text;
    out.thinking += c.thinking;
  }
  return out;
}

describe('reasoning in every shape', () => {
  describe('<think> tags at the start of streamed content', () => {
    const samples = [
      { raw: '<think>\nWeighing the options.\n</think>\n\nUse a Map here.', text: 'Use a Map here.', thinking: '\nWeighing the options.\n' },
      { raw: '  <think>short</think>Answer < 3 and </thin> stays', text: 'Answer < 3 and </thin> stays', thinking: 'short' },
      { raw: 'No thinking: <think> later is text', text: 'No thinking: <think> later is text', thinking: '' },
      { raw: '<thi', text: '<thi', thinking: '' },
      { raw: '<think>never closed </thi', text: '', thinking: 'never closed </thi' },
      { raw: '<think></think>', text: '', thinking: '' },
    ];
    for (const sample of samples) {
      it(`splits ${JSON.stringify(sample.raw.slice(0, 30))} the same at every byte position and one character at a time`, () => {
        assert.deepEqual(split([sample.raw]), { text: sample.text, thinking: sample.thinking });
        for (let i = 0; i <= sample.raw.length; i++) {
          assert.deepEqual(split([sample.raw.slice(0, i), sample.raw.slice(i)]), { text: sample.text, thinking: sample.thinking }, `split at ${i}`);
          for (let j = i; j <= sample.raw.length; j += 3) {
            assert.deepEqual(
              split([sample.raw.slice(0, i), sample.raw.slice(i, j), sample.raw.slice(j)]),
              { text: sample.text, thinking: sample.thinking },
              `split at ${i} and ${j}`,
            );
          }
        }
        assert.deepEqual(split([...sample.raw]), { text: sample.text, thinking: sample.thinking });
      });
    }
  });

  it("reasoning goes back on a tool round only where the model sent it as reasoning_content, unless the user's override says otherwise", () => {
    const turn = (via?: 'reasoning_content' | 'reasoning' | 'tags'): Turn => ({
      ...assistant('m', 'chat'),
      status: 'done',
      steps: [
        {
          text: '',
          thinking: 'weighing it',
          ...(via ? { thinkingVia: via } : {}),
          toolCalls: [{ id: 'c1', name: 'read_file', args: '{}', status: 'done', result: 'x' }],
        },
      ],
    });
    const sentBack = (t: Turn, back?: boolean) => toChatMessages('', [user('q'), t], back).some((m) => 'reasoning_content' in m);
    assert.equal(sentBack(turn('reasoning_content')), true);
    assert.equal(sentBack(turn()), true, 'stored before the shape was recorded: reasoning_content was the only one');
    assert.equal(sentBack(turn('reasoning')), false);
    assert.equal(sentBack(turn('tags')), false);
    assert.equal(sentBack(turn('tags'), true), true);
    assert.equal(sentBack(turn('reasoning_content'), false), false);
  });

  it('the wire format is decided per model: override, then the gateway endpoint list, then chat; a gateway without /v1/responses falls back', () => {
    const pattern = 'claude';
    assert.equal(resolveFormat('gpt-5-codex', 'auto', pattern), 'chat', 'never guessed from the name');
    assert.equal(resolveFormat('gpt-5-codex', 'auto', pattern, { endpoints: ['openai-response'] }), 'responses');
    assert.equal(resolveFormat('gpt-4o', 'auto', pattern, { endpoints: ['openai', 'openai-response'] }), 'chat');
    assert.equal(resolveFormat('claude-x', 'auto', pattern, { endpoints: ['openai', 'anthropic'] }), 'messages');
    assert.equal(resolveFormat('claude-x', 'auto', pattern, { endpoints: ['openai'] }), 'chat', 'the pattern picks only among listed formats');
    assert.equal(resolveFormat('gpt-4o', 'auto', pattern, { override: 'responses', endpoints: ['openai'] }), 'responses', "the user's override wins");
    assert.equal(resolveFormat('gpt-5-codex', 'auto', pattern, { endpoints: ['openai-response'], noResponsesRoute: true }), 'chat');
    assert.equal(resolveFormat('gpt-4o', 'responses', pattern, { noResponsesRoute: true }), 'chat');
    assert.equal(resolveFormat('gpt-4o', 'messages', pattern, { endpoints: ['openai'] }), 'messages', 'an explicit choice in the chat is kept');
    // Gemini's own format: for a Gemini model where the gateway lists it, never guessed where it lists nothing (one-api).
    assert.equal(resolveFormat('gemini-3-pro', 'auto', pattern, { endpoints: ['gemini', 'openai'] }), 'gemini');
    assert.equal(resolveFormat('gemini-3-pro', 'auto', pattern), 'chat', 'no endpoint list: chat completions');
    assert.equal(resolveFormat('gemini-3-pro', 'auto', pattern, { endpoints: ['gemini', 'openai'], noGeminiRoute: true }), 'chat');
    assert.equal(resolveFormat('gpt-4o', 'auto', pattern, { endpoints: ['openai', 'gemini'] }), 'chat', 'another model listed for both keeps chat completions');
    assert.equal(resolveFormat('some-model', 'auto', pattern, { endpoints: ['gemini'] }), 'gemini', 'the only format listed');
  });

  describe('against the emulator', function () {
    this.timeout(30_000);
    const ctx = useEmulator();
    let profile: typeof ctx.emu.profile;
    before(() => {
      profile = ctx.emu.profile;
    });
    afterEach(() => {
      ctx.emu.profile = profile;
    });

    const files = new Map([['src/app.ts', 'export function main() { return serve(8080); }']]);
    const reader: ToolRunner = {
      definitions: [
        {
          name: 'read_file',
          description: 'Read a file of the workspace',
          kind: 'read',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      ],
      run: (_name, args) => {
        const path = (JSON.parse(args) as { path: string }).path;
        return Promise.resolve(files.has(path) ? { content: files.get(path)!, isError: false } : { content: `Error: no file ${path}`, isError: true });
      },
    };

    it('a chat turn in the Responses format: a tool round trip, thinking from reasoning summaries, encrypted reasoning carried, reasoning tokens counted', async () => {
      ctx.emu.profile = 'new-api';
      const { client } = clientFor(ctx.emu);
      const turn = assistant('gpt-5-codex-emu', 'responses');
      const events: EngineEvent[] = [];
      const history: Turn[] = [user('Read the file `src/app.ts` and say what it serves')];
      await runTurn({
        client,
        model: 'gpt-5-codex-emu',
        format: 'responses',
        system: 'You are a coding assistant.',
        history,
        turn,
        tools: reader,
        maxSteps: 4,
        cacheTtl: '5m',
        reasoningEffort: 'low',
        onEvent: (e) => events.push(e),
      });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(turn.steps.length, 2);
      assert.equal(turn.steps[0].toolCalls[0]?.name, 'read_file');
      assert.match(turn.steps[0].toolCalls[0]?.result ?? '', /serve\(8080\)/);
      assert.ok(turn.steps[0].reasoningItems?.[0]?.encrypted, 'the reasoning item was kept for the next step');
      assert.ok(turn.steps[0].thinking, 'the reasoning summary shows as thinking');
      assert.ok(events.some((e) => e.type === 'thinking'));
      assert.match(turn.steps[1].text, /\S/);
      assert.ok((turn.usage.reasoning ?? 0) > 0);
      const sent = ctx.emu.requestsTo('/v1/responses').at(-1)?.body as { input: { type?: string }[]; store: boolean; include: string[] };
      assert.equal(sent.store, false);
      assert.deepEqual(sent.include, ['reasoning.encrypted_content']);
      const types = sent.input.map((i) => i.type ?? 'message');
      assert.deepEqual(types, ['message', 'reasoning', 'function_call', 'function_call_output'], 'stateless: the whole input, reasoning before its call');
      // The next turn sends the earlier reasoning back too.
      assert.deepEqual(
        toResponsesInput([...history, turn, user('thanks')]).map((i) => ('type' in i && i.type ? i.type : 'message')),
        ['message', 'reasoning', 'function_call', 'function_call_output', 'message', 'message'],
      );
    });

    it("a chat turn in Gemini's own format: a tool round trip, thoughts shown as thinking, the call's signature sent back, thinking tokens counted", async () => {
      ctx.emu.profile = 'new-api';
      const { client } = clientFor(ctx.emu);
      const turn = assistant('gemini-3-pro-emu', 'gemini');
      const events: EngineEvent[] = [];
      const history: Turn[] = [user('Read the file `src/app.ts` and say what it serves')];
      await runTurn({
        client,
        model: 'gemini-3-pro-emu',
        format: 'gemini',
        system: 'You are a coding assistant.',
        history,
        turn,
        tools: reader,
        maxSteps: 4,
        cacheTtl: '5m',
        onEvent: (e) => events.push(e),
      });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(turn.steps.length, 2);
      const call = turn.steps[0].toolCalls[0];
      assert.equal(call?.name, 'read_file');
      assert.match(call?.result ?? '', /serve\(8080\)/);
      assert.ok(call?.thoughtSignature, 'the signature kept with the call');
      assert.ok(turn.steps[0].thinking && events.some((e) => e.type === 'thinking'), 'the thought summary shows as thinking');
      assert.match(turn.steps[1].text, /\S/);
      assert.ok((turn.usage.reasoning ?? 0) > 0 && turn.usage.input > 0);
      const sent = ctx.emu.requests.filter((r) => r.path === '/v1beta/models/gemini-3-pro-emu:streamGenerateContent').at(-1)?.body as {
        contents: { role: string; parts: Record<string, unknown>[] }[];
        systemInstruction: unknown;
      };
      assert.deepEqual(
        sent.contents.map((c) => c.role),
        ['user', 'model', 'user'],
      );
      assert.equal(sent.contents[1].parts[0].thoughtSignature, call?.thoughtSignature, 'sent back unchanged');
      assert.ok(sent.contents[2].parts[0].functionResponse);
      assert.deepEqual(sent.systemInstruction, { parts: [{ text: 'You are a coding assistant.' }] });
    });

    it('a gateway without /v1beta (one-api): a Gemini turn goes on in chat completions and the caller is told', async () => {
      ctx.emu.profile = 'one-api';
      const { client } = clientFor(ctx.emu);
      const turn = assistant('gemini-3-pro-emu', 'gemini');
      let told = 0;
      await runTurn({
        client,
        model: 'gemini-3-pro-emu',
        format: 'gemini',
        system: '',
        history: [user('hello')],
        turn,
        maxSteps: 2,
        cacheTtl: '5m',
        onNoGeminiRoute: () => told++,
        onEvent: () => undefined,
      });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(turn.format, 'chat');
      assert.equal(told, 1);
    });

    it('a gateway without /v1/responses: the turn goes on in chat completions and the caller is told', async () => {
      ctx.emu.profile = 'one-api';
      const { client } = clientFor(ctx.emu);
      const turn = assistant('gpt-4o-mini', 'responses');
      let told = 0;
      await runTurn({
        client,
        model: 'gpt-4o-mini',
        format: 'responses',
        system: '',
        history: [user('hello')],
        turn,
        maxSteps: 2,
        cacheTtl: '5m',
        onNoResponsesRoute: () => told++,
        onEvent: () => undefined,
      });
      assert.equal(turn.status, 'done', JSON.stringify(turn.error));
      assert.equal(turn.format, 'chat');
      assert.equal(told, 1);
      assert.match(turn.steps[0].text, /\S/);
    });

    for (const [model, shape] of [
      ['deepseek-reasoner-emu', 'reasoning_content'],
      ['vllm-reasoner-emu', 'reasoning'],
      ['r1-distill-emu', '<think> tags'],
    ] as const) {
      it(`chat completions: ${shape} shows as thinking, never in the answer, with its time`, async () => {
        const { client } = clientFor(ctx.emu);
        const turn = assistant(model, 'chat');
        await runTurn({
          client,
          model,
          format: 'chat',
          system: '',
          history: [user('Explain closures briefly')],
          turn,
          maxSteps: 1,
          cacheTtl: '5m',
          onEvent: () => undefined,
        });
        assert.equal(turn.status, 'done', JSON.stringify(turn.error));
        assert.match(turn.steps[0].thinking ?? '', /Thinking it through/);
        assert.doesNotMatch(turn.steps[0].text, /think>|Thinking it through/);
        assert.match(turn.steps[0].text, /^\S/, 'the blank line after </think> is not part of the answer');
        assert.ok(typeof turn.steps[0].thinkingMs === 'number');
      });
    }
  });
});
