import { strict as assert } from 'node:assert';
import { AbortError, BadRequestError, NotFoundError, ValidationError } from '../../src/gateway';
import { CompletionCache } from '../../src/completions/core/cache';
import { cleanChatAnswer, cutPrefix, cutSuffix, withoutRepeatedSuffix } from '../../src/completions/core/context';
import { addAccepted, addRequest, dayOf, readLedger } from '../../src/runtime/core/spendLedger';
import { identifiersNear, RecentEdits, withinBudget } from '../../src/completions/core/recentEdits';
import { CompositionWatch } from '../../src/completions/core/composition';
import { holeBesideItem } from '../../src/completions/core/selectedItem';
import { AdaptiveDebounce } from '../../src/completions/core/debounce';
import { InlineCompleter, type HoleRequest } from '../../src/completions/core/completer';
import type { CompletionPath } from '../../src/completions/core/request';
import { chatRequest, fimRequest, limitLines, nextPath, prefixOnlyRequest, stopsFor, type HoleContext } from '../../src/completions/core/request';
import { tokensOf } from '../../src/runtime/core/tokens';
import { fillTheMiddle } from '../emulator/fim';
import { clientFor, useEmulator } from './helpers';

const SOURCE = Array.from({ length: 200 }, (_, i) => `export const value${i} = compute(${i}, 'item ${i}'); // line ${i}`).join('\n');

