import { strict as assert } from 'node:assert';
import { applyCondensation, manualCut } from '../../src/runtime/core/budget';
import { condense } from '../../src/runtime/core/condense';
import { toResponsesInput } from '../../src/runtime/core/wire';
import { emptyUsage, type AssistantTurn, type Turn, type UserTurn } from '../../src/common/conversation';
import { BadRequestError } from '../../src/gateway';
import { clientFor, useEmulator } from './helpers';

const MODEL = 'gpt-5-codex-emu';
const user = (id: string, text: string): UserTurn => ({ id, role: 'user', text, images: [], context: [], at: 0 });
const answer = (id: string, result: string, text: string): AssistantTurn => ({
  id,
  role: 'assistant',
  model: MODEL,
  format: 'responses',
  status: 'done',
  usage: emptyUsage(),
  at: 0,
  steps: [
    { text: '', toolCalls: [{ id: `${id}c`, name: 'read_file', args: '{"path":"src/a.ts"}', status: 'done', result }] },
    { text, toolCalls: [] },
  ],
});
const fileText = Array.from({ length: 200 }, (_, i) => `line ${i}: export const value${i} = ${i};`).join('\n');
const conversation = (): Turn[] => [
  user('u1', 'Read src/a.ts and tell me what it exports.'),
  answer('a1', fileText, 'It exports value0 to value199.'),
  user('u2', 'Which is the largest?'),
  answer('a2', fileText, 'value199.'),
  user('u3', 'Thanks. Now what?'),
];

/**
 * Condensing a Responses model's conversation by the gateway's `/v1/responses/compact` (new-api
 * relays OpenAI's), against the emulator: its output goes in place of the summary for the same
 * model, the text excerpt for any other; a gateway without the route gets the model's summary.
 */
describe("condensing by the gateway's compaction (Responses models)", () => {
  const ctx = useEmulator();
  afterEach(() => (ctx.emu.offersCompaction = true));

  it('compacts on the server (no summary asked of the model), and the next request sends the compaction, which the model accepts', async () => {
    const { client } = clientFor(ctx.emu);
    const turns = conversation();
    const noRoute: string[] = [];
    const [compacts, responses] = [ctx.emu.requestsTo('/v1/responses/compact').length, ctx.emu.requestsTo('/v1/responses').length];
    const { condensation, usage } = await condense({
      client,
      model: MODEL,
      format: 'responses',
      turns,
      cut: manualCut(turns)!,
      window: 400_000,
      manual: true,
      serverCompaction: { onNoRoute: () => noRoute.push('404') },
    });
    assert.equal(ctx.emu.requestsTo('/v1/responses/compact').length - compacts, 1);
    assert.equal(ctx.emu.requestsTo('/v1/responses').length - responses, 0, 'no summary request');
    assert.deepEqual(noRoute, []);
    const items = condensation.serverItems as { type?: string; role?: string }[];
    assert.equal(items.filter((i) => i.type === 'compaction').length, 1);
    assert.equal(items.filter((i) => i.role === 'user').length, 2, 'the user messages kept');
    assert.ok(usage.input > 0 && usage.output > 0, 'what it cost, as the gateway counted it');
    assert.ok(condensation.tokensAfter < condensation.tokensBefore / 3, `${condensation.tokensBefore} → ${condensation.tokensAfter} tokens`);
    assert.match(condensation.summary, /It exports value0/, 'an excerpt for other models');

    const sent = applyCondensation(turns, condensation).turns;
    const input = toResponsesInput(sent, MODEL);
    assert.equal(input.filter((i) => (i as { type?: string }).type === 'compaction').length, 1);
    assert.ok(!JSON.stringify(input).includes('line 150: export'), 'the compacted file is not sent again');
    const reply = await client.responses.create({ model: MODEL, input, store: false });
    assert.equal(reply.status, 'completed');
    // Another model reads the text instead: the items are tied to the model that made them.
    assert.ok(!toResponsesInput(sent, 'gpt-4o').some((i) => (i as { type?: string }).type === 'compaction'));
  });

  it('a compaction item that was changed is refused by the model, as OpenAI refuses unverifiable encrypted content', async () => {
    const { client } = clientFor(ctx.emu);
    const turns = conversation();
    const { condensation } = await condense({
      client,
      model: MODEL,
      format: 'responses',
      turns,
      cut: manualCut(turns)!,
      window: 400_000,
      manual: true,
      serverCompaction: { onNoRoute: () => undefined },
    });
    const forged = (condensation.serverItems as Record<string, unknown>[]).map((i) =>
      i.type === 'compaction' ? { ...i, encrypted_content: `x${String(i.encrypted_content)}` } : i,
    );
    await assert.rejects(
      client.responses.create({
        model: MODEL,
        input: toResponsesInput(applyCondensation(turns, { ...condensation, serverItems: forged }).turns, MODEL),
        store: false,
      }),
      (e: unknown) => e instanceof BadRequestError && /compaction/.test(e.message),
    );
  });

  it('a gateway without the route (404): said once, and the model writes the summary as before', async () => {
    ctx.emu.offersCompaction = false;
    const { client } = clientFor(ctx.emu);
    const asked = ctx.emu.requestsTo('/v1/responses').length;
    const turns = conversation();
    const noRoute: string[] = [];
    const { condensation } = await condense({
      client,
      model: MODEL,
      format: 'responses',
      turns,
      cut: manualCut(turns)!,
      window: 400_000,
      manual: true,
      serverCompaction: { onNoRoute: () => noRoute.push('404') },
    });
    assert.deepEqual(noRoute, ['404']);
    assert.equal(condensation.serverItems, undefined);
    assert.equal(ctx.emu.requestsTo('/v1/responses').length - asked, 1, 'the summary asked of the model');
    assert.ok(condensation.summary.length > 0);
  });

  it('without the option (chat completions, or a gateway known to lack it) nothing is asked of /compact', async () => {
    const { client } = clientFor(ctx.emu);
    const turns = conversation();
    const compacts = ctx.emu.requestsTo('/v1/responses/compact').length;
    await condense({ client, model: MODEL, format: 'responses', turns, cut: manualCut(turns)!, window: 400_000, manual: true });
    assert.equal(ctx.emu.requestsTo('/v1/responses/compact').length, compacts);
  });
});
