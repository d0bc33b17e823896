import { strict as assert } from 'node:assert';
import { AccountApiError, MAX_RECENT_ITEMS } from '../../src/gateway';
import type { ServerProfile } from '../emulator/profiles';
import { clientFor, useEmulator } from './helpers';

/**
 * What new-api offers beyond keys and usage, with the key alone and with the access token, and
 * what one-api answers instead (404s the client takes quietly), against the emulator's profiles.
 * Shapes from new-api `controller/token.go` (GetTokenUsage), `controller/log.go` (GetLogByKey),
 * `controller/user.go` (TopUp), `controller/checkin.go`, `controller/subscription.go`.
 */
describe('the key alone, and the wallet (top-up codes, check-in, plans)', () => {
  const ctx = useEmulator();
  let profile: ServerProfile;
  beforeEach(() => (profile = ctx.emu.profile));
  afterEach(() => {
    ctx.emu.profile = profile;
    ctx.emu.checkin = { enabled: false, minQuota: 100_000, maxQuota: 400_000 };
  });

  /** A fresh user with a limited key that has made calls, and clients for the key and the account. */
  async function userWithCalls(calls: number) {
    const { emu } = ctx;
    const user = emu.store.addUser({ username: `wallet${emu.store.users.size + 1}`, quota: 5_000_000 });
    const key = emu.store.addKey({ userId: user.id, name: 'laptop', remainQuota: 1_000_000 });
    const other = emu.store.addKey({ userId: user.id, name: 'ci', remainQuota: 1_000_000 });
    const keyClient = clientFor(emu, { apiKey: key.secret }).client;
    for (let i = 0; i < calls; i++) await keyClient.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `call ${i}` }] });
    await clientFor(emu, { apiKey: other.secret }).client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from ci' }] });
    const account = clientFor(emu, { systemAccessToken: user.accessToken, userId: user.id, apiKey: undefined }).client;
    return { user, key, keyClient, account };
  }

  it("new-api: the key's own figures and its newest calls, with nothing but the key", async () => {
    ctx.emu.profile = 'new-api';
    const { key, keyClient } = await userWithCalls(3);
    const status = await keyClient.account.key.status();
    const stored = ctx.emu.store.keys.get(key.id)!;
    assert.equal(status.source, 'usage-token');
    assert.equal(status.name, 'laptop');
    assert.equal(status.unlimited, false);
    assert.ok(status.usedDollars > 0);
    assert.equal(status.usedDollars, stored.usedQuota / 500_000);
    assert.equal(status.remainingDollars, stored.remainQuota / 500_000);
    assert.equal(status.limitDollars, (stored.remainQuota + stored.usedQuota) / 500_000);
    const logs = await keyClient.account.key.logs();
    assert.ok(logs);
    assert.equal(logs.items.length, 3, "this key's calls only, not the other key's");
    assert.ok(logs.items.every((l) => l.keyName === 'laptop' && l.model === 'gpt-4o-mini' && l.promptTokens > 0 && l.dollars > 0));
    assert.ok(logs.items[0].at >= logs.items[2].at, 'newest first');
    assert.equal(logs.complete, true, `fewer than ${MAX_RECENT_ITEMS} rows: the whole log`);
  });

  it('new-api answers the key routes as its source does: `code:true` on the usage, 401 `success:false` without a key', async () => {
    ctx.emu.profile = 'new-api';
    const usage = (await (
      await fetch(`${ctx.emu.url}/api/usage/token`, { headers: { authorization: 'Bearer sk-emulator-demo-key-0000000000000000' } })
    ).json()) as Record<string, unknown>;
    assert.equal(usage.code, true);
    assert.equal(usage.message, 'ok');
    assert.ok(!('success' in usage), 'GetTokenUsage has no success field');
    assert.deepEqual(Object.keys(usage.data as object).sort(), [
      'expires_at',
      'model_limits',
      'model_limits_enabled',
      'name',
      'object',
      'total_available',
      'total_granted',
      'total_used',
      'unlimited_quota',
    ]);
    const none = await fetch(`${ctx.emu.url}/api/log/token`);
    assert.equal(none.status, 401);
    assert.deepEqual(await none.json(), { success: false, message: '未提供令牌' });
    const wrong = await fetch(`${ctx.emu.url}/api/log/token`, { headers: { authorization: 'Bearer sk-nope' } });
    assert.deepEqual([wrong.status, await wrong.json()], [401, { success: false, message: '令牌无效' }]);
  });

  it("one-api: the billing routes give the key's totals; the key log is off after one 404, and asked no more", async () => {
    ctx.emu.profile = 'one-api';
    const { keyClient } = await userWithCalls(1);
    const status = await keyClient.account.key.status();
    assert.equal(status.source, 'billing');
    assert.ok(status.usedDollars > 0);
    assert.equal(await keyClient.account.key.logs(), undefined);
    assert.ok(keyClient.account.key.lacks('/api/log/token'));
    const before = ctx.emu.requestsTo('/api/log/token').length;
    assert.equal(await keyClient.account.key.logs(), undefined);
    assert.equal(ctx.emu.requestsTo('/api/log/token').length, before, 'not asked again');
  });

  for (const server of ['new-api', 'one-api'] as const) {
    it(`${server}: a redemption code raises the balance once; a used or unknown code is the gateway's refusal and changes nothing`, async () => {
      ctx.emu.profile = server;
      const { account } = await userWithCalls(0);
      ctx.emu.store.redemptions.set(`gift-${server}`, { quota: 2_500_000, status: 1 });
      const before = (await account.account.self()).balanceDollars;
      const got = await account.account.wallet.redeem(` gift-${server} `);
      assert.deepEqual(got, { quota: 2_500_000, dollars: 5 });
      assert.equal((await account.account.self()).balanceDollars, before + 5);
      await assert.rejects(account.account.wallet.redeem(`gift-${server}`), (e: unknown) => e instanceof AccountApiError && /该兑换码已被使用/.test(e.message));
      await assert.rejects(account.account.wallet.redeem('no-such-code'), (e: unknown) => e instanceof AccountApiError && /无效的兑换码/.test(e.message));
      assert.equal((await account.account.self()).balanceDollars, before + 5, 'the refusals changed nothing');
      const sent = ctx.emu.requestsTo('/api/user/topup').length;
      await assert.rejects(account.account.wallet.redeem('   '), /Enter a redemption code/);
      assert.equal(ctx.emu.requestsTo('/api/user/topup').length, sent, 'an empty code is not sent');
    });
  }

  it('new-api check-in: off unless the operator turns it on; then once a day, the award added to the balance', async () => {
    ctx.emu.profile = 'new-api';
    const { account } = await userWithCalls(0);
    assert.deepEqual(await account.account.wallet.checkinStatus(), { enabled: false, checkedInToday: false });
    ctx.emu.checkin = { enabled: true, minQuota: 100_000, maxQuota: 400_000 };
    const status = await account.account.wallet.checkinStatus();
    assert.equal(status?.enabled, true);
    assert.equal(status?.checkedInToday, false);
    assert.equal(status?.maxDollars, 0.8);
    const before = (await account.account.self()).balanceDollars;
    const got = await account.account.wallet.checkin(status?.nonce);
    assert.equal(got.dollars, 0.5);
    assert.equal((await account.account.self()).balanceDollars, before + 0.5);
    assert.equal((await account.account.wallet.checkinStatus())?.checkedInToday, true);
    await assert.rejects(account.account.wallet.checkin(), (e: unknown) => e instanceof AccountApiError && /今日已签到/.test(e.message));
  });

  it('new-api plans and the plan in use; one-api has neither (undefined, quietly)', async () => {
    ctx.emu.profile = 'new-api';
    const { user, account } = await userWithCalls(0);
    const plans = await account.account.wallet.plans();
    assert.deepEqual(
      plans?.map((p) => [p.title, p.price, p.currency, p.duration.unit, p.includedDollars]),
      [['Pro', 9.9, 'USD', 'month', 20]],
    );
    assert.deepEqual(await account.account.wallet.subscriptions(), []);
    const now = Math.floor(Date.now() / 1000);
    ctx.emu.subscriptions.push({
      id: 99,
      userId: user.id,
      planId: 1,
      amountTotal: 10_000_000,
      amountUsed: 1_000_000,
      startTime: now,
      endTime: now + 86_400,
      status: 'active',
    });
    assert.deepEqual(await account.account.wallet.subscriptions(), [{ planId: 1, endsAt: now + 86_400, usedDollars: 2, totalDollars: 20 }]);
    ctx.emu.profile = 'one-api';
    const { account: old } = await userWithCalls(0);
    assert.equal(await old.account.wallet.plans(), undefined);
    assert.equal(await old.account.wallet.subscriptions(), undefined);
    assert.equal(await old.account.wallet.checkinStatus(), undefined);
  });
});