describe('inline completions: context and cleaning', () => {
  it('cuts the prefix and suffix at line boundaries within the token budget, the cursor line whole', () => {
    const cursor = SOURCE.indexOf('line 100') + 4;
    const prefix = SOURCE.slice(0, cursor);
    const suffix = SOURCE.slice(cursor);
    const p = cutPrefix(prefix, 300);
    const s = cutSuffix(suffix, 100);
    assert.ok(prefix.endsWith(p) && suffix.startsWith(s));
    assert.ok(tokensOf(p) <= 300 + 5 && tokensOf(p) > 200, `${tokensOf(p)} prefix tokens`);
    assert.ok(tokensOf(s) <= 100 + 5 && tokensOf(s) > 50, `${tokensOf(s)} suffix tokens`);
    assert.ok(p.startsWith('export const'), 'the prefix starts at a line start');
    assert.ok(s.endsWith('// line ' + s.split('// line ').pop()) && !s.endsWith('\n'), 'the suffix ends at a line end');
    assert.equal(cutPrefix('abc', 0), 'abc', 'the cursor line is kept even over the budget');
    assert.equal(cutPrefix(prefix, 1_000_000), prefix);
  });

  it("cleans a chat model's answer down to the hole", () => {
    const prefix = 'function add(a, b) {\n  return a';
    const suffix = '\n}\n';
    assert.equal(cleanChatAnswer('```js\n + b;\n```', prefix, suffix), ' + b;');
    assert.equal(cleanChatAnswer('  return a + b;', prefix, suffix), ' + b;', 'the repeated line start is dropped');
    assert.equal(cleanChatAnswer(' + b;\n}', prefix, suffix), ' + b;', 'the repeated code after the cursor is dropped');
    assert.equal(cleanChatAnswer('Here you go:\n```ts\n + b;\n}\n```\nDone.', prefix, suffix), ' + b;');
    assert.equal(cleanChatAnswer('<hole> + b;</hole>', prefix, suffix), ' + b;');
  });

  it('cuts an answer given without the suffix where it repeats the code after the cursor', () => {
    const suffix = '\n  return total;\n}\n';
    assert.equal(withoutRepeatedSuffix(' + b;\n  return total;\n}', suffix), ' + b;');
    assert.equal(withoutRepeatedSuffix(' + b;\n  return tot', suffix), ' + b;', 'a repeated start of the suffix at the end');
    assert.equal(withoutRepeatedSuffix(' + b;', suffix), ' + b;', 'nothing repeated: unchanged');
    assert.equal(withoutRepeatedSuffix('\n  // TODO: implement f\n}', '\n}\n'), '\n  // TODO: implement f', 'a closing line the suffix already has');
    assert.equal(withoutRepeatedSuffix('a)', ''), 'a)');
  });

  it('context from other files: recent edits around the last change, identifiers near the cursor, a token budget', () => {
    const recent = new RecentEdits({ files: 2, radius: 1 });
    const file = (n: number) => Array.from({ length: 10 }, (_, i) => `line ${n}.${i}`).join('\n');
    recent.record('a', 'src/a.ts', 5, file(1));
    recent.record('b', 'src/b.ts', 0, file(2));
    recent.record('c', 'src/c.ts', 9, file(3));
    assert.deepEqual(
      recent.snippets('x'),
      [
        { path: 'src/c.ts', text: 'line 3.8\nline 3.9' },
        { path: 'src/b.ts', text: 'line 2.0\nline 2.1' },
      ],
      'newest first, two files kept, the lines around each edit',
    );
    assert.deepEqual(
      recent.snippets('c').map((s) => s.path),
      ['src/b.ts'],
      'never the file being completed',
    );
    recent.record('b', 'src/b.ts', 4, file(2));
    assert.equal(recent.snippets('x')[0].text, 'line 2.3\nline 2.4\nline 2.5', 'a file edited again moves first, its new place');
    recent.forget('b');
    assert.deepEqual(
      recent.snippets('x').map((s) => s.path),
      ['src/c.ts'],
    );

    assert.equal(
      identifiersNear('import x from "y";\nconst total = computeTotal(items, taxRate);\nreturn formatMoney(tot'),
      'total computeTotal items taxRate formatMoney tot',
      'keywords and short words left out',
    );
    const long = [
      { path: 'a', text: Array.from({ length: 100 }, (_, i) => `const value${i} = ${i};`).join('\n') },
      { path: 'b', text: 'const b = 1;' },
    ];
    const cut = withinBudget(long, 50);
    assert.equal(cut.length, 1, 'the budget is spent on the first snippet');
    assert.ok(cut[0].text.split('\n').length < 100 && cut[0].text.split('\n').every((l) => /^const value\d+ = \d+;$/.test(l)), 'whole lines');
    assert.ok(tokensOf(cut[0].text) <= 50);
  });

  it('tells an input method composing a word from typing, by the changes it makes', () => {
    const w = new CompositionWatch();
    // Typing "ab": two inserts.
    w.record('d', 1, [{ rangeOffset: 10, rangeLength: 0, text: 'a' }]);
    w.record('d', 2, [{ rangeOffset: 11, rangeLength: 0, text: 'b' }]);
    assert.equal(w.composing('d', 2), false);
    // A pinyin IME: "n" inserted, then replaced by "ni", "nih"…
    w.record('d', 3, [{ rangeOffset: 12, rangeLength: 0, text: 'n' }]);
    assert.equal(w.composing('d', 3), false, 'the first letter looks like typing');
    w.record('d', 4, [{ rangeOffset: 12, rangeLength: 1, text: 'ni' }]);
    w.record('d', 5, [{ rangeOffset: 12, rangeLength: 2, text: 'nih' }]);
    assert.equal(w.composing('d', 5), true);
    assert.equal(w.composing('d', 6), false, 'only for the version of that change');
    w.record('d', 6, [{ rangeOffset: 15, rangeLength: 0, text: ' ' }]);
    assert.equal(w.composing('d', 6), false, 'typing on');
    // Accepting a word from the suggest list replaces the typed word, not the last insert.
    w.record('d', 7, [{ rangeOffset: 16, rangeLength: 0, text: 'g' }]);
    w.record('d', 8, [{ rangeOffset: 17, rangeLength: 0, text: 'r' }]);
    w.record('d', 9, [{ rangeOffset: 16, rangeLength: 2, text: 'greet' }]);
    assert.equal(w.composing('d', 9), false);
    // Several cursors typing at once: not composing.
    w.record('d', 10, [
      { rangeOffset: 30, rangeLength: 0, text: 'x' },
      { rangeOffset: 40, rangeLength: 0, text: 'x' },
    ]);
    w.record('d', 11, [{ rangeOffset: 30, rangeLength: 1, text: 'xy' }]);
    assert.equal(w.composing('d', 11), false);
    w.forget('d');
    assert.equal(w.composing('d', 11), false);
  });

  it('the spend ledger: per local day and model, accepted characters, 31 days kept, a damaged record read as empty', () => {
    const day = (d: number) => new Date(2026, 0, d, 12).getTime();
    let ledger = readLedger(undefined);
    ledger = addRequest(ledger, day(1), 'codestral', 0.001, 120);
    ledger = addRequest(ledger, day(1), 'codestral', 0.002, 80);
    ledger = addRequest(ledger, day(1), 'qwen', Number.NaN, 10);
    ledger = addAccepted(ledger, day(1), 42);
    const first = dayOf(ledger, day(1));
    assert.equal(first.requests, 3);
    assert.ok(Math.abs(first.dollars - 0.003) < 1e-12);
    assert.equal(first.byModel.codestral.requests, 2);
    assert.ok(Math.abs(first.byModel.codestral.dollars - 0.003) < 1e-12);
    assert.deepEqual(first.byModel.qwen, { dollars: 0, requests: 1 }, 'an unknown cost counts as 0 dollars, the request still counts');
    assert.equal(first.accepted, 42);
    assert.equal(first.tokens, 210);
    assert.equal(dayOf(ledger, day(2)).requests, 0, 'a new day starts at zero');
    for (let d = 2; d <= 40; d++) ledger = addRequest(ledger, day(d), 'codestral', 0.001, 1);
    assert.equal(Object.keys(ledger).length, 31);
    assert.equal(dayOf(ledger, day(1)).requests, 0, 'the oldest days are dropped');
    assert.deepEqual(readLedger({ '2026-01-01': { dollars: 'lots' } }), {});
  });

  it('the next path after a refusal: suffix refused → prompt alone; a chat model → chat; anything else is an error', () => {
    const bad = new BadRequestError(400, "Unsupported parameter: 'suffix' is not supported with this model.", 'The gateway refused the request.');
    const chatOnly = new NotFoundError(
      404,
      'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?',
      'Not found.',
    );
    assert.equal(nextPath('fim', bad), 'prompt');
    assert.equal(nextPath('fim', chatOnly), 'chat');
    assert.equal(nextPath('prompt', chatOnly), 'chat');
    assert.equal(nextPath('chat', chatOnly), undefined);
    assert.equal(nextPath('prompt', bad), undefined, 'the prompt path sends no suffix: a refusal naming it is something else');
    assert.equal(nextPath('fim', new BadRequestError(400, 'max_tokens is too large', 'max_tokens is too large')), undefined);
    assert.equal(nextPath('fim', new NotFoundError(404, 'model not found', 'model not found')), undefined);
  });

  it("the emulator's completer finishes the statement or opens the block, respecting the suffix", () => {
    const code = 'const greeting = makeGreeting(name);\nfunction makeGreeting(who) {\n  return who;\n}\n';
    assert.equal(fillTheMiddle(`${code}console.log(makeG`, ''), 'reeting);');
    assert.equal(fillTheMiddle(`${code}console.log(makeG`, ');\n'), 'reeting', 'the suffix already closes the call');
    assert.equal(fillTheMiddle('function greet(name) {', '\n'), '\n  // TODO: implement greet\n}');
    assert.equal(fillTheMiddle('function greet(name) {', '\n}\n'), '\n  // TODO: implement greet', 'the suffix already closes the block');
    assert.equal(fillTheMiddle('', ''), '');
  });
});

