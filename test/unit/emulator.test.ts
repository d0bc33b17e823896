// @profile-dependent: the emulator itself, in the profile the pass names.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { GatewayClient, type ChatMessage } from '../../src/gateway';
import { clientFor, readFileTool, useEmulator } from './helpers';

describe('gateway emulator', () => {
  const ctx = useEmulator();

  it('charges each call to the key and its account', async () => {
    const { emu } = ctx;
    const user = emu.store.addUser({ username: 'spender', quota: 1_000_000 });
    const key = emu.store.addKey({ userId: user.id, name: 'k', remainQuota: 400_000 });
    const { client } = clientFor(emu, { apiKey: key.secret });
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'spend a little #words=50' }] });
    const afterOne = user.quota;
    assert.ok(afterOne < 1_000_000, 'the balance went down');
    assert.equal(1_000_000 - afterOne, 400_000 - emu.store.keys.get(key.id)!.remainQuota, 'key and account are charged alike');
    await client.messages.create({ model: 'claude-sonnet-emu', messages: [{ role: 'user', content: 'more' }] });
    assert.ok(user.quota < afterOne);
  });

  it('runs an agent loop for the number of steps asked, then answers from the results', async () => {
    const { client } = clientFor(ctx.emu);
    const messages: ChatMessage[] = [{ role: 'user', content: 'Read the file a.ts, then b.ts, then c.ts #steps=3' }];
    const readPaths: string[] = [];
    for (let step = 0; step < 6; step++) {
      const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: [readFileTool] });
      const msg = c.choices[0].message;
      if (!msg.tool_calls) {
        assert.match(msg.content ?? '', /From the tool results/);
        break;
      }
      messages.push({ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls.map((t) => ({ ...t, type: 'function' as const })) });
      for (const call of msg.tool_calls) {
        const path = (JSON.parse(call.function.arguments) as { path: string }).path;
        readPaths.push(path);
        messages.push({ role: 'tool', tool_call_id: call.id, content: `contents of ${path}` });
      }
    }
    assert.deepEqual(readPaths, ['a.ts', 'b.ts', 'c.ts']);
  });

  it('lists only the models a key may use', async () => {
    const { emu } = ctx;
    const key = emu.store.addKey({ userId: 1, name: 'narrow', models: ['gpt-4o'] });
    const { client } = clientFor(emu, { apiKey: key.secret });
    assert.deepEqual(
      (await client.models.list()).map((m) => m.id),
      ['gpt-4o'],
    );
  });

  it('takes faults and clock moves over its control API (for a separately running emulator)', async () => {
    const { emu } = ctx;
    const post = (path: string, body: unknown) =>
      fetch(`${emu.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    assert.equal((await post('/__emulator/faults', { fault: { kind: 'status', status: 503 } })).status, 200);
    const { client } = clientFor(emu, { maxRetries: 0 });
    await assert.rejects(client.models.list(), /unavailable/);
    const before = emu.clock.now();
    const moved = (await (await post('/__emulator/clock', { advanceMs: 60_000 })).json()) as { now: number };
    assert.ok(moved.now - before >= 60_000);
    const log = (await (await fetch(`${emu.url}/__emulator/requests`)).json()) as { paths: string[] };
    assert.ok(log.paths.includes('GET /v1/models'));
    assert.ok(!JSON.stringify(log).includes('sk-'), 'the request log over HTTP carries no keys');
  });

  it('lets the first N matching requests through before a fault applies (`after`)', async () => {
    const { emu } = ctx;
    emu.faults.add({ path: '/v1/models', after: 2, fault: { kind: 'status', status: 503 } });
    const { client } = clientFor(emu, { maxRetries: 0 });
    await client.models.list();
    await client.models.list();
    await assert.rejects(client.models.list(), /unavailable/);
    await client.models.list();
  });

  it('runs on its own with `npm run emulator` and prints its URL and demo key', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/emulator/cli.ts', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m && /Demo API key/.test(out)) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`emulator exited with ${code}: ${out}`)));
      });
      const client = new GatewayClient({ baseUrl: `${url}/v1`, apiKey: 'sk-emulator-demo-key-0000000000000000' });
      assert.equal(await client.models.verifyKey(), true);
      await client.close();
    } finally {
      child.kill();
    }
  });

  it('answers bad fields with 400 and the {error:{message,type,code}} envelope (raw requests, no client checks)', async () => {
    const { emu } = ctx;
    const key = 'sk-emulator-demo-key-0000000000000000';
    const post = async (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${key}` }) => {
      const res = await fetch(`${emu.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { error: { message: string; type: string; code: string } } };
    };
    const cases: [string, unknown, RegExp, Record<string, string>?][] = [
      ['/v1/embeddings', { model: 'embed-emu-256', input: [] }, /input must be/],
      ['/v1/rerank', { model: 'rerank-emu', query: 'q', documents: [] }, /documents must be/],
      ['/v1/audio/speech', { model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' }, /audio input text too long/],
      ['/v1/audio/speech', { model: 'tts-1', input: 'x', voice: 'alloy', speed: 9 }, /speed must be between/],
      ['/v1/videos', { model: 'sora-2', prompt: 'p', seconds: '5' }, /seconds must be one of 4, 8, 12/],
      [
        '/v1/moderations',
        { model: 'text-moderation-latest', input: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        /does not accept image input/,
      ],
      ['/imagegen/generate', { image_request: { prompt: 'x', num_images: 9 } }, /num_images must be an integer from 1 to 8/, { 'api-key': key }],
      ['/imagegen/generate', { image_request: {} }, /prompt is required/, { 'api-key': key }],
      ['/v1/chat/completions', { model: 'gpt-4o', messages: [] }, /messages must be a non-empty array/],
    ];
    for (const [path, body, pattern, headers] of cases) {
      const r = await post(path, body, headers);
      assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error.message, pattern);
      assert.equal(r.body.error.type, 'invalid_request_error');
      assert.equal(typeof r.body.error.code, 'string');
    }
  });
});
