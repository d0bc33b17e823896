import { strict as assert } from 'node:assert';
import { reasoningMetadata, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_USER, systemPrompt, toTurns } from '../../src/lm/core/convert';
import { compactPrice, inputPriceOf } from '../../src/lm/core/pricing';
import { plan, typedText } from '../emulator/assistant';

const text = (value: string) => ({ value });

describe("VS Code's chat messages and model facts", () => {
  it("system messages become the system prompt and no user turn (VS Code's chat sends its instructions so)", () => {
    const messages = [
      { role: ROLE_SYSTEM, content: [text('You are an expert AI programming assistant.')] },
      { role: ROLE_USER, content: [text('<workspace_info>…</workspace_info>')] },
      { role: ROLE_USER, content: [text('<userRequest>\nSay hello.\n</userRequest>')] },
      { role: ROLE_ASSISTANT, content: [text('Hello.'), { callId: 'c1', name: 'read_file', input: { filePath: '/w/a.ts' } }] },
      { role: ROLE_USER, content: [{ callId: 'c1', content: [text('export const a = 1;')] }] },
      { role: ROLE_SYSTEM, content: [text('Be brief.')] },
    ];
    assert.equal(systemPrompt(messages), 'You are an expert AI programming assistant.\n\nBe brief.');
    const turns = toTurns(messages, 'gpt-4o');
    assert.deepEqual(
      turns.map((t) => t.role),
      ['user', 'user', 'assistant'],
      'the system messages are not turns; the tool result joins its call',
    );
    assert.ok(!turns.some((t) => t.role === 'user' && t.text.includes('expert AI')), 'the instructions are not sent as something the person said');
    const call = turns[2].role === 'assistant' ? turns[2].steps[0].toolCalls[0] : undefined;
    assert.equal(call?.result, 'export const a = 1;');
    assert.equal(systemPrompt([{ role: ROLE_USER, content: [text('hi')] }]), '');
  });

  it("a reasoning model's thinking comes back with its tool calls: our facts from the metadata, else the text shown", () => {
    const step = { text: '', thinking: 'Which tool?', thinkingSignature: 'sig-1', thinkingVia: 'reasoning_content' as const, toolCalls: [] };
    const metadata = reasoningMetadata(step);
    assert.ok(metadata);
    assert.equal(reasoningMetadata({ text: 'no reasoning', toolCalls: [] }), undefined);
    const call = { callId: 'c1', name: 'read_file', input: {} };
    // As VS Code hands a LanguageModelThinkingPart back: value, id and metadata of its own.
    const shown = { value: 'Which ', id: undefined, metadata: undefined };
    const last = { value: '', id: undefined, metadata };
    const [kept] = toTurns([{ role: ROLE_ASSISTANT, content: [shown, last, call] }], 'deepseek-reasoner');
    assert.ok(kept.role === 'assistant');
    assert.equal(kept.steps[0].thinking, 'Which tool?');
    assert.equal(kept.steps[0].thinkingSignature, 'sig-1');
    assert.equal(kept.steps[0].thinkingVia, 'reasoning_content');
    assert.equal(kept.steps[0].text, '', 'thinking is not answer text');
    // Metadata dropped by the caller: the text it showed still goes back.
    const [plain] = toTurns([{ role: ROLE_ASSISTANT, content: [{ value: ['Which ', 'tool?'], id: 't', metadata: undefined }, call] }], 'deepseek-reasoner');
    assert.ok(plain.role === 'assistant');
    assert.equal(plain.steps[0].thinking, 'Which tool?');
    // Metadata someone else shaped is ignored, not trusted.
    const [odd] = toTurns(
      [{ role: ROLE_ASSISTANT, content: [{ value: 'x', id: 't', metadata: { modelGateway: { reasoningItems: 'not a list' } } }, call] }],
      'm',
    );
    assert.ok(odd.role === 'assistant');
    assert.equal(odd.steps[0].reasoningItems, undefined);
    assert.equal(odd.steps[0].thinking, 'x');
  });

  it('prices for the Language Models editor: dollars, input first, trimmed; cheapest-first order reads them back', () => {
    const tokens = (input: number, output?: number) => ({ model: 'm', kind: 'tokens' as const, inputPerMTok: input, outputPerMTok: output, unknown: false });
    assert.equal(compactPrice(tokens(0.15, 0.6)), '$0.15 in · $0.6 out per M tokens');
    assert.equal(compactPrice(tokens(3, 15)), '$3 in · $15 out per M tokens');
    assert.equal(compactPrice(tokens(1.234567, 2)), '$1.23 in · $2 out per M tokens');
    assert.equal(compactPrice(tokens(2)), '$2 in · $2 out per M tokens', 'no output price: the input price');
    assert.equal(compactPrice({ model: 'm', kind: 'request', perRequest: 0.04, unknown: false }), '$0.04 a request');
    assert.equal(inputPriceOf(compactPrice(tokens(0.15, 0.6))), 0.15);
    assert.equal(inputPriceOf('$0.04 a request'), Number.POSITIVE_INFINITY);
    assert.equal(inputPriceOf(undefined), Number.POSITIVE_INFINITY);
  });

  it("the emulator answers what VS Code's chat wraps in <userRequest>, with absolute paths where a tool asks for them", () => {
    const context =
      '<environment_info>\nLinux\n</environment_info>\n<workspace_info>\nI am working in a workspace with the following folders:\n- /tmp/ws-1 \n</workspace_info>';
    const request = '<context>\nThe current date is 2026-11-24.\n</context>\n<userRequest>\nUse read_file on src/greet.ts\n</userRequest>\n';
    assert.equal(typedText(request), 'Use read_file on src/greet.ts');
    assert.equal(typedText('plain question'), 'plain question');
    const readFile = {
      name: 'read_file',
      parameters: {
        type: 'object',
        properties: {
          filePath: { type: 'string', description: 'The absolute path of the file to read.' },
          startLine: { type: 'number' },
          endLine: { type: 'number' },
        },
        required: ['filePath', 'startLine', 'endLine'],
      },
    };
    const turns = [
      { role: 'user' as const, text: context, images: 0, toolResults: [], toolCalls: [] },
      { role: 'user' as const, text: request, images: 0, toolResults: [], toolCalls: [] },
    ];
    const p = plan('gpt-4o', turns, [readFile], 'auto', false);
    assert.deepEqual(p.toolCalls, [{ name: 'read_file', arguments: { filePath: '/tmp/ws-1/src/greet.ts', startLine: 1, endLine: 200 } }]);
    // Words of the instructions (VS Code's chat names its tools there) do not call tools by themselves.
    const quiet = plan(
      'gpt-4o',
      [{ role: 'user', text: '<userRequest>\nSay hello in one short sentence.\n</userRequest>', images: 0, toolResults: [], toolCalls: [] }],
      [readFile, { name: 'create_new_workspace' }],
      'auto',
      false,
    );
    assert.deepEqual(quiet.toolCalls, []);
  });
});