describe('inline completions: cache, debounce, requests', () => {
  it('reuses a suggestion while the user types through it, and forgets the least recently used', () => {
    const cache = new CompletionCache(3);
    cache.set('console.log(sumV', '\n', 'alues);');
    assert.equal(cache.get('console.log(sumV', '\n'), 'alues);');
    assert.equal(cache.get('console.log(sumVal', '\n'), 'ues);', 'typed "al": the rest');
    assert.equal(cache.get('console.log(sumValues);', '\n'), undefined, 'typed it all: nothing left to show');
    assert.equal(cache.get('console.log(sumVx', '\n'), undefined, 'typed something else');
    assert.equal(cache.get('console.log(sumVal', '\nother'), undefined, 'another suffix');
    cache.set('a', '', '1');
    cache.set('b', '', '2');
    cache.get('console.log(sumV', '\n');
    cache.set('c', '', '3');
    assert.equal(cache.size, 3);
    assert.equal(cache.get('a', ''), undefined, 'the least recently used went');
    assert.equal(cache.get('console.log(sumV', '\n'), 'alues);', 'a recent hit stays');
  });

  it('waits about the model latency, bounded, 150 ms before anything is known', () => {
    const d = new AdaptiveDebounce();
    assert.equal(d.delayMs, 150);
    for (let i = 0; i < 10; i++) d.record(300);
    assert.equal(d.delayMs, 300);
    for (let i = 0; i < 10; i++) d.record(20);
    assert.equal(d.delayMs, 100, 'never under 100 ms');
    for (let i = 0; i < 10; i++) d.record(5_000);
    assert.equal(d.delayMs, 600, 'never over 600 ms');
    d.record(Number.NaN);
    assert.equal(d.delayMs, 600);
  });

  it("no sooner than the person's pause: twice their median gap between keys", () => {
    const d = new AdaptiveDebounce();
    for (let i = 0; i < 10; i++) d.record(120);
    let t = 0;
    for (const gap of [0, 150, 170, 160, 2500, 180, 150, 160]) d.keystroke((t += gap));
    assert.equal(d.delayMs, 320, 'median gap 160 ms (the 2.5 s pause is not a gap within a burst)');
    for (let i = 0; i < 30; i++) d.keystroke((t += 60));
    assert.equal(d.delayMs, 120, 'a fast typist: the model latency decides');
  });

  it('builds FIM, prefix-only and chat requests that stop early', () => {
    const ctx: HoleContext = {
      prefix: 'const x = f(',
      suffix: ');\nnext();',
      language: 'typescript',
      path: 'src/a.ts',
      snippets: [{ path: 'src/b.ts', text: 'export function f(n: number) {}' }],
      maxTokens: 128,
    };
    assert.deepEqual(stopsFor(ctx), ['\n'], 'mid-line: the line only');
    assert.deepEqual(stopsFor({ suffix: '\n}' }), ['\n\n\n']);
    const fim = fimRequest('codestral-emu', ctx);
    assert.equal(fim.suffix, ctx.suffix);
    assert.ok(
      typeof fim.prompt === 'string' &&
        fim.prompt.endsWith(ctx.prefix) &&
        fim.prompt.includes('// From src/b.ts:') &&
        fim.prompt.includes('// src/a.ts (typescript)'),
    );
    assert.equal('suffix' in prefixOnlyRequest('m', ctx), false);
    const chat = chatRequest('gpt-4o-mini', ctx);
    assert.match(chat.messages[0].content as string, /only the code that replaces <HOLE>.*Complete only the current line/);
    assert.match(chat.messages[1].content as string, /const x = f\(<HOLE>\);\nnext\(\);/);
    assert.equal(limitLines('a\nb\nc\nd', 2), 'a\nb');
  });
});

