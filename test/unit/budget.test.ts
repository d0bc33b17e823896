import { strict as assert } from 'node:assert';
import {
  applyCondensation,
  condenseCut,
  contextWindowFor,
  fitToWindow,
  manualCut,
  promptLimit,
  SUMMARY_HEADING,
  turnsToSummarise,
  windowFromError,
  type Fitted,
} from '../../src/runtime/core/budget';
import { activeCondensation, emptyUsage, type AssistantTurn, type Condensation, type Turn, type UserTurn } from '../../src/common/conversation';
import { familyFactor, scaleFromUsage, tokensOf } from '../../src/runtime/core/tokens';
import { toMessagesRequest } from '../../src/runtime/core/wire';

const user = (id: string, text: string): UserTurn => ({ id, role: 'user', text, images: [], context: [], at: 0 });
const answer = (id: string, results: string[], text = ''): AssistantTurn => ({
  id,
  role: 'assistant',
  model: 'm',
  format: 'chat',
  status: 'done',
  usage: emptyUsage(),
  at: 0,
  steps: results.length
    ? results.map((r, i) => ({ text, toolCalls: [{ id: `${id}c${i}`, name: 'read_file', args: `{"path":"f${i}.ts"}`, status: 'done' as const, result: r }] }))
    : text
      ? [{ text, toolCalls: [] }]
      : [],
});
/** Text like a file a tool reads: about 14 tokens a line. */
const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${from + i}: notes about the gateway, the cache and the budget`).join('\n');
const condensation = (through: string, throughSteps?: number): Condensation => ({
  id: 'k1',
  summary: '## Requests\n- read the files',
  throughTurnId: through,
  ...(throughSteps !== undefined ? { throughSteps } : {}),
  tokensBefore: 5_000,
  tokensAfter: 10,
  model: 'm',
  manual: false,
  at: 0,
});
/** What the budget stubbed is remembered on the stored calls, as the engine does. */
function keep(turns: Turn[], f: Fitted): void {
  for (const t of turns) if (t.role === 'assistant') for (const s of t.steps) for (const c of s.toolCalls) if (f.newlyStubbed.includes(c.id)) c.stubbed = true;
}

describe('fitting a conversation into the context window', () => {
  it('leaves a conversation that fits exactly as it is', () => {
    const turns: Turn[] = [user('u1', 'hello'), answer('a1', ['short result'])];
    const { turns: sent, use, newlyStubbed, wantsCondense } = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    assert.deepEqual(sent, turns);
    assert.deepEqual([use.cut, use.stubbed, use.omittedTurns, newlyStubbed.length, wantsCondense], [0, 0, 0, 0, false]);
    assert.equal(use.used, use.parts.system + use.parts.tools + use.parts.history + use.parts.toolResults + use.parts.images);
  });

  it('cuts a result larger than a quarter of the room, telling the model how to read the rest', () => {
    const big = lines(5_000);
    const { turns: sent, use } = fitToWindow({ system: '', toolsText: '', turns: [user('u', 'read it'), answer('a', [big])], window: 32_000 });
    const result = (sent[1] as AssistantTurn).steps[0].toolCalls[0].result!;
    assert.ok(result.length < big.length);
    assert.match(result, /more characters cut to fit the context window\. Read the rest in parts \(read_file with start_line and end_line/);
    assert.equal(use.cut, 1);
    assert.ok(use.used <= promptLimit(32_000) * 0.3, `${use.used}`);
  });

  it('over the limit, stubs older results oldest first down to half the limit at once, keeping the newest step whole', () => {
    const r = lines(300); // ~4,200 tokens each
    const turns: Turn[] = [user('u', 'go'), answer('a', [r, r, r, r, r, r, r])];
    const f = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    const results = (f.turns[1] as AssistantTurn).steps.map((s) => s.toolCalls[0].result!);
    assert.match(results[0], /^\[Earlier result of read_file\(\{"path":"f0\.ts"\}\) left out to fit the context window \([\d,]+ characters\)/);
    assert.equal(results.at(-1), r, 'the newest result stays whole');
    assert.ok(f.use.used <= promptLimit(32_000) / 2, `down to the low-water mark in one go (${f.use.used})`);
    assert.deepEqual(f.newlyStubbed.slice(0, 4), ['ac0', 'ac1', 'ac2', 'ac3']);
    assert.ok(!f.newlyStubbed.includes('ac6'));
    assert.equal(f.wantsCondense, false, 'stubs were enough');
    assert.equal((turns[1] as AssistantTurn).steps[0].toolCalls[0].result, r, 'the stored conversation keeps everything');
  });

  it('keeps what it stubbed: the next step of the loop sends the same prefix (the cache holds)', () => {
    const r = lines(300);
    const a = answer('a', [r, r, r, r, r, r, r]);
    const turns: Turn[] = [user('u', 'go'), a];
    const first = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    keep(turns, first);
    a.steps.push({ text: '', toolCalls: [{ id: 'next', name: 'read_file', args: '{"path":"g.ts"}', status: 'done', result: lines(100) }] });
    const second = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    assert.deepEqual(second.newlyStubbed, [], 'under the limit again: nothing new stubbed');
    const before = toMessagesRequest('sys', first.turns, [], '5m').messages;
    const after = toMessagesRequest('sys', second.turns, [], '5m').messages;
    const strip = (m: unknown) => JSON.stringify(m).replace(/,"cache_control":\{[^}]*\}/g, '');
    assert.equal(strip(after.slice(0, before.length - 1)), strip(before.slice(0, -1)), 'every message before the newest is byte for byte the same');
  });

  it('asks for condensing when stubs cannot get down far (long questions and answers, few results)', () => {
    const long = lines(400); // ~5,600 tokens
    const turns: Turn[] = [
      user('u1', long),
      answer('a1', [], long),
      user('u2', long),
      answer('a2', [], long),
      user('u3', long),
      answer('a3', ['r']),
      user('u4', 'the newest question'),
    ];
    const f = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 });
    assert.equal(f.wantsCondense, true);
  });

  it('asks for condensing once many results are stubs (they keep no facts; a summary does)', () => {
    const r = lines(100); // ~1,400 tokens
    const turns: Turn[] = [
      user('u', 'go'),
      answer(
        'a',
        Array.from({ length: 24 }, () => r),
      ),
    ];
    const f = fitToWindow({ system: 'sys', toolsText: '', turns, window: 32_000 });
    assert.ok(f.use.stubbed >= 10, `${f.use.stubbed} stubs`);
    assert.equal(f.wantsCondense, true);
  });

  it('leaves out the oldest exchanges as a last resort, and says so in the first question', () => {
    const long = lines(700); // ~10,000 tokens a question
    const turns: Turn[] = [
      user('u1', long),
      answer('a1', []),
      user('u2', long),
      answer('a2', []),
      user('u3', long),
      answer('a3', []),
      user('u4', 'the newest question'),
      answer('a4', []),
    ];
    const { turns: sent, use } = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 });
    assert.ok(use.omittedTurns >= 2);
    assert.equal(sent.at(-2)?.role === 'user' && (sent.at(-2) as UserTurn).text.endsWith('the newest question'), true);
    assert.match((sent[0] as UserTurn).text, /^\[\d earlier messages of this conversation were left out to fit the context window\.\]/);
  });

  it('aims well under the window after the gateway refused the prompt as too long', () => {
    const r = lines(400);
    const turns: Turn[] = [user('u', 'go'), answer('a', [r, r, r])];
    const normal = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 }).use;
    const aggressive = fitToWindow({ system: '', toolsText: '', turns, window: 32_000, aggressive: true }).use;
    assert.ok(aggressive.used < normal.used);
    assert.ok(aggressive.used <= promptLimit(32_000, undefined, true));
  });

  it('scales its estimates by what the gateway counted', () => {
    const turns: Turn[] = [user('u', lines(100))];
    const plain = fitToWindow({ system: '', toolsText: '', turns, window: 32_000 }).use.used;
    const scaled = fitToWindow({ system: '', toolsText: '', turns, window: 32_000, scale: 1.5 }).use.used;
    assert.ok(Math.abs(scaled - plain * 1.5) <= 2, `${plain} × 1.5 ≈ ${scaled}`);
  });

  it('knows the windows of the common families, with a conservative default', () => {
    assert.equal(contextWindowFor('claude-sonnet-4-5'), 200_000);
    assert.equal(contextWindowFor('gpt-4o-mini'), 128_000);
    assert.equal(contextWindowFor('my-local-model'), 32_000);
    assert.equal(contextWindowFor('gpt-4o-mini', 16_000), 16_000, 'the settings win');
  });

  it("reads the window from the gateways' refusals (OpenAI and Anthropic wording)", () => {
    assert.equal(windowFromError("This model's maximum context length is 32000 tokens. However, your messages resulted in 40000 tokens."), 32_000);
    assert.equal(windowFromError('prompt is too long: 51798 tokens > 200000 maximum'), 200_000);
    assert.equal(windowFromError('something else went wrong'), undefined);
  });
});

describe('condensed turns in what is sent', () => {
  const turns: Turn[] = [user('u1', 'first question'), answer('a1', ['r1', 'r2']), user('u2', 'second question'), answer('a2', ['r3', 'r4', 'r5'])];

  it('a summary through an answer replaces the turns up to it; the rest follows unchanged', () => {
    const { turns: sent, covered } = applyCondensation(turns, condensation('a1'));
    assert.equal(covered, 2);
    assert.equal(sent.length, 3);
    assert.ok(sent[0].role === 'user' && sent[0].pinned && sent[0].text.startsWith(SUMMARY_HEADING));
    assert.deepEqual(sent.slice(1), turns.slice(2));
  });

  it('a summary that ends inside an answer sends its question again, then the steps it does not cover', () => {
    const { turns: sent } = applyCondensation(turns, condensation('a2', 2));
    assert.deepEqual(
      sent.map((t) => t.id),
      ['k1-summary', 'u2', 'a2'],
    );
    assert.deepEqual(
      (sent[2] as AssistantTurn).steps.map((s) => s.toolCalls[0].result),
      ['r5'],
    );
  });

  it('a summary whose turn is gone (edited away) no longer applies', () => {
    assert.deepEqual(applyCondensation(turns, condensation('gone')).turns, turns);
  });

  it("the summary takes the tools' cache breakpoint: it is the new stable start, still four breakpoints at most", () => {
    const sent = applyCondensation(turns, condensation('a1')).turns;
    const req = toMessagesRequest(
      'sys',
      sent,
      [{ name: 'read_file', description: 'd', parameters: { type: 'object', properties: {}, required: [] }, kind: 'read' }],
      '5m',
    );
    const marked = JSON.stringify(req).match(/cache_control/g) ?? [];
    assert.ok(marked.length <= 4, `${marked.length} breakpoints`);
    assert.equal('cache_control' in req.tools![0], false);
    const first = req.messages[0].content as { type: string; text?: string; cache_control?: unknown }[];
    assert.ok(first[0].text?.startsWith(SUMMARY_HEADING) && first[0].cache_control, 'the summary block carries a breakpoint');
  });

  it('an automatic cut keeps about a quarter of the limit verbatim and never the newest step', () => {
    const r = lines(300); // ~4,200 tokens
    const long: Turn[] = [user('u1', 'go'), answer('a1', [r, r, r, r, r, r, r])];
    const cut = condenseCut(long, promptLimit(32_000));
    assert.deepEqual(cut, { throughTurnId: 'a1', throughSteps: 5 }, 'the two newest steps (about 8k of a 25.6k limit) stay');
    const small: Turn[] = [user('u1', 'go'), answer('a1', ['x'])];
    assert.equal(condenseCut(small, promptLimit(32_000)), undefined, 'nothing worth condensing');
    assert.equal(condenseCut(long, promptLimit(32_000), condensation('a1', 5)), undefined, 'already condensed that far');
  });

  it('a summary whose last turn was retried away gives way to the newest one still standing', () => {
    const older = { ...condensation('a1'), id: 'k0' };
    const newer = { ...condensation('gone'), id: 'k2' };
    assert.equal(activeCondensation({ turns, condensations: [older, newer] })?.id, 'k0');
    assert.equal(activeCondensation({ turns, condensations: [] }), undefined);
  });

  it('Condense by hand covers all but the newest exchange, or the only one', () => {
    assert.deepEqual(manualCut(turns), { throughTurnId: 'a1' });
    assert.deepEqual(manualCut(turns.slice(0, 2)), { throughTurnId: 'a1' });
    assert.equal(manualCut(turns, condensation('a1')), undefined, 'nothing new to condense');
  });

  it('the summariser reads only what the previous summary does not cover', () => {
    const next = turnsToSummarise(turns, { throughTurnId: 'a2', throughSteps: 2 }, condensation('a1'));
    assert.deepEqual(
      next.map((t) => t.id),
      ['u2', 'a2'],
    );
    assert.equal((next[1] as AssistantTurn).steps.length, 2);
    const after = turnsToSummarise(turns, { throughTurnId: 'a2' }, condensation('a2', 2));
    assert.deepEqual(
      (after[0] as AssistantTurn).steps.map((s) => s.toolCalls[0].result),
      ['r5'],
    );
  });
});

describe('token estimates', () => {
  it('counts CJK text far above four characters a token (where a plain estimate would overflow the window)', () => {
    const cjk = '模型网关把许多厂商的模型放在几个接口后面。'.repeat(20);
    assert.ok(tokensOf(cjk) > cjk.length / 2, `${tokensOf(cjk)} tokens for ${cjk.length} characters`);
    const code = 'export const value = computeTotal(items, { taxRate: 0.2 });\n'.repeat(20);
    assert.ok(Math.abs(tokensOf(code) - code.length / 4) / (code.length / 4) < 0.35, 'code stays near four characters a token');
  });

  it("learns a factor from the gateway's usage, blended and kept within 0.5–2", () => {
    assert.equal(scaleFromUsage(1, 1000, 1200), 1.14);
    assert.equal(scaleFromUsage(1, 1000, 100_000), 1.7, 'a wild report is clamped to 2 before blending');
    assert.equal(scaleFromUsage(1.1, 0, 500), 1.1, 'nothing to learn from');
    assert.equal(familyFactor('claude-sonnet-4-5'), 1.2);
    assert.equal(familyFactor('gpt-4o-mini'), 1);
  });
});
