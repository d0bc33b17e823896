import { strict as assert } from 'node:assert';
import { contextWindowFor, fitToWindow, tokensOf, windowFromError } from '../../src/chat/budget';
import { emptyUsage, type AssistantTurn, type Turn, type UserTurn } from '../../src/chat/conversation';

const user = (id: string, text: string): UserTurn => ({ id, role: 'user', text, images: [], context: [], at: 0 });
const answer = (id: string, results: string[]): AssistantTurn => ({
  id,
  role: 'assistant',
  model: 'm',
  format: 'chat',
  status: 'done',
  usage: emptyUsage(),
  at: 0,
  steps: results.map((r, i) => ({ text: '', toolCalls: [{ id: `${id}c${i}`, name: 'read_file', args: `{"path":"f${i}.ts"}`, status: 'done' as const, result: r }] })),
});

describe('fitting a conversation into the context window', () => {
  it('leaves a conversation that fits exactly as it is', () => {
    const turns: Turn[] = [user('u1', 'hello'), answer('a1', ['short result'])];
    const { turns: sent, use } = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    assert.deepEqual(sent, turns);
    assert.deepEqual([use.cut, use.stubbed, use.omittedTurns], [0, 0, 0]);
    assert.equal(use.used, use.parts.system + use.parts.tools + use.parts.history + use.parts.toolResults + use.parts.images);
  });

  it('cuts a result larger than a quarter of the room, telling the model how to read the rest', () => {
    const big = 'x'.repeat(200_000);
    const { turns: sent, use } = fitToWindow({ system: '', toolsText: '', turns: [user('u', 'read it'), answer('a', [big])], window: 32_000 });
    const result = (sent[1] as AssistantTurn).steps[0].toolCalls[0].result!;
    assert.ok(result.length < big.length);
    assert.match(result, /more characters cut to fit the context window\. Read the rest in parts \(read_file with start_line and end_line/);
    assert.equal(use.cut, 1);
    assert.ok(use.used <= 32_000);
  });

  it('replaces older results with stubs, oldest first, keeping the newest step whole; the original is untouched', () => {
    const r = 'y'.repeat(24_000); // ~6,000 tokens each
    const turns: Turn[] = [user('u', 'go'), answer('a', [r, r, r, r, r, r])];
    const { turns: sent, use } = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    const results = (sent[1] as AssistantTurn).steps.map((s) => s.toolCalls[0].result!);
    assert.ok(use.stubbed >= 2, `stubbed ${use.stubbed}`);
    assert.match(results[0], /^\[Earlier result of read_file\(\{"path":"f0\.ts"\}\) left out to fit the context window \(24,000 characters\)/);
    assert.equal(results.at(-1), r, 'the newest result stays whole');
    assert.ok(use.used <= 32_000 - 6_400, `fits under the window less the reply's room (${use.used})`);
    assert.equal((turns[1] as AssistantTurn).steps[0].toolCalls[0].result, r, 'the stored conversation keeps everything');
  });

  it('leaves out the oldest exchanges when stubs are not enough, and says so in the first question', () => {
    const long = 'z'.repeat(40_000); // ~10,000 tokens a question
    const turns: Turn[] = [user('u1', long), answer('a1', []), user('u2', long), answer('a2', []), user('u3', long), answer('a3', []), user('u4', 'the newest question'), answer('a4', [])];
    const { turns: sent, use } = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 });
    assert.ok(use.omittedTurns >= 2);
    assert.equal(sent.at(-2)?.role === 'user' && (sent.at(-2) as UserTurn).text.endsWith('the newest question'), true);
    assert.match((sent[0] as UserTurn).text, /^\[\d earlier messages of this conversation were left out to fit the context window\.\]/);
  });

  it('aims well under the window after the gateway refused the prompt as too long', () => {
    const r = 'y'.repeat(24_000);
    const turns: Turn[] = [user('u', 'go'), answer('a', [r, r, r, r])];
    const normal = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 }).use;
    const aggressive = fitToWindow({ system: '', toolsText: '', turns, window: 32_000, aggressive: true }).use;
    assert.ok(aggressive.used < normal.used);
    assert.ok(aggressive.used <= (32_000 - 6_400) * 0.6);
  });

  it('knows the windows of the common families, with a conservative default', () => {
    assert.equal(contextWindowFor('claude-sonnet-4-5'), 200_000);
    assert.equal(contextWindowFor('gpt-4o-mini'), 128_000);
    assert.equal(contextWindowFor('my-local-model'), 32_000);
    assert.equal(contextWindowFor('gpt-4o-mini', 16_000), 16_000, 'the settings win');
    assert.equal(tokensOf('abcdefgh'), 2);
  });

  it('reads the window from the gateways\' refusals (OpenAI and Anthropic wording)', () => {
    assert.equal(windowFromError("This model's maximum context length is 32000 tokens. However, your messages resulted in 40000 tokens."), 32_000);
    assert.equal(windowFromError('prompt is too long: 51798 tokens > 200000 maximum'), 200_000);
    assert.equal(windowFromError('something else went wrong'), undefined);
  });
});
