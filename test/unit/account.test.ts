import { strict as assert } from 'node:assert';
import { AccountApiError, AuthenticationError, GatewayClient, maskKey, MissingCredentialError, quotaToDollars, ValidationError } from '../../src/gateway';
import { DEFAULT_ACCOUNT_STYLE } from '../emulator/account';
import { GatewayEmulator } from '../emulator/server';
import { clientFor, useEmulator } from './helpers';

describe('account API', () => {
  const ctx = useEmulator();
  afterEach(() => {
    ctx.emu.accountStyle = { ...DEFAULT_ACCOUNT_STYLE };
  });

  /** A fresh user with its own access token, and a client authenticated as that user. */
  function account(quota = 2_500_000) {
    const user = ctx.emu.store.addUser({ username: `user${ctx.emu.store.users.size + 1}`, quota });
    const { client } = clientFor(ctx.emu, { systemAccessToken: user.accessToken, apiKey: undefined });
    return { user, client };
  }

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

  it('creates a key that works, lists, searches, disables, enables, updates and deletes it', async () => {
    const { client } = account();
    const created = await client.account.tokens.create({ name: 'ci-runner', remain_quota: 1_000_000, subnet: '' });
    assert.ok(created.keyIsFull && created.key.startsWith('sk-'));
    assert.equal(created.state, 'enabled');
    const gw = new GatewayClient({ baseUrl: ctx.emu.url, apiKey: created.key, maxRetries: 0 });
    assert.equal(await gw.models.verifyKey(), true);

    const list = await client.account.tokens.list({ num: 10 });
    assert.deepEqual(list.items.map((k) => k.name), ['ci-runner']);
    assert.deepEqual((await client.account.tokens.search('ci-')).map((k) => k.id), [created.id]);
    assert.deepEqual(await client.account.tokens.search('nomatch'), []);

    const off = await client.account.tokens.setEnabled(created.id, false);
    assert.equal(off.state, 'disabled');
    assert.equal((ctx.emu.requestsTo('/api/token').at(-1)!.body as { status: number }).status, 0);
    assert.equal(await gw.models.verifyKey(), false, 'a disabled key is refused');
    assert.equal((await client.account.tokens.setEnabled(created.id, true)).state, 'enabled');
    assert.equal(await gw.models.verifyKey(), true);

    const expiry = Math.floor(Date.now() / 1000) + 86_400;
    await client.account.tokens.update({ id: created.id, expired_time: expiry, subnet: '127.0.0.1/32' });
    const renamed = await client.account.tokens.update({ id: created.id, name: 'ci-runner-2' });
    assert.equal(renamed.name, 'ci-runner-2');
    assert.equal(renamed.expiredTime, expiry, 'fields not given keep their values');
    assert.equal(renamed.subnet, '127.0.0.1/32');
    assert.equal(renamed.remainQuota, 1_000_000);

    await client.account.tokens.delete(created.id);
    await assert.rejects(client.account.tokens.get(created.id), (e: unknown) => e instanceof AccountApiError && /令牌不存在/.test(e.message));
    await gw.close();
  });

  it('accepts `data` as {items,total}, and finds the new key when creation returns none (or only a masked one)', async () => {
    const { client } = account();
    ctx.emu.accountStyle = { listShape: 'paged', createReturns: 'nothing', maskKeys: true, requireNewApiUser: false };
    const created = await client.account.tokens.create({ name: 'quiet-create', unlimited_quota: true });
    assert.ok(created.keyIsFull, 'the full key was fetched after finding the new record');
    assert.equal(await new GatewayClient({ baseUrl: ctx.emu.url, apiKey: created.key }).models.verifyKey(), true);
    const list = await client.account.tokens.list({ num: 5 });
    assert.equal(list.total, 1);
    assert.equal(list.items[0].keyIsFull, false);
    assert.match(list.items[0].key, /\*{4}/);

    ctx.emu.accountStyle = { ...ctx.emu.accountStyle, createReturns: 'masked' };
    const second = await client.account.tokens.create({ name: 'masked-create', remain_quota: 500_000 });
    assert.ok(second.keyIsFull);
    assert.notEqual(second.id, created.id);
  });

  it('pages the list by num', async () => {
    const { client } = account();
    for (let i = 0; i < 7; i++) await client.account.tokens.create({ name: `k${i}`, unlimited_quota: true });
    assert.equal((await client.account.tokens.list({ num: 3 })).items.length, 3);
    assert.deepEqual((await client.account.tokens.list({ num: 3, page: 2 })).items.map((k) => k.name), ['k0']);
  });

  it('turns success:false into an AccountApiError with the server\'s reason', async () => {
    const { client } = account();
    const k = await client.account.tokens.create({ name: 'old', remain_quota: 1000, expired_time: Math.floor(Date.now() / 1000) - 10 });
    await client.account.tokens.setEnabled(k.id, false);
    await assert.rejects(client.account.tokens.setEnabled(k.id, true), (e: unknown) => e instanceof AccountApiError && /令牌已过期/.test(e.message));
    await assert.rejects(client.account.tokens.create({ name: 'x'.repeat(51), unlimited_quota: true }), (e: unknown) => e instanceof ValidationError && /name: name must be at most 50 characters/.test(e.message));
    await assert.rejects(client.account.tokens.create({ name: 'no-quota' }), (e: unknown) => e instanceof ValidationError && /remain_quota: must be above 0 unless unlimited_quota is true/.test(e.message));
  });

  it('says what to fix for a missing, invalid or refused access token and a missing New-Api-User', async () => {
    const { client: none } = clientFor(ctx.emu, { systemAccessToken: undefined });
    await assert.rejects(none.account.self(), (e: unknown) => e instanceof MissingCredentialError && /system access token/.test(e.message));
    const { client: wrong } = clientFor(ctx.emu, { systemAccessToken: 'not-a-token' });
    await assert.rejects(wrong.account.self(), (e: unknown) => e instanceof AccountApiError && e.type === 'authentication_error' && /Set a valid system access token/.test(e.message));

    const { user, client } = account();
    ctx.emu.accountStyle = { ...ctx.emu.accountStyle, requireNewApiUser: true };
    await assert.rejects(client.account.self(), (e: unknown) => e instanceof AccountApiError && /account user id/.test(e.message) && e.status === 401);
    const { client: withId } = clientFor(ctx.emu, { systemAccessToken: user.accessToken, userId: user.id });
    assert.equal((await withId.account.self()).username, user.username);
    assert.equal(ctx.emu.requestsTo('/api/user/self').at(-1)!.headers['new-api-user'], String(user.id));
  });

  it('a 401 from the account API speaks of the access token, not the API key', async () => {
    const { client } = account();
    ctx.emu.inject({ path: '/api/', fault: { kind: 'status', status: 401, body: { success: false, message: 'unauthorized' } } });
    await assert.rejects(client.account.self(), (e: unknown) => e instanceof AccountApiError && !(e instanceof AuthenticationError) && /system access token/.test(e.message));
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

  it('lists all models (map of channel type to ids) and the account\'s models; userToken replaces the token', async () => {
    const { client, user } = account();
    const all = await client.account.models();
    assert.ok(all.includes('gpt-4o') && all.includes('claude-sonnet-emu') && all.includes('text-embedding-3-small'));
    assert.deepEqual(all, [...all].sort());
    assert.ok((await client.account.availableModels()).includes('whisper-1'));
    const old = user.accessToken;
    const fresh = await client.account.userToken();
    assert.notEqual(fresh, old);
    await assert.rejects(client.account.self(), AccountApiError);
    const { client: renewed } = clientFor(ctx.emu, { systemAccessToken: fresh });
    assert.equal((await renewed.account.self()).username, user.username);
  });

  it('masks keys for display', () => {
    assert.equal(maskKey('sk-abcdefghijklmnopqrstuvwxyz'), 'sk-abcd…wxyz');
    assert.equal(maskKey('abcd**********wxyz'), 'sk-abcd…wxyz');
    assert.ok(!maskKey(GatewayEmulator.demoKey).includes('demo-key-0000'));
  });
});
