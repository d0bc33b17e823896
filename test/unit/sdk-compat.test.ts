// @profile-dependent: the official SDKs read each server's error bodies.
import { strict as assert } from 'node:assert';
import { createReadStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { DEMO_KEY, clientFor, readFileTool, useEmulator } from './helpers';

// The official SDKs (dev dependencies, used only here) talk to the emulator: proof that it
// speaks the real wire formats. Our client runs the same scenarios and must agree.
describe('official SDKs against the emulator', () => {
  const ctx = useEmulator();
  const openai = () => new OpenAI({ baseURL: `${ctx.emu.url}/v1`, apiKey: DEMO_KEY, maxRetries: 0 });
  const anthropic = () => new Anthropic({ baseURL: ctx.emu.url, apiKey: DEMO_KEY, maxRetries: 0 });
  const toolQuestion = 'Please read the file src/a.ts and src/b.ts';

  describe('openai', () => {
    it('plain completion: same text as our client', async () => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello SDK' }] };
      const theirs = await openai().chat.completions.create(body);
      const ours = await clientFor(ctx.emu).client.chat.completions.create(body);
      assert.match(theirs.choices[0].message.content ?? '', /Hello SDK/);
      assert.equal(theirs.choices[0].message.content, ours.choices[0].message.content);
      assert.deepEqual(theirs.usage, ours.usage);
    });

    it('streaming with its helper: same final completion as ours', async () => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Stream it #words=120' }], stream_options: { include_usage: true } };
      const theirs = await openai().chat.completions.stream(body).finalChatCompletion();
      const ours = await clientFor(ctx.emu).client.chat.completions.stream(body).finalCompletion();
      assert.equal(theirs.choices[0].message.content, ours.choices[0].message.content);
      assert.equal(theirs.choices[0].finish_reason, 'stop');
      assert.deepEqual(theirs.usage, ours.usage);
    });

    it('tool calling, streamed and not: same calls as ours', async () => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: toolQuestion }], tools: [readFileTool] };
      const plain = await openai().chat.completions.create(body);
      const streamed = await openai().chat.completions.stream(body).finalChatCompletion();
      const ours = await clientFor(ctx.emu).client.chat.completions.stream(body).finalCompletion();
      const args = (calls: { function: { name: string; arguments: string } }[] | undefined) =>
        (calls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown]);
      const expected = [
        ['read_file', { path: 'src/a.ts' }],
        ['read_file', { path: 'src/b.ts' }],
      ];
      assert.deepEqual(args(plain.choices[0].message.tool_calls as never), expected);
      assert.deepEqual(args(streamed.choices[0].message.tool_calls as never), expected);
      assert.deepEqual(args(ours.choices[0].message.tool_calls), expected);
      assert.equal(streamed.choices[0].finish_reason, 'tool_calls');
    });

    it('lists the models', async () => {
      const ids: string[] = [];
      for await (const m of openai().models.list()) ids.push(m.id);
      assert.ok(ids.includes('gpt-4o-mini') && ids.includes('claude-sonnet-emu'));
    });

    it('max_tokens cuts the reply (finish_reason "length"); parallel_tool_calls: false gives one call', async () => {
      const cut = await openai().chat.completions.create({
        model: 'gpt-4o-mini',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'A long one #words=200' }],
      });
      assert.equal(cut.choices[0].finish_reason, 'length');
      assert.ok((cut.usage?.completion_tokens ?? 99) <= 5);
      const one = await openai().chat.completions.create({
        model: 'gpt-4o-mini',
        parallel_tool_calls: false,
        tools: [readFileTool],
        messages: [{ role: 'user', content: toolQuestion }],
      });
      assert.equal(one.choices[0].message.tool_calls?.length, 1);
    });

    it("raises its own error classes for the emulator's 401 and 503", async () => {
      await assert.rejects(new OpenAI({ baseURL: `${ctx.emu.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 }).models.list(), OpenAI.AuthenticationError);
      await assert.rejects(openai().chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }), OpenAI.InternalServerError);
    });
  });

  describe('anthropic', () => {
    const tool = {
      name: 'read_file',
      description: 'Read a file',
      input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
    };

    it('plain message: same text and usage as ours', async () => {
      const body = { model: 'claude-sonnet-emu', max_tokens: 512, messages: [{ role: 'user' as const, content: 'Hello Claude SDK' }] };
      const theirs = await anthropic().messages.create(body);
      const ours = await clientFor(ctx.emu).client.messages.create(body);
      assert.equal(theirs.content[0].type, 'text');
      assert.deepEqual(theirs.content, ours.content);
      assert.equal(theirs.usage.input_tokens, ours.usage.input_tokens);
    });

    it('streaming with its helper, thinking included: same final message as ours', async () => {
      const body = {
        model: 'claude-sonnet-emu',
        max_tokens: 4096,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        messages: [{ role: 'user' as const, content: 'Stream it #words=150' }],
      };
      const theirs = await anthropic().messages.stream(body).finalMessage();
      const ours = await clientFor(ctx.emu).client.messages.stream(body).finalMessage();
      assert.deepEqual(
        theirs.content.map((b) => b.type),
        ['thinking', 'text'],
      );
      assert.equal((theirs.content[1] as { text: string }).text, (ours.content[1] as { text: string }).text);
      assert.equal(theirs.usage.output_tokens, ours.usage.output_tokens);
      assert.equal(theirs.stop_reason, 'end_turn');
    });

    it('tool use, streamed: the SDK parses the same inputs as ours', async () => {
      const body = { model: 'claude-sonnet-emu', max_tokens: 512, tools: [tool], messages: [{ role: 'user' as const, content: toolQuestion }] };
      const theirs = await anthropic().messages.stream(body).finalMessage();
      const ours = await clientFor(ctx.emu).client.messages.stream(body).finalMessage();
      const inputs = (content: { type: string; input?: unknown }[]) => content.filter((b) => b.type === 'tool_use').map((b) => b.input);
      assert.deepEqual(inputs(theirs.content), [{ path: 'src/a.ts' }, { path: 'src/b.ts' }]);
      assert.deepEqual(inputs(ours.content), inputs(theirs.content));
      assert.equal(theirs.stop_reason, 'tool_use');
    });

    it('max_tokens stops the message (stop_reason "max_tokens"); disable_parallel_tool_use gives one call', async () => {
      const cut = await anthropic().messages.create({
        model: 'claude-sonnet-emu',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'A long one #words=200' }],
      });
      assert.equal(cut.stop_reason, 'max_tokens');
      assert.equal(cut.usage.output_tokens, 5);
      const one = await anthropic().messages.create({
        model: 'claude-sonnet-emu',
        max_tokens: 512,
        tools: [tool],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        messages: [{ role: 'user', content: toolQuestion }],
      });
      assert.equal(one.content.filter((b) => b.type === 'tool_use').length, 1);
    });

    it('a request without anthropic-version is answered (the gateway fills it in)', async () => {
      const res = await fetch(`${ctx.emu.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': DEMO_KEY },
        body: JSON.stringify({ model: 'claude-sonnet-emu', max_tokens: 50, messages: [{ role: 'user', content: 'no version header' }] }),
      });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { type: string }).type, 'message');
    });

    it("the gateway's own refusals on /v1/messages come in its own shape on new-api, the messages shape on one-api", async () => {
      const res = await fetch(`${ctx.emu.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-emu', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
      });
      assert.equal(res.status, 401);
      const body = (await res.json()) as { type?: string; error: { type: string } };
      if (ctx.emu.profile === 'new-api') assert.equal(body.error.type, 'new_api_error');
      else assert.equal(body.type, 'error');
    });

    it("raises its own error classes for the emulator's 401 and 400", async () => {
      await assert.rejects(
        new Anthropic({ baseURL: ctx.emu.url, apiKey: 'sk-wrong', maxRetries: 0 }).messages.create({
          model: 'claude-sonnet-emu',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'x' }],
        }),
        Anthropic.AuthenticationError,
      );
      await assert.rejects(
        anthropic().messages.create({ model: 'claude-sonnet-emu', max_tokens: 5, temperature: 0, messages: [{ role: 'user', content: 'x' }] } as never),
        Anthropic.BadRequestError,
      );
    });
  });

  describe('openai, the other endpoints', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-sdk-'));

    it('embeddings, float and base64 (the SDK decodes base64 itself)', async () => {
      const floats = await openai().embeddings.create({ model: 'embed-emu-256', input: ['alpha beta', 'gamma'], encoding_format: 'float' });
      const b64 = await openai().embeddings.create({ model: 'embed-emu-256', input: ['alpha beta', 'gamma'] });
      const ours = await clientFor(ctx.emu).client.embeddings.create({ model: 'embed-emu-256', input: ['alpha beta', 'gamma'] });
      const byIndex = (d: { index: number; embedding: number[] | string }[]) =>
        [...d].sort((a, b) => a.index - b.index).map((x) => Array.from(x.embedding as number[]));
      assert.equal(byIndex(floats.data).length, 2);
      assert.deepEqual(
        byIndex(b64.data),
        byIndex(floats.data).map((v) => v.map(Math.fround)),
      );
      assert.deepEqual(
        ours.data.map((d) => Array.from(d.embedding)),
        byIndex(b64.data),
      );
    });

    it('moderations', async () => {
      const res = await openai().moderations.create({ model: 'omni-moderation-latest', input: 'you idiot' });
      assert.equal(res.results[0].flagged, true);
      assert.equal(res.results[0].categories.harassment, true);
    });

    it('speech, then transcription and translation of it', async () => {
      const speech = await openai().audio.speech.create({ model: 'tts-1', input: 'Hello from the SDK.', voice: 'alloy', response_format: 'wav' });
      const file = join(dir, 'sdk.wav');
      writeFileSync(file, Buffer.from(await speech.arrayBuffer()));
      const t = await openai().audio.transcriptions.create({ model: 'whisper-1', file: createReadStream(file) });
      assert.equal(t.text, 'Hello from the SDK.');
      const v = await openai().audio.transcriptions.create({
        model: 'whisper-1',
        file: createReadStream(file),
        response_format: 'verbose_json',
        timestamp_granularities: ['word'],
      });
      assert.equal(v.words?.length, 4);
      const tr = await openai().audio.translations.create({ model: 'whisper-1', file: createReadStream(file), response_format: 'text' });
      assert.equal((typeof tr === 'string' ? tr : JSON.stringify(tr)).trim(), 'Hello from the SDK.');
    });

    it('videos: create, retrieve, download, delete', async () => {
      const sdk = openai();
      const video = await sdk.videos.create({ model: 'sora-2', prompt: 'a paper boat', seconds: '4', size: '720x1280' });
      assert.equal(video.status, 'queued');
      ctx.emu.clock.advance(120_000);
      assert.equal((await sdk.videos.retrieve(video.id)).status, 'completed');
      const content = await sdk.videos.downloadContent(video.id);
      const bytes = Buffer.from(await content.arrayBuffer());
      assert.equal(bytes.toString('ascii', 4, 8), 'ftyp');
      const deleted = await sdk.videos.delete(video.id);
      assert.equal(deleted.deleted, true);
    });
  });
});