describe('inline completions: /v1/completions against the emulator', function () {
  this.timeout(30_000);
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());
  const prefix = 'const total = sumValues(values);\nfunction sumValues(list) {\n  return list.length;\n}\nconsole.log(sumV';

  it('fill-in-the-middle with prompt and suffix, whole and streamed, stop sequences and a token limit', async () => {
    const { client } = clientFor(ctx.emu);
    const done = await client.completions.create({ model: 'codestral-emu', prompt: prefix, suffix: '\n', max_tokens: 64, stop: ['\n\n'] });
    assert.equal(done.choices[0].text, 'alues);');
    assert.equal(done.choices[0].finish_reason, 'stop');
    assert.ok((done.usage?.prompt_tokens ?? 0) > 0);
    const stream = client.completions.stream({ model: 'codestral-emu', prompt: 'function greet(name) {', suffix: '\n', max_tokens: 64 });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    assert.equal(text, '\n  // TODO: implement greet\n}');
    assert.equal((await stream.finalCompletion()).choices[0].text, text);
    const stopped = await client.completions.create({ model: 'codestral-emu', prompt: 'function greet(name) {', suffix: '\n', stop: ['\n}'] });
    assert.equal(stopped.choices[0].text, '\n  // TODO: implement greet', 'cut at the stop sequence');
    const short = await client.completions.create({ model: 'codestral-emu', prompt: 'function greet(name) {', suffix: '\n', max_tokens: 2 });
    assert.equal(short.choices[0].finish_reason, 'length');
  });

  it('a model without FIM refuses suffix (400 naming it) and completes without; a chat model is not served here (404)', async () => {
    const { client } = clientFor(ctx.emu);
    const refused = await client.completions.create({ model: 'gpt-3.5-turbo-instruct-emu', prompt: prefix, suffix: '\n' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(refused instanceof BadRequestError && /suffix/.test(refused.message), String(refused));
    const plain = await client.completions.create({ model: 'gpt-3.5-turbo-instruct-emu', prompt: prefix });
    assert.equal(plain.choices[0].text, 'alues);');
    const chat = await client.completions.create({ model: 'gpt-4o-mini', prompt: prefix }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(chat instanceof NotFoundError && /chat model/.test(chat.message), String(chat));
    assert.throws(() => client.completions.stream({ model: 'codestral-emu', prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }), ValidationError);
  });

  it('a chat model fills the hole through the chat prompt; its answer is cleaned to the hole', async () => {
    const { client } = clientFor(ctx.emu);
    const hole: HoleContext = { prefix, suffix: '\n', language: 'javascript', path: 'src/app.js', snippets: [], maxTokens: 64 };
    const reply = await client.chat.completions.create(chatRequest('gpt-4o-mini', hole));
    const raw = String(reply.choices[0].message.content);
    assert.match(raw, /^```/, 'the chat model answers in a fence, repeating the line');
    assert.equal(cleanChatAnswer(raw, hole.prefix, hole.suffix), 'alues);');
  });

  describe("the completer (the provider's core, driven as VS Code drives it)", () => {
    const code = "import { greet } from './greet';\n\nexport function welcome(name: string): string {\n  return gre";
    const after = '\n}\n';
    const hole = (o: Partial<HoleRequest> = {}): HoleRequest => ({
      before: code,
      after,
      language: 'typescript',
      path: 'src/w.ts',
      model: 'codestral-emu',
      maxPrefixTokens: 1500,
      maxSuffixTokens: 500,
      maxLines: 12,
      automatic: true,
      ...o,
    });
    function completer() {
      const { client } = clientFor(ctx.emu);
      const learned = new Map<string, CompletionPath>();
      const answered: number[] = [];
      const c = new InlineCompleter({
        client: () => client,
        learnedPath: (m) => learned.get(m),
        remember: (m, p) => void learned.set(m, p),
        answered: (_m, t) => void answered.push(t.prompt),
      });
      return { c, learned, answered };
    }

    it('answers after the pause, then serves typing through the suggestion from the cache', async () => {
      const { c, answered } = completer();
      const before = ctx.emu.requestsTo('/v1/completions').length;
      const first = await c.complete(hole(), new AbortController().signal);
      assert.equal(first.kind, 'answer');
      assert.equal(first.kind === 'answer' && first.text, 'et;');
      assert.ok(first.kind === 'answer' && first.waitedMs >= 140, 'waited for the pause (150 ms before any latency is known)');
      const typed = await c.complete(hole({ before: code + 'e' }), new AbortController().signal);
      assert.deepEqual(typed, { kind: 'cache', text: 't;' });
      assert.equal(ctx.emu.requestsTo('/v1/completions').length - before, 1, 'one request for both');
      assert.deepEqual(c.stats, {
        requests: 1,
        cancelled: 0,
        cacheHits: 1,
        failures: 0,
        promptTokens: answered[0],
        completionTokens: c.stats.completionTokens,
      });
      assert.ok(answered[0] > 0);
    });

    it('a key during the pause sends nothing; a key during the request aborts it at the gateway', async () => {
      const { c } = completer();
      const before = ctx.emu.requestsTo('/v1/completions').length;
      const typing = new AbortController();
      setTimeout(() => typing.abort(), 30);
      assert.deepEqual(await c.complete(hole(), typing.signal), { kind: 'cancelled', sent: false });
      assert.equal(ctx.emu.requestsTo('/v1/completions').length, before, 'nothing sent');
      // Turned off (or snoozed, or capped) during the pause: nothing sent either.
      assert.deepEqual(await c.complete(hole({ stillWanted: () => false }), new AbortController().signal), { kind: 'cancelled', sent: false });
      assert.equal(ctx.emu.requestsTo('/v1/completions').length, before);
      ctx.emu.inject({ path: '/v1/completions', fault: { kind: 'slowFirstByte', ms: 1000 } });
      const slow = new AbortController();
      const pending = c.complete(hole({ automatic: false }), slow.signal);
      for (let i = 0; i < 100 && ctx.emu.requestsTo('/v1/completions').length === before; i++) await new Promise((r) => setTimeout(r, 10));
      slow.abort();
      assert.deepEqual(await pending, { kind: 'cancelled', sent: true });
      const last = ctx.emu.requestsTo('/v1/completions').at(-1)!;
      for (let i = 0; i < 50 && !last.aborted; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(last.aborted, true);
      assert.equal(c.stats.cancelled, 1);
    });

    it('learns the path: a refused suffix → prompt alone; a chat model → chat prompt; an override is never changed', async () => {
      const { c, learned } = completer();
      const instruct = await c.complete(hole({ model: 'gpt-3.5-turbo-instruct-emu', automatic: false }), new AbortController().signal);
      assert.equal(instruct.kind === 'answer' && instruct.path, 'prompt');
      assert.equal(learned.get('gpt-3.5-turbo-instruct-emu'), 'prompt');
      c.cache.clear(); // as the provider does when the model setting changes
      const chat = await c.complete(hole({ model: 'gpt-4o-mini', automatic: false }), new AbortController().signal);
      assert.equal(chat.kind === 'answer' && chat.text, 'et;');
      assert.equal(learned.get('gpt-4o-mini'), 'chat');
      const fixed = await c.complete(hole({ model: 'gpt-4o', automatic: false, pathOverride: 'fim', before: code + 'x' }), new AbortController().signal);
      assert.equal(fixed.kind, 'failed', 'the override is kept: the error is shown, not worked around');
      assert.equal(learned.has('gpt-4o'), false);
    });
  });

  it('a cancelled request is recorded as aborted by the emulator', async () => {
    ctx.emu.inject({ path: '/v1/completions', fault: { kind: 'slowFirstByte', ms: 400 } });
    const { client } = clientFor(ctx.emu);
    const controller = new AbortController();
    const pending = client.completions.create({ model: 'codestral-emu', prompt: prefix, suffix: '\n' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, AbortError);
    const last = ctx.emu.requestsTo('/v1/completions').at(-1)!;
    for (let i = 0; i < 50 && !last.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(last.aborted, true);
  });
});

describe('ghost text beside the selected IntelliSense item', () => {
  it('asks as if the item were accepted and replaces its range with the item and the continuation', () => {
    const all = 'return 2 * (wid\n}\n';
    const cursor = all.indexOf('\n');
    const hole = holeBesideItem(all, cursor, { from: cursor - 3, to: cursor, text: 'width' });
    assert.ok(hole);
    assert.equal(hole.before, 'return 2 * (width');
    assert.equal(hole.after, '\n}\n');
    assert.equal(hole.insert(');'), 'width);');
    // A fuzzy match (the item does not start with what was typed) is still its text in the prefix.
    assert.equal(holeBesideItem(all, cursor, { from: cursor - 3, to: cursor, text: 'innerWidth' })?.before, 'return 2 * (innerWidth');
    // An item replacing a word that goes on after the cursor: the suffix starts after it.
    assert.equal(holeBesideItem('a.wi|dth + 1'.replace('|', ''), 4, { from: 2, to: 7, text: 'width' })?.after, ' + 1');
  });

  it('nothing for an item without text or a range that does not reach the cursor', () => {
    assert.equal(holeBesideItem('abc', 3, { from: 0, to: 3, text: '' }), undefined);
    assert.equal(holeBesideItem('abc def', 7, { from: 0, to: 3, text: 'abc' }), undefined, 'ends before the cursor: what lies between would be lost');
    assert.equal(holeBesideItem('abc', 1, { from: 2, to: 3, text: 'cd' }), undefined, 'starts after the cursor');
  });
});
