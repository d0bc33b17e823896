// @profile-dependent: usage and logs: each server's log records, its pricing and quota routes.
import { strict as assert } from 'node:assert';
import { GatewayClient, GatewayError, PLACEHOLDER_RATIO, quotaToDollars, type UsageLogEntry } from '../../src/gateway';
import { collectUsage } from '../../src/usage/core/collect';
import { csvCell, toCsv } from '../../src/usage/core/csv';
import { balanceWarning, describeDays, forecast } from '../../src/usage/core/forecast';
import { imageFamilyPrice, PriceBook } from '../../src/common/prices';
import { buildReport, lastDays, localDay, reportCsv } from '../../src/usage/core/report';
import { UNPRICED_MODEL } from '../emulator/usage';
import { clientFor, useEmulator } from './helpers';

const PROFILE = process.env.MODEL_GATEWAY_EMULATOR_PROFILE || 'new-api';
const DAY = 86_400;

/**
 * Spend and usage against the emulator in this run's profile (new-api by default, one-api with
 * MODEL_GATEWAY_EMULATOR_PROFILE=one-api): each user's own calls, billed, must add up.
 */
describe('usage API', () => {
  const ctx = useEmulator();

  /** A user with a key and an access token; `spend` makes real billed relay calls. */
  function account() {
    const user = ctx.emu.store.addUser({ username: `u${ctx.emu.store.users.size + 1}`, quota: 10_000_000 });
    const key = ctx.emu.store.addKey({ userId: user.id, name: `key-${user.id}`, unlimitedQuota: true });
    const { client } = clientFor(ctx.emu, { apiKey: key.secret, systemAccessToken: user.accessToken, userId: user.id });
    const period = () => ({ start: Math.floor(Date.now() / 1000) - DAY, end: Math.floor(Date.now() / 1000) + 60 });
    return { user, key, client, period };
  }

  async function chat(client: GatewayClient, model = 'gpt-4o-mini'): Promise<void> {
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello in a few words.' }] });
  }

  it('reads every billed call from the log, and the calls add up to what the balance lost', async () => {
    const { client, user, period } = account();
    const before = (await client.account.self()).quota;
    for (let i = 0; i < 3; i++) await chat(client);
    await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] });
    const after = (await client.account.self()).quota;
    const logs = await client.account.usage.logs(period());
    assert.equal(logs.complete, true);
    assert.equal(logs.items.length, 4);
    assert.deepEqual(
      logs.items.map((l) => l.model),
      ['text-embedding-3-small', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini'],
      'newest first',
    );
    const spent = logs.items.reduce((n, l) => n + l.quota, 0);
    assert.equal(spent, before - after);
    assert.ok(logs.items.every((l) => l.keyName === `key-${user.id}` && l.promptTokens > 0));
    assert.ok(Math.abs((await client.account.usage.spent(period())) - quotaToDollars(spent)) < 1e-9);
  });

  it('pages through a long log on either server (one-api: 10 a page from 0; new-api: 100 from 1)', async () => {
    const { client, period } = account();
    for (let i = 0; i < 23; i++) await chat(client);
    const asked = () => ctx.emu.requestsTo('/api/log/self').length;
    const n = asked();
    const all = await client.account.usage.logs(period());
    assert.equal(all.items.length, 23);
    assert.equal(new Set(all.items.map((l) => `${l.at}/${l.quota}/${l.promptTokens}`)).size >= 1, true);
    assert.equal(all.complete, true);
    // one-api: pages 0, 1 and 2 of ten; new-api: one page of a hundred.
    assert.equal(asked() - n, PROFILE === 'one-api' ? 3 : 1);
    // A page budget: one-api's ten a page run out first.
    const onePage = await client.account.usage.logs(period(), { maxPages: 1 });
    assert.equal(onePage.complete, PROFILE === 'new-api');
    assert.equal(onePage.items.length, PROFILE === 'new-api' ? 23 : 10);
    const capped = await client.account.usage.logs(period(), { maxRows: 12 });
    assert.equal(capped.complete, false);
    assert.equal(capped.items.length, 12);
  });

  it('reads cache reads and writes of messages-format calls (new-api records them in `other`)', async () => {
    const { client, period } = account();
    const system = [{ type: 'text' as const, text: 'You are terse. '.repeat(400), cache_control: { type: 'ephemeral' as const } }];
    for (let i = 0; i < 2; i++)
      await client.messages.create({ model: 'claude-sonnet-emu', max_tokens: 200, system, messages: [{ role: 'user', content: 'hi' }] });
    const logs = await client.account.usage.logs(period());
    const [second, first] = logs.items as [UsageLogEntry, UsageLogEntry];
    if (PROFILE === 'new-api') {
      assert.ok(first.cacheWrite > 1000, `first call wrote the cache: ${first.cacheWrite}`);
      assert.ok(second.cacheRead > 1000, `second call read it: ${second.cacheRead}`);
    } else {
      // one-api's log has no cache columns.
      assert.equal(first.cacheWrite + second.cacheRead, 0);
    }
  });

  it('reads usage buckets: new-api hourly (30 days a call), one-api its 7-day dashboard', async () => {
    const { client, period } = account();
    await chat(client);
    await chat(client, 'gpt-4o');
    const got = await client.account.usage.buckets(period());
    assert.ok(got);
    assert.equal(got.source, PROFILE === 'new-api' ? 'hourly' : 'daily-7');
    const models = got.buckets.map((b) => b.model).sort();
    assert.deepEqual(models, ['gpt-4o', 'gpt-4o-mini']);
    assert.ok(got.buckets.every((b) => b.requests === 1 && b.dollars > 0));
    if (PROFILE === 'new-api') {
      // 45 days are asked for in two calls: the server refuses more than 30 days at once.
      const now = Math.floor(Date.now() / 1000);
      const n = ctx.emu.requestsTo('/api/data/self').length;
      const long = await client.account.usage.buckets({ start: now - 45 * DAY, end: now + 60 });
      assert.equal(ctx.emu.requestsTo('/api/data/self').length - n, 2);
      assert.equal(long!.buckets.length, 2);
    }
  });

  it('reads prices (new-api) with the placeholder ratio as unknown; one-api publishes none', async () => {
    const { client } = account();
    const prices = await client.account.usage.pricing({ group: 'default' });
    if (PROFILE === 'one-api') {
      assert.equal(prices, undefined);
      return;
    }
    assert.ok(prices);
    const mini = prices.find((p) => p.model === 'gpt-4o-mini')!;
    // Ratio 0.15 = $0.30 per million input tokens; output 4 times; cache reads 0.1 of input.
    assert.ok(Math.abs(mini.inputPerMTok! - 0.3) < 1e-9 && Math.abs(mini.outputPerMTok! - 1.2) < 1e-9);
    assert.ok(Math.abs(mini.cacheReadPerMTok! - 0.03) < 1e-9);
    // The user's group ratio scales every price (a group at 0.5 pays half).
    const vip = (await client.account.usage.pricing({ group: 'vip' }))!.find((p) => p.model === 'gpt-4o-mini')!;
    assert.ok(Math.abs(vip.inputPerMTok! - 0.15) < 1e-9);
    const unpriced = prices.find((p) => p.model === UNPRICED_MODEL)!;
    assert.equal(unpriced.unknown, true);
    assert.equal(unpriced.inputPerMTok, undefined, `never the placeholder ${PLACEHOLDER_RATIO} as a price`);
  });

  it("reads an API key's own limit and use from the billing routes (no access token)", async () => {
    const user = ctx.emu.store.addUser({ username: 'keyonly', quota: 10_000_000 });
    const limited = ctx.emu.store.addKey({ userId: user.id, name: 'limited', remainQuota: 1_000_000 });
    const { client } = clientFor(ctx.emu, { apiKey: limited.secret });
    await chat(client);
    const used = ctx.emu.store.keys.get(limited.id)!.usedQuota;
    const billing = await client.account.usage.keyBilling();
    assert.equal(billing.unlimited, false);
    assert.ok(Math.abs(billing.usedDollars - quotaToDollars(used)) < 1e-9);
    assert.ok(Math.abs(billing.limitDollars! - 2) < 1e-9, 'the limit is what the key was given: remaining + used');
    assert.ok(Math.abs(billing.remainingDollars! - quotaToDollars(1_000_000 - used)) < 1e-9);
    const unlimited = await clientFor(ctx.emu).client.account.usage.keyBilling();
    assert.equal(unlimited.unlimited, true);
    assert.equal(unlimited.limitDollars, undefined);
  });

  it("with the API key alone on new-api: the key's spend per day, models and newest calls from its own log; one-api: its totals", async () => {
    const profile = ctx.emu.profile;
    try {
      ctx.emu.profile = 'new-api';
      const user = ctx.emu.store.addUser({ username: 'keylog', quota: 10_000_000 });
      const mine = ctx.emu.store.addKey({ userId: user.id, name: 'mine', remainQuota: 2_000_000 });
      const theirs = ctx.emu.store.addKey({ userId: user.id, name: 'theirs', remainQuota: 2_000_000 });
      ctx.emu.store.seedHistory(user.id, 5);
      const { client } = clientFor(ctx.emu, { apiKey: mine.secret });
      await chat(client);
      const report = await collectUsage(client, { rangeDays: 7, hasAccessToken: false });
      assert.equal(report.mode, 'full');
      assert.equal(report.scope, 'key');
      assert.equal(report.keyName, 'mine');
      const own = ctx.emu.store.logs.filter((l) => l.tokenId === mine.id);
      const ownDollars = own.reduce((n, l) => n + l.quota, 0) / 500_000;
      assert.ok(own.length > 1 && ctx.emu.store.logs.some((l) => l.tokenId === theirs.id), 'both keys have calls');
      assert.ok(Math.abs(report.totalDollars - ownDollars) < 1e-6, `only this key's spend: ${report.totalDollars} vs ${ownDollars}`);
      assert.deepEqual(
        report.perKey.map((k) => k.name),
        ['mine'],
      );
      assert.equal(report.recentCalls?.[0].model, 'gpt-4o-mini', 'the newest call first');
      assert.ok(report.series.some((s) => s.dollars.some((d) => d > 0)));
      assert.equal(report.key?.remainingDollars, ctx.emu.store.keys.get(mine.id)!.remainQuota / 500_000);
      assert.equal(report.balanceDollars, report.key?.remainingDollars, "the forecast runs on the key's quota");
      ctx.emu.profile = 'one-api';
      const old = clientFor(ctx.emu, { apiKey: mine.secret }).client;
      const totals = await collectUsage(old, { rangeDays: 7, hasAccessToken: false });
      assert.equal(totals.mode, 'key-only');
      assert.ok(Math.abs(totals.key!.usedDollars - ctx.emu.store.keys.get(mine.id)!.usedQuota / 500_000) < 1e-9);
    } finally {
      ctx.emu.profile = profile;
    }
  });

  it('turns a billing answer of HTTP 200 with an error body into an error', async () => {
    const { client } = clientFor(ctx.emu);
    ctx.emu.faults.add({
      path: '/v1/dashboard/billing/usage',
      fault: { kind: 'status', status: 200, body: { error: { message: 'record not found', type: 'new_api_error' } } },
    });
    await assert.rejects(client.account.usage.keyBilling(), (err: unknown) => err instanceof GatewayError && /record not found/.test(err.message));
  });

  it('builds the view from the gateway: CSV rows sum to the total; history forecast from the last 7 days', async () => {
    const { client, user } = account();
    ctx.emu.store.seedHistory(user.id, 10);
    await chat(client);
    const report = await collectUsage(client, { rangeDays: 7, hasAccessToken: true });
    assert.equal(report.days.length, 7);
    assert.equal(report.empty, false);
    const csv = reportCsv(report).trim().split('\r\n');
    assert.equal(csv[0], 'date,model,requests,dollars');
    const sum = csv.slice(1).reduce((n, line) => n + Number(line.split(',').at(-1)), 0);
    assert.ok(Math.abs(sum - report.totalDollars) < 1e-4, `${sum} vs ${report.totalDollars}`);
    const todays = report.series.reduce((n, s) => n + s.dollars.at(-1)!, 0);
    assert.ok(todays > 0 && Math.abs(todays - report.todayDollars) < 1e-9);
    assert.ok(report.forecast && report.forecast.ratePerDay > 0 && report.forecast.basisDays === 7);
    assert.ok(Math.abs(report.balanceDollars! - quotaToDollars(ctx.emu.store.users.get(user.id)!.quota)) < 1e-9);
    // Past the log cap, spend per day comes from the buckets and still adds up to the same total.
    const capped = await collectUsage(client, { rangeDays: 7, hasAccessToken: true, maxLogRows: 5 });
    assert.ok(capped.sampleNote);
    assert.ok(Math.abs(capped.totalDollars - report.totalDollars) < 1e-6, `${capped.totalDollars} vs ${report.totalDollars}`);
  });
});

