import { strict as assert } from 'node:assert';
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { geminiOutput, ValidationError, type GeminiContent } from '../../src/gateway';
import { DEMO_KEY, clientFor, useEmulator } from './helpers';

/**
 * Gemini's own format: the official `@google/genai` SDK against the emulator (proof that it
 * speaks the format: contents, function declarations, thinking with thought summaries, the
 * thought signature a tool round must carry back), and our client through the same round trip.
 */
describe("Gemini's own format (the official @google/genai SDK and ours)", () => {
  const ctx = useEmulator();
  const sdk = () => new GoogleGenAI({ apiKey: DEMO_KEY, httpOptions: { baseUrl: ctx.emu.url } });
  const readFile = {
    name: 'read_file',
    description: 'Read a file of the workspace',
    parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  };
  const question = 'Please read the file src/a.ts';
  const config = { tools: [{ functionDeclarations: [readFile] }], thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } };

  before(() => {
    ctx.emu.profile = 'new-api';
  });

  it('the SDK: a streamed tool round with thinking, its signature sent back, then the answer', async () => {
    const history: Content[] = [{ role: 'user', parts: [{ text: question }] }];
    const parts: NonNullable<Content['parts']> = [];
    let usage: { thoughtsTokenCount?: number; promptTokenCount?: number } | undefined;
    for await (const chunk of await sdk().models.generateContentStream({ model: 'gemini-3-pro-emu', contents: history, config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      usage = chunk.usageMetadata ?? usage;
    }
    const thoughts = parts.filter((p) => p.thought);
    const calls = parts.filter((p) => p.functionCall);
    assert.ok(thoughts.length > 0 && thoughts.every((p) => typeof p.text === 'string'), 'thought summaries, as parts marked thought');
    assert.deepEqual(
      calls.map((p) => [p.functionCall?.name, p.functionCall?.args]),
      [['read_file', { path: 'src/a.ts' }]],
    );
    assert.ok(calls[0].thoughtSignature, 'the first call of the step is signed');
    assert.ok((usage?.thoughtsTokenCount ?? 0) > 0, 'thinking tokens counted');
    // The model's turn goes back whole (thoughts and signature), with the function's response.
    history.push({ role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'export const a = 1;' } } }] });
    const answer = await sdk().models.generateContent({ model: 'gemini-3-pro-emu', contents: history, config });
    assert.ok(answer.text && answer.text.length > 0, 'an answer after the tool round');
    assert.equal(answer.functionCalls, undefined);

    // Without the signature the model refuses the round, as Gemini 3 does; the SDK raises its ApiError.
    const unsigned = history.map((c) => ({ ...c, parts: c.parts?.map(({ thoughtSignature: _drop, ...p }) => p) }));
    await assert.rejects(
      sdk().models.generateContent({ model: 'gemini-3-pro-emu', contents: unsigned, config }),
      (e: unknown) => e instanceof ApiError && e.status === 400 && /missing a thought_signature/.test(e.message),
    );
  });

  it('the SDK lists the models in its own shape', async () => {
    const names: string[] = [];
    for await (const m of await sdk().models.list()) names.push(m.name ?? '');
    assert.ok(names.includes('models/gemini-3-pro-emu'), names.join(', '));
  });

  it('our client: the same round trip, streamed, with the signature kept in the parts it sends back', async () => {
    const { client } = clientFor(ctx.emu);
    const contents: GeminiContent[] = [{ role: 'user', parts: [{ text: question }] }];
    const body = {
      contents,
      tools: [{ functionDeclarations: [readFile] }],
      generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
    };
    const stream = client.gemini.streamGenerateContent('gemini-3-pro-emu', body);
    let thoughtText = '';
    for await (const chunk of stream) for (const p of chunk.candidates?.[0]?.content?.parts ?? []) if (p.thought && p.text) thoughtText += p.text;
    const first = geminiOutput(await stream.finalResponse());
    assert.ok(thoughtText.length > 0 && first.thoughts === thoughtText, 'the thoughts, joined from their deltas');
    assert.deepEqual(
      first.calls.map((c) => [c.name, c.args]),
      [['read_file', { path: 'src/a.ts' }]],
    );
    assert.ok(first.calls[0].signature);
    contents.push(
      { role: 'model', parts: first.parts },
      { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'export const a = 1;' } } }] },
    );
    const second = geminiOutput(await client.gemini.generateContent('gemini-3-pro-emu', body));
    assert.ok(second.text.length > 0);
    assert.equal(second.calls.length, 0);
    // The key went as x-goog-api-key, never in the URL.
    const sent = ctx.emu.requests.filter((r) => r.path.startsWith('/v1beta/models/gemini-3-pro-emu'));
    assert.ok(sent.length >= 2 && sent.every((r) => r.headers['x-goog-api-key'] === DEMO_KEY && !r.search.includes('key=')));
  });

  it('our client refuses before sending what the format cannot carry', async () => {
    const { client } = clientFor(ctx.emu);
    const before = ctx.emu.requests.length;
    assert.throws(
      () => client.gemini.streamGenerateContent('gemini-3-pro-emu', { contents: [] }),
      (e: unknown) => e instanceof ValidationError && /contents/.test(e.message),
    );
    await assert.rejects(client.gemini.generateContent('../v1/chat', { contents: [{ role: 'user', parts: [{ text: 'x' }] }] }), ValidationError);
    assert.equal(ctx.emu.requests.length, before, 'nothing sent');
  });
});
