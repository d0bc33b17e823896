// @profile-dependent: it checks the emulator against each server's source.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROFILE_RULES } from '../emulator/profiles';
import { clientFor, DEMO_KEY, useEmulator } from './helpers';

/**
 * The emulator is worth only what it shares with the real servers: these check its rules
 * directly over HTTP (no client validation in the way), in the profile of this run.
 */
describe('emulator fidelity to one-api and new-api', () => {
  const ctx = useEmulator();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${ctx.emu.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEY}`, ...headers },
      body: JSON.stringify(body),
    });
  const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1').toString('base64');
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');

  it('switches profile on a running emulator, and answers the account API as that server', async () => {
    const start = ctx.emu.profile;
    const other = start === 'new-api' ? 'one-api' : 'new-api';
    const set = async (profile: string) =>
      (await (await fetch(`${ctx.emu.url}/__emulator/profile`, { method: 'POST', body: JSON.stringify({ profile }) })).json()) as { profile: string };
    try {
      assert.equal((await set(other)).profile, other);
      const list = await fetch(`${ctx.emu.url}/api/token/?p=0`, { headers: { authorization: 'Bearer emulator-demo-access-token', 'new-api-user': '1' } });
      const data = ((await list.json()) as { data: unknown }).data;
      if (PROFILE_RULES[other].listShape === 'paged') assert.ok(data && typeof data === 'object' && 'items' in data, 'new-api pages as an object');
      else assert.ok(Array.isArray(data), 'one-api answers a bare array');
      assert.equal((await fetch(`${ctx.emu.url}/__emulator/profile`, { method: 'POST', body: JSON.stringify({ profile: 'kong' }) })).status, 400);
    } finally {
      await set(start);
    }
  });

  it('a full update without status_only ignores status; only status_only changes it', async () => {
    const auth = { authorization: 'Bearer emulator-demo-access-token', 'new-api-user': '1' };
    const k = ctx.emu.store.addKey({ userId: 1, name: 'fidelity', unlimitedQuota: true });
    const put = (q: string, body: unknown) =>
      fetch(`${ctx.emu.url}/api/token/${q}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await put('', { id: k.id, name: 'fidelity', status: 2, expired_time: -1, unlimited_quota: true });
    assert.equal(ctx.emu.store.keys.get(k.id)!.status, 1, 'status ignored without status_only');
    await put('?status_only=1', { id: k.id, status: 2 });
    assert.equal(ctx.emu.store.keys.get(k.id)!.status, 2);
  });

  it('refuses GIF, oversized and badly detailed images in both formats', async () => {
    const chat = (url: string, detail?: string) =>
      post('/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url, ...(detail ? { detail } : {}) } }] }],
      });
    assert.equal((await chat(`data:image/png;base64,${gif}`)).status, 400);
    assert.equal((await chat(`data:image/png;base64,${'A'.repeat(28_000_000)}`)).status, 400);
    assert.match(
      ((await (await chat(`data:image/png;base64,${png}`, 'ultra')).json()) as { error: { message: string } }).error.message,
      /Supported values are: 'auto', 'low', and 'high'/,
    );
    assert.equal((await chat(`data:image/png;base64,${png}`, 'low')).status, 200);
    const msg = (data: string) =>
      post(
        '/v1/messages',
        {
          model: 'claude-sonnet-emu',
          max_tokens: 20,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }],
        },
        { 'anthropic-version': '2023-06-01' },
      );
    assert.equal((await msg(gif)).status, 400);
    assert.equal((await msg(png)).status, 200);
  });

  it('embeddings come back in input order, as the real relays send them', async () => {
    const { client } = clientFor(ctx.emu);
    const res = await client.embeddings.create({ model: 'embed-emu-256', input: ['alpha', 'beta', 'gamma'] });
    assert.deepEqual(
      res.data.map((d) => d.index),
      [0, 1, 2],
    );
  });

  it('verbose_json names the language and carries the usual segment fields', async () => {
    const { client } = clientFor(ctx.emu);
    const dir = mkdtempSync(join(tmpdir(), 'mg-verbose-'));
    try {
      const file = join(dir, 'fr.wav');
      await (
        await client.audio.speech.create({ model: 'tts-1', input: 'Bonjour tout le monde. Au revoir.', voice: 'alloy', response_format: 'wav' })
      ).toFile(file);
      const v = await client.audio.transcriptions.create({ file, model: 'whisper-1', language: 'fr', response_format: 'verbose_json' });
      assert.equal(v.language, 'french');
      const seg = v.segments![0] as unknown as Record<string, unknown>;
      for (const field of ['id', 'seek', 'start', 'end', 'text', 'tokens', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob'])
        assert.ok(field in seg, field);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('redirect mode: downloads answer 302 to a storage origin that refuses credentials; our client follows without them', async () => {
    ctx.emu.redirectDownloads = true;
    const dir = mkdtempSync(join(tmpdir(), 'mg-storage-'));
    try {
      const { client } = clientFor(ctx.emu, { sleep: (ms) => (ctx.emu.clock.advance(ms), Promise.resolve()) });
      const raw = await fetch(`${ctx.emu.url}/v1/videos/none/content`, { redirect: 'manual', headers: { authorization: `Bearer ${DEMO_KEY}` } });
      assert.equal(raw.status, 404);
      const task = await client.videos.create({ model: 'sora-2', prompt: 'a storage test' });
      await client.videos.waitFor(task.id);
      const direct = await fetch(`${ctx.emu.url}/v1/videos/${task.id}/content`, { redirect: 'manual', headers: { authorization: `Bearer ${DEMO_KEY}` } });
      assert.equal(direct.status, 302);
      assert.ok(direct.headers.get('location')?.startsWith(ctx.emu.storage.url));
      // Forwarding the key to storage is refused there, as S3 does.
      assert.equal((await fetch(direct.headers.get('location')!, { headers: { authorization: `Bearer ${DEMO_KEY}` } })).status, 400);
      const before = ctx.emu.storage.served;
      const bytes = await (await client.videos.content(task.id)).toFile(join(dir, 'v.mp4'));
      assert.ok(bytes > 100 && readFileSync(join(dir, 'v.mp4')).subarray(4, 8).toString('latin1') === 'ftyp');
      assert.equal(ctx.emu.storage.served, before + 1);
      assert.equal(ctx.emu.storage.credentialLeaks.length, 1, 'only the deliberate leak above');
    } finally {
      ctx.emu.redirectDownloads = false;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers read like an assistant: a heading, points, code in the language asked, prose for long answers', async () => {
    const { client } = clientFor(ctx.emu);
    const ask = async (content: string) =>
      (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })).choices[0].message.content ?? '';
    const code = await ask('How do I write a python function to parse dates?');
    assert.match(code, /^## Parse dates\n/);
    assert.match(code, /\n- \*\*What you asked:\*\*/);
    assert.match(code, /```python\ndef parse_dates\(value: str\) -> str:/);
    const long = await ask('Explain streaming #words=120');
    const prose = long.split('\n\n').find((p) => p.split(' ').length > 30) ?? '';
    assert.ok(
      prose.split(' ').length >= 30 && /^[A-Z]/.test(prose) && (prose.match(/\. /g) ?? []).length >= 2,
      `paragraphs of sentences, not a word list: ${prose.slice(0, 120)}`,
    );
    assert.ok(long.split(/\s+/).length >= 120);
  });
});
