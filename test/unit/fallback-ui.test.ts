import { strict as assert } from 'node:assert';
import type { AssistantTurn, Turn } from '../../src/common/conversation';
import { fromWebviewSchema } from '../../src/common/chatProtocol';
import { chainWrite, continueCheck, pickOrder } from '../../src/chat/core/fallbackChoices';
import { fallbackRows } from '../../src/usage/core/fallbacks';
import { answeringModel, fallbackText } from '../../src/webview/fallbackView';

const move = (from: string, to: string, kind: string, status: number | undefined, label: string) => ({ from, to, kind, status, label, at: 1 });

function answer(over: Partial<AssistantTurn> = {}): AssistantTurn {
  return {
    id: 'a1',
    role: 'assistant',
    model: 'claude-sonnet-4',
    format: 'messages',
    steps: [{ text: 'Half an answer', toolCalls: [] }],
    status: 'error',
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    at: 1,
    error: { message: '503', kind: 'APIError', continueWith: 'deepseek-v3.2' },
    ...over,
  };
}

const question: Turn = { id: 'u1', role: 'user', text: 'Hi', images: [], context: [], at: 1 };

describe('fallback chain in the chat (pure parts)', () => {
  describe("the card's line", () => {
    it('says which model was busy, why, and which answered', () => {
      assert.equal(
        fallbackText([move('claude-sonnet-4', 'deepseek-v3.2', 'no-channel', 503, '503: no available channel')], 'deepseek-v3.2', 'done'),
        'claude-sonnet-4 busy (503: no available channel) → answered by deepseek-v3.2',
      );
    });

    it('words each kind from its kind and status, not from the English label', () => {
      const line = (kind: string, status: number | undefined, label: string) => fallbackText([move('a', 'b', kind, status, label)], undefined, 'done');
      assert.equal(line('rate-limit', 429, '429: rate limited'), 'a busy (429: rate limited) → answered by b');
      assert.equal(
        line('rate-limit', 429, "429: the gateway's rate limit for the model"),
        "a busy (429: the gateway's rate limit for the model) → answered by b",
      );
      assert.equal(line('no-channel', 503, '503: unavailable'), 'a busy (503: unavailable) → answered by b');
      assert.equal(line('overloaded', 529, 'overloaded'), 'a busy (529: overloaded) → answered by b');
      assert.equal(line('server-error', 502, '502: upstream failed'), 'a busy (502: upstream failed) → answered by b');
      assert.equal(line('stalled', undefined, 'a sent no token in 30 s'), 'a busy (no token in 30 s) → answered by b');
      assert.equal(line('breaker', undefined, 'busy twice in 5 min: tried last'), 'a busy twice in 5 min: tried last → answered by b');
      assert.equal(line('something-new', 418, '418: teapot'), 'a busy (418: teapot) → answered by b');
    });

    it('chains several moves, ends with the model that answered, and says "tried" when the answer failed', () => {
      const moves = [move('a', 'b', 'overloaded', 529, 'overloaded'), move('b', 'c', 'rate-limit', 429, '429: rate limited')];
      assert.equal(fallbackText(moves, 'c', 'streaming'), 'a busy (529: overloaded) → b busy (429: rate limited) → answered by c');
      assert.equal(fallbackText(moves, undefined, 'error'), 'a busy (529: overloaded) → b busy (429: rate limited) → tried c');
    });

    it('is empty without moves, and the header names the model that answered', () => {
      assert.equal(fallbackText(undefined), '');
      assert.equal(fallbackText([]), '');
      assert.equal(answeringModel({ model: 'a' }), 'a');
      assert.equal(answeringModel({ model: 'a', answeredBy: 'b' }), 'b');
      assert.equal(answeringModel({ model: 'a', fallbacks: [move('a', 'c', 'overloaded', 529, 'overloaded')] }), 'c');
    });
  });

  describe('Continue with …', () => {
    it("runs only for the model the turn offered, on the conversation's last answer", () => {
      const turns = [question, answer()];
      assert.ok('turn' in continueCheck(turns, 'a1', 'deepseek-v3.2'));
      assert.deepEqual(continueCheck(turns, 'a1', 'gpt-4o'), { refused: 'not-offered' });
      assert.deepEqual(continueCheck(turns, 'a2', 'deepseek-v3.2'), { refused: 'no-turn' });
      assert.deepEqual(continueCheck(turns, 'u1', 'deepseek-v3.2'), { refused: 'no-turn' });
      assert.deepEqual(continueCheck([...turns, { ...question, id: 'u2' }], 'a1', 'deepseek-v3.2'), { refused: 'not-last' });
      assert.deepEqual(continueCheck([question, answer({ error: { message: 'x', kind: 'APIError' } })], 'a1', 'deepseek-v3.2'), { refused: 'not-offered' });
      assert.deepEqual(continueCheck([question, answer({ status: 'done' })], 'a1', 'deepseek-v3.2'), { refused: 'not-offered' });
    });

    it('is a message the view may send, checked like the others', () => {
      assert.ok(fromWebviewSchema().safeParse({ type: 'continue-with', turnId: 'a1', model: 'deepseek-v3.2' }).success);
      assert.ok(!fromWebviewSchema().safeParse({ type: 'continue-with', turnId: 'a1' }).success);
      assert.ok(!fromWebviewSchema().safeParse({ type: 'continue-with', turnId: 'a1', model: 'x'.repeat(201) }).success);
    });
  });

  describe("the chain picker's write", () => {
    it('keeps the pick order: kept ones first, new ones after', () => {
      assert.deepEqual(pickOrder(['b', 'c'], ['a', 'b', 'c', 'd']), ['b', 'c', 'a', 'd']);
      assert.deepEqual(pickOrder(['b', 'c'], ['c']), ['c']);
      assert.deepEqual(pickOrder([], ['d', 'a']), ['d', 'a']);
    });

    it('keeps at most 3, in pick order, and says which were left out', () => {
      const w = chainWrite({ other: ['x'] }, 'm', ['d', 'a', 'c', 'b']);
      assert.deepEqual(w.kept, ['d', 'a', 'c']);
      assert.deepEqual(w.dropped, ['b']);
      assert.deepEqual(w.chains, { other: ['x'], m: ['d', 'a', 'c'] });
    });

    it('leaves out the model itself and repeats, and keeps the other models in place', () => {
      const w = chainWrite({ m: ['z'], other: ['x'] }, 'm', ['m', 'a', 'a', ' b ']);
      assert.deepEqual(w.chains, { m: ['a', 'b'], other: ['x'] });
      assert.deepEqual(Object.keys(w.chains ?? {}), ['m', 'other']);
    });

    it("removes the model's entry on an empty pick, and the setting when nothing is left", () => {
      assert.deepEqual(chainWrite({ m: ['a'], other: ['x'] }, 'm', []).chains, { other: ['x'] });
      assert.equal(chainWrite({ m: ['a'] }, 'm', []).chains, undefined);
      assert.equal(chainWrite(undefined, 'm', []).chains, undefined);
    });
  });

  describe('the Usage view', () => {
    it('counts fallbacks per model over the days shown, the most first', () => {
      const counts = { '2025-05-01': { a: 2 }, '2025-05-02': { a: 1, b: 5 }, '2025-04-01': { c: 9 } };
      assert.deepEqual(fallbackRows(counts, ['2025-05-01', '2025-05-02', '2025-05-03']), [
        { model: 'b', total: 5, byDay: [{ day: '2025-05-02', count: 5 }] },
        {
          model: 'a',
          total: 3,
          byDay: [
            { day: '2025-05-01', count: 2 },
            { day: '2025-05-02', count: 1 },
          ],
        },
      ]);
      assert.deepEqual(fallbackRows({}, ['2025-05-01']), []);
    });
  });
});