describe('usage figures', () => {
  const entry = (at: number, model: string, dollars: number, extra: Partial<UsageLogEntry> = {}): UsageLogEntry => ({
    at,
    model,
    keyName: 'k',
    quota: Math.round(dollars * 500_000),
    dollars,
    promptTokens: 100,
    completionTokens: 10,
    cacheRead: 0,
    cacheWrite: 0,
    stream: false,
    ...extra,
  });
  const noon = new Date(2026, 10, 20, 12).getTime();
  const daysAgo = (n: number) => Math.floor(noon / 1000) - n * DAY;

  it('forecasts from the last 7 complete days, a younger history from its first spend', () => {
    const days = lastDays(10, noon).map((day, i) => ({ day, dollars: i < 3 ? 0 : 2 }));
    const f = forecast(14, days, days.at(-1)!.day);
    assert.equal(f.ratePerDay, 2);
    assert.equal(f.daysLeft, 7);
    const young = lastDays(10, noon).map((day, i) => ({ day, dollars: i >= 7 ? 3 : 0 }));
    const g = forecast(12, young, young.at(-1)!.day);
    assert.equal(g.basisDays, 2, 'spend began two days before today');
    assert.equal(g.ratePerDay, 3);
    assert.equal(forecast(5, [], '2026-11-20').daysLeft, Infinity);
    assert.equal(describeDays(Infinity), 'indefinitely (nothing spent lately)');
    assert.equal(describeDays(0.4), 'less than a day');
  });

  it('warns under the low-balance level, or when fewer days are left than the setting says', () => {
    assert.equal(balanceWarning(0.5, { ratePerDay: 0, basisDays: 0, daysLeft: Infinity }, 1, 7)?.kind, 'low');
    assert.equal(balanceWarning(10, { ratePerDay: 2, basisDays: 7, daysLeft: 5 }, 1, 7)?.kind, 'days');
    assert.match(balanceWarning(10, { ratePerDay: 2, basisDays: 7, daysLeft: 5 }, 1, 7)!.text, /lasts 5 more days/);
    assert.equal(balanceWarning(10, { ratePerDay: 1, basisDays: 7, daysLeft: 10 }, 1, 7), undefined);
    assert.equal(balanceWarning(10, { ratePerDay: 2, basisDays: 7, daysLeft: 5 }, 1, 0), undefined, '0 turns the days warning off');
  });

  it('prices a reply from its usage: settings first, then the gateway; unknown stays unknown', () => {
    const book = new PriceBook(
      [
        { model: 'a', kind: 'tokens', inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, unknown: false },
        { model: 'b', kind: 'tokens', unknown: true },
      ],
      { c: { input: 1, output: 2 } },
    );
    // input counts every prompt token, the 2 million read from the cache among them.
    const c = book.cost('a', { input: 3_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 0 });
    assert.ok(Math.abs(c.dollars! - (3 + 1.5 + 0.6)) < 1e-9);
    assert.ok(Math.abs(c.savedDollars! - 5.4) < 1e-9, 'two million tokens read at 0.3 instead of 3');
    assert.equal(book.cost('b', { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }).dollars, undefined);
    assert.equal(book.cost('zzz', { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }).source, 'unknown');
    assert.match(imageFamilyPrice('imagegen-v3-generate')!, /^\$0\.03 \/ \$0\.06 \/ \$0\.09 an image/);
    assert.equal(imageFamilyPrice('gpt-4o'), undefined);
    const fromSettings = book.cost('c', { input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite: 0 });
    assert.equal(fromSettings.source, 'settings');
    assert.equal(fromSettings.dollars, 3);
  });

  it("inline completions' spend counted here becomes a series of its own, taken from its model's and never more than the log says", () => {
    const today = localDay(noon / 1000);
    const yesterday = localDay(daysAgo(1));
    const items = [
      entry(daysAgo(0) - 60, 'codestral', 0.5),
      entry(daysAgo(0) - 50, 'codestral', 0.25),
      entry(daysAgo(0) - 40, 'gpt-4o', 2),
      entry(daysAgo(1), 'codestral', 0.1),
    ];
    const completions = {
      [today]: { byModel: { codestral: { dollars: 0.25, requests: 1 } } },
      // The log lags: more counted here than it holds for yesterday.
      [yesterday]: { byModel: { codestral: { dollars: 0.3, requests: 3 } } },
    };
    const r = buildReport({ rangeDays: 7, nowMs: noon, logs: { items, complete: true }, prices: new PriceBook(undefined), completions });
    const series = Object.fromEntries(r.series.map((x) => [x.name, x.dollars.slice(-2)]));
    assert.deepEqual(series['Inline completions'], [0.1, 0.25]);
    assert.deepEqual(series.codestral, [0, 0.5]);
    assert.deepEqual(series['gpt-4o'], [0, 2]);
    assert.equal(r.totalDollars, 2.85, 'the total is unchanged');
    assert.equal(r.requests, 4);
    const row = r.perModel.find((m) => m.model === 'Inline completions')!;
    assert.equal(row.requests, 2);
    assert.match(row.price, /counted by Model Gateway/);
    assert.ok(!r.rows.some((x) => x.day === yesterday && x.model === 'codestral'), 'a model left with nothing has no row');
  });

  it("an MCP server's sampling spend is a series of its own, beside inline completions, taken from the same model", () => {
    const today = localDay(noon / 1000);
    const items = [entry(daysAgo(0) - 60, 'gpt-4o-mini', 0.5), entry(daysAgo(0) - 50, 'gpt-4o-mini', 0.25), entry(daysAgo(0) - 40, 'gpt-4o-mini', 0.125)];
    const completions = { [today]: { byModel: { 'gpt-4o-mini': { dollars: 0.125, requests: 1 } } } };
    const servers = { everything: { [today]: { byModel: { 'gpt-4o-mini': { dollars: 0.25, requests: 1 } } } } };
    const r = buildReport({ rangeDays: 7, nowMs: noon, logs: { items, complete: true }, prices: new PriceBook(undefined), completions, servers });
    const series = Object.fromEntries(r.series.map((x) => [x.name, x.dollars.at(-1)]));
    assert.equal(series['MCP: everything'], 0.25);
    assert.equal(series['Inline completions'], 0.125);
    assert.equal(series['gpt-4o-mini'], 0.5, "what is left is the chat's");
    assert.equal(r.totalDollars, 0.875, 'the total is unchanged');
    assert.match(r.perModel.find((m) => m.model === 'MCP: everything')!.price, /MCP server "everything" \(sampling\)/);
    // Among many bigger models it keeps its name (not lumped into Other).
    const many = [...items, ...['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'].map((m, i) => entry(daysAgo(0) - 30 + i, m, 5 + i))];
    const crowded = buildReport({ rangeDays: 7, nowMs: noon, logs: { items: many, complete: true }, prices: new PriceBook(undefined), completions, servers });
    assert.ok(
      crowded.series.some((x) => x.name === 'MCP: everything') && crowded.series.some((x) => x.name === 'Inline completions'),
      crowded.series.map((x) => x.name).join(', '),
    );
    assert.equal(crowded.series.length, 6, 'still six series with Other');
  });

  it("commit messages and reviews are series of their own, taken from the chat model's spend, kept by name among bigger models", () => {
    const today = localDay(noon / 1000);
    const items = [entry(daysAgo(0) - 60, 'gpt-4o-mini', 0.5), entry(daysAgo(0) - 50, 'gpt-4o-mini', 0.25), entry(daysAgo(0) - 40, 'gpt-4o-mini', 0.125)];
    const own = {
      'Commit messages': { [today]: { byModel: { 'gpt-4o-mini': { dollars: 0.125, requests: 1 } } } },
      Reviews: { [today]: { byModel: { 'gpt-4o-mini': { dollars: 0.25, requests: 1 } } } },
    };
    const many = [...items, ...['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'].map((m, i) => entry(daysAgo(0) - 30 + i, m, 5 + i))];
    const r = buildReport({ rangeDays: 7, nowMs: noon, logs: { items: many, complete: true }, prices: new PriceBook(undefined), own });
    const series = Object.fromEntries(r.series.map((x) => [x.name, x.dollars.at(-1)]));
    assert.equal(series['Commit messages'], 0.125);
    assert.equal(series.Reviews, 0.25);
    assert.match(r.perModel.find((m) => m.model === 'Reviews')!.price, /counted by Model Gateway/);
  });

  it('stacks spend by model per day, groups the smallest models as Other, and says when there is no data', () => {
    const models = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];
    const items = models.flatMap((m, i) => [entry(daysAgo(1), m, 8 - i), entry(daysAgo(0) - 60, m, 1, { cacheRead: 300, cacheWrite: 100 })]);
    const r = buildReport({ rangeDays: 7, nowMs: noon, logs: { items, complete: true }, prices: new PriceBook(undefined), balanceDollars: 50 });
    assert.deepEqual(
      r.series.map((s) => s.name),
      ['m1', 'm2', 'm3', 'm4', 'm5', 'Other'],
    );
    assert.equal(r.days.at(-1), localDay(noon / 1000));
    assert.equal(r.dailyTotals.at(-1), 8);
    assert.equal(r.totalDollars, 8 + 36);
    assert.equal(r.rows.length, 16, 'the CSV keeps every model, Other included');
    // Reads over all input: 8 × 300 read of 16 × 100 uncached + 8 × 300 read + 8 × 100 written.
    assert.ok(Math.abs(r.tokens.hitRate! - 2400 / 4800) < 1e-9);
    assert.equal(r.perModel[0].priceKnown, false);
    assert.match(r.perModel[0].price, /publishes none/);
    const none = buildReport({ rangeDays: 30, nowMs: noon, logs: { items: [], complete: true }, prices: new PriceBook(undefined) });
    assert.equal(none.empty, true);
    assert.equal(none.days.length, 30);
  });

  it("says which days are unknown when only one-api's 7-day dashboard covers a long log, and forecasts from known days", () => {
    const buckets = [0, 1, 2, 3].map((n) => ({
      at: Date.parse(`${lastDays(7, noon)[6 - n]}T00:00:00Z`) / 1000,
      model: 'm',
      requests: 1,
      quota: 500_000,
      dollars: 1,
      tokens: 10,
    }));
    const logs = { items: [entry(daysAgo(0) - 60, 'm', 1)], complete: false };
    const r = buildReport({ rangeDays: 30, nowMs: noon, logs, buckets: { buckets, source: 'daily-7' }, prices: new PriceBook(undefined), balanceDollars: 10 });
    assert.equal(r.unknownDays.length, 23, 'the 23 days before the dashboard are no data, not $0');
    assert.equal(r.unknownDays.at(-1), lastDays(30, noon)[22]);
    assert.equal(r.totalDollars, 4);
    assert.equal(r.forecast!.basisDays, 3, 'the rate is taken from known days since the first spend');
    assert.match(r.source, /23 days before it are unknown/);
    const csv = reportCsv(r).trim().split('\r\n');
    assert.equal(csv.length, 1 + 4);
  });

  it('with only the newest part of a long log and no buckets, the days before its oldest call are unknown', () => {
    const items = [entry(daysAgo(0) - 60, 'm', 1), entry(daysAgo(2), 'm', 2)];
    const r = buildReport({ rangeDays: 7, nowMs: noon, logs: { items, complete: false, total: 900 }, prices: new PriceBook(undefined) });
    assert.deepEqual(r.unknownDays, lastDays(7, noon).slice(0, 5), 'whole from the day after the oldest call read');
    assert.equal(r.totalDollars, 1, 'only known days count');
    assert.match(r.source, /newest 2 calls/);
  });

  it('writes CSV a spreadsheet cannot run: quotes, and formulas kept as text', () => {
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
    assert.equal(csvCell('-1+2'), "'-1+2");
    assert.equal(toCsv(['a'], [[1], [2]]), 'a\r\n1\r\n2\r\n');
  });
});
