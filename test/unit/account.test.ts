// @profile-dependent: the account API: paging, list shapes, masking, what creation returns, New-Api-User, the user's model route.
import { strict as assert } from 'node:assert';
import {
  AccountApiError,
  AuthenticationError,
  GatewayClient,
  KeyStateError,
  maskKey,
  MissingCredentialError,
  NEW_API_USER_REQUIRED,
  PermissionDeniedError,
  quotaToDollars,
  ValidationError,
} from '../../src/gateway';
import { GatewayEmulator } from '../emulator/server';
import { clientFor, useEmulator } from './helpers';

/**
 * The account API against the emulator in the profile this run uses (new-api by default,
 * one-api with MODEL_GATEWAY_EMULATOR_PROFILE=one-api): the same assertions hold on both.
 */
describe('account API', () => {
  const ctx = useEmulator();

  /** A fresh user with its own access token, and a client authenticated as that user. */
  function account(quota = 2_500_000) {
    const user = ctx.emu.store.addUser({ username: `user${ctx.emu.store.users.size + 1}`, quota });
    const { client } = clientFor(ctx.emu, { systemAccessToken: user.accessToken, userId: user.id, apiKey: undefined });
    return { user, client };
  }
  const relay = (key: string) => new GatewayClient({ baseUrl: ctx.emu.url, apiKey: key, maxRetries: 0 });

  it(`runs against the ${process.env.MODEL_GATEWAY_EMULATOR_PROFILE || 'new-api'} profile`, () => {
    assert.equal(ctx.emu.profile, process.env.MODEL_GATEWAY_EMULATOR_PROFILE || 'new-api');
  });

  it('reads the user and the balance in dollars (quota / 500,000)', async () => {
    const { client, user } = account(2_500_000);
    const me = await client.account.self();
    assert.equal(me.username, user.username);
    assert.equal(me.quota, 2_500_000);
    assert.equal(me.balanceDollars, 5);
    assert.equal(quotaToDollars(250_000), 0.5);
    const sent = ctx.emu.requestsTo('/api/user/self').at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${user.accessToken}`);
  });

  it('creates a key and shows it once in full (new-api: through the reveal route), and it works', async () => {
    const { client } = account();
    const created = await client.account.tokens.create({ name: 'ci-runner', remain_quota: 1_000_000 });
    assert.ok(created.keyIsFull && /^sk-[0-9a-f]{48}$/.test(created.key), created.key);
    assert.equal(created.state, 'enabled');
    const gw = relay(created.key);
    assert.equal(await gw.models.verifyKey(), true);
    await gw.close();
  });

  it("new-api's reveal route answers the key as stored (no sk-), asked as its console asks (POST, a JSON type, no body); one-api has no such route", async () => {
    const { user, client } = account();
    const created = await client.account.tokens.create({ name: 'reveal-me', unlimited_quota: true });
    const res = await fetch(`${ctx.emu.url}/api/token/${created.id}/key`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'new-api-user': String(user.id), 'content-type': 'application/json' },
    });
    const body = (await res.json()) as { success?: boolean; data?: { key?: string } };
    if (ctx.emu.profile === 'new-api') {
      assert.equal(res.status, 200);
      assert.equal(body.success, true);
      assert.equal(`sk-${body.data?.key ?? ''}`, created.key, 'the stored key, which the client shows with its prefix');
      assert.doesNotMatch(body.data?.key ?? '', /^sk-/);
    } else {
      assert.equal(res.status, 404, 'one-api has no reveal route');
    }
  });

  it('disables a key so the relay refuses it, and enables it again (status_only, status 2)', async () => {
    const { client } = account();
    const k = await client.account.tokens.create({ name: 'toggle', unlimited_quota: true });
    const gw = relay(k.key);
    const off = await client.account.tokens.setEnabled(k.id, false);
    assert.equal(off.state, 'disabled');
    const sent = ctx.emu.requestsTo('/api/token').at(-1)!;
    assert.deepEqual(sent.body, { id: k.id, status: 2 });
    assert.equal(await gw.models.verifyKey(), false, 'the relay refuses the disabled key');
    assert.equal((await client.account.tokens.setEnabled(k.id, true)).state, 'enabled');
    assert.equal(await gw.models.verifyKey(), true);
    await gw.close();
  });

  it('edits never send a status and keep the fields not given', async () => {
    const { client } = account();
    const k = await client.account.tokens.create({ name: 'edit-me', remain_quota: 1_000_000 });
    await client.account.tokens.setEnabled(k.id, false);
    const expiry = Math.floor(Date.now() / 1000) + 86_400;
    await client.account.tokens.update({ id: k.id, expired_time: expiry, subnet: '127.0.0.1/32' });
    const renamed = await client.account.tokens.update({ id: k.id, name: 'edited' });
    const put = ctx.emu.requestsTo('/api/token').at(-1)!.body as Record<string, unknown>;
    assert.ok(!('status' in put), 'no status in an edit');
    assert.equal(renamed.name, 'edited');
    assert.equal(renamed.expiredTime, expiry, 'fields not given keep their values');
    assert.equal(renamed.subnet, '127.0.0.1/32');
    assert.equal(renamed.remainQuota, 1_000_000);
    assert.equal(renamed.state, 'disabled', 'an edit does not re-enable the key');
  });

  it('lists every key, page by page, on either server (25 keys: more than one page)', async () => {
    const { client } = account();
    for (let i = 0; i < 25; i++) await client.account.tokens.create({ name: `bulk-${String(i).padStart(2, '0')}`, unlimited_quota: true });
    const all = await client.account.tokens.listAll();
    assert.equal(all.length, 25);
    assert.equal(new Set(all.map((k) => k.id)).size, 25);
    const firstPage = await client.account.tokens.list();
    assert.ok(firstPage.items.length <= 25);
    assert.deepEqual(await client.account.tokens.search('bulk-07').then((r) => r.map((k) => k.name)), ['bulk-07']);
    assert.deepEqual(await client.account.tokens.search('nomatch'), []);
  });

  it('a key used past its own quota is refused with 401 "exhausted", shown as exhausted, and enabling it says to raise the quota', async () => {
    const { client } = account();
    const k = await client.account.tokens.create({ name: 'tiny', remain_quota: 1 });
    const gw = relay(k.key);
    await gw.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'use it up' }] });
    await assert.rejects(
      gw.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }),
      (e: unknown) => e instanceof AuthenticationError && e.keyRefusal === 'exhausted' && /own quota is used up/.test(e.message),
    );
    assert.equal((await client.account.tokens.get(k.id)).state, 'exhausted');
    await assert.rejects(
      client.account.tokens.setEnabled(k.id, true),
      (e: unknown) => e instanceof KeyStateError && e.fix === 'raise-quota' && /raise its quota/.test(e.message),
    );
    await client.account.tokens.update({ id: k.id, remain_quota: 1_000_000 });
    assert.equal((await client.account.tokens.setEnabled(k.id, true)).state, 'enabled');
    assert.ok((await gw.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'works again' }] })).choices.length > 0);
    await gw.close();
  });

  it('a key used past its expiry is refused with 401 "expired", and enabling it says to extend the expiry', async () => {
    const { client } = account();
    const past = Math.floor(ctx.emu.clock.now() / 1000) - 60;
    const k = await client.account.tokens.create({ name: 'old', remain_quota: 1_000_000, expired_time: past });
    const gw = relay(k.key);
    await assert.rejects(gw.models.list(), (e: unknown) => e instanceof AuthenticationError && e.keyRefusal === 'expired');
    assert.equal((await client.account.tokens.get(k.id)).state, 'expired');
    await assert.rejects(client.account.tokens.setEnabled(k.id, true), (e: unknown) => e instanceof KeyStateError && e.fix === 'extend-expiry');
    await gw.close();
  });

  it("the user's own balance used up is a 403 about the balance, not the key", async () => {
    const { client } = account(1);
    const k = await client.account.tokens.create({ name: 'poor', unlimited_quota: true });
    const gw = relay(k.key);
    await gw.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'spend the last of it' }] });
    await assert.rejects(
      gw.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'more' }] }),
      (e: unknown) => e instanceof PermissionDeniedError && e.cause403 === 'balance',
    );
    await gw.close();
  });

  it('refusals carry the server reason; requests that break the rules are refused before sending', async () => {
    const { client } = account();
    await assert.rejects(client.account.tokens.get(999_999), (e: unknown) => e instanceof AccountApiError && /record not found/.test(e.message));
    await assert.rejects(
      client.account.tokens.create({ name: 'x'.repeat(51), unlimited_quota: true }),
      (e: unknown) => e instanceof ValidationError && /name: name must be at most 50 characters/.test(e.message),
    );
    await assert.rejects(
      client.account.tokens.create({ name: 'no-quota' }),
      (e: unknown) => e instanceof ValidationError && /remain_quota: must be above 0 unless unlimited_quota is true/.test(e.message),
    );
  });

  it('says what to fix for a missing or invalid access token, and asks for the user id where new-api needs it', async () => {
    const { client: none } = clientFor(ctx.emu, { systemAccessToken: undefined });
    await assert.rejects(none.account.self(), (e: unknown) => e instanceof MissingCredentialError && /system access token/.test(e.message));
    const { client: wrong } = clientFor(ctx.emu, { systemAccessToken: 'not-a-token', userId: 1 });
    await assert.rejects(
      wrong.account.self(),
      (e: unknown) => e instanceof AccountApiError && e.type === 'authentication_error' && /Set a valid system access token/.test(e.message),
    );

    const { user } = account();
    const { client: withoutId } = clientFor(ctx.emu, { systemAccessToken: user.accessToken });
    if (ctx.emu.profile === 'new-api') {
      await assert.rejects(
        withoutId.account.self(),
        (e: unknown) => e instanceof AccountApiError && e.code === NEW_API_USER_REQUIRED && /user id/.test(e.message),
      );
    } else {
      assert.equal((await withoutId.account.self()).username, user.username, 'one-api reads no New-Api-User');
    }
    const { client: withId } = clientFor(ctx.emu, { systemAccessToken: user.accessToken, userId: user.id });
    assert.equal((await withId.account.self()).username, user.username);
    assert.equal(ctx.emu.requestsTo('/api/user/self').at(-1)!.headers['new-api-user'], String(user.id));
  });

  it('a 401 from the account API speaks of the access token, not the API key', async () => {
    const { client } = account();
    ctx.emu.inject({ path: '/api/', fault: { kind: 'status', status: 401, body: { success: false, message: 'unauthorized' } } });
    await assert.rejects(
      client.account.self(),
      (e: unknown) => e instanceof AccountApiError && !(e instanceof AuthenticationError) && /system access token/.test(e.message),
    );
  });

  it('spend on any endpoint lowers the balance the account API reports', async () => {
    const { user, client } = account(5_000_000);
    const key = await client.account.tokens.create({ name: 'spender', unlimited_quota: true });
    const gw = new GatewayClient({ baseUrl: ctx.emu.url, apiKey: key.key });
    const before = (await client.account.self()).quota;
    await gw.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'spend #words=100' }] });
    await gw.embeddings.create({ model: 'text-embedding-3-small', input: 'spend more' });
    await (await gw.audio.speech.create({ model: 'tts-1', input: 'spend on speech', voice: 'alloy', response_format: 'wav' })).buffer();
    await gw.imagegen.v3.generate({ prompt: 'spend on an image' });
    const after = (await client.account.self()).quota;
    assert.ok(after < before - 0.06 * 500_000, `balance ${before} → ${after}`);
    assert.equal(after, user.quota);
  });

  it("lists all models and the account's models (either server's route); userToken replaces the token", async () => {
    const { client, user } = account();
    const all = await client.account.models();
    assert.ok(all.includes('gpt-4o') && all.includes('claude-sonnet-emu') && all.includes('text-embedding-3-small'));
    assert.deepEqual(all, [...all].sort());
    assert.ok((await client.account.availableModels()).includes('whisper-1'));
    const old = user.accessToken;
    const fresh = await client.account.userToken();
    assert.notEqual(fresh, old);
    await assert.rejects(client.account.self(), AccountApiError);
    const { client: renewed } = clientFor(ctx.emu, { systemAccessToken: fresh, userId: user.id });
    assert.equal((await renewed.account.self()).username, user.username);
  });

  it('masks keys for display', () => {
    assert.equal(maskKey('sk-abcdefghijklmnopqrstuvwxyz'), 'sk-abcd…wxyz');
    assert.equal(maskKey('abcd**********wxyz'), 'sk-abcd…wxyz');
    assert.ok(!maskKey(GatewayEmulator.demoKey).includes('demo-key-0000'));
  });
});
