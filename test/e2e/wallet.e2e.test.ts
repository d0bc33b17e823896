import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { answerPrompt, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode, webviewFrame } from '../vscode/harness';
import { type Workbench, startWorkbench } from './workbench';
import { until } from '../wait';

const ARTIFACTS = join(ROOT, 'test-results');
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');

/**
 * A person given only an API key by the gateway's operator (new-api): the key's own spend and
 * calls in the Account view, the status bar and the Usage view, with no access token; then, with
 * the access token, a redemption code that raises the balance once.
 */
describe('the key alone, and a redemption code, end to end (code-server, headless Chromium)', function () {
  this.timeout(240_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;
  let secret = '';
  const laptopCalls = () => emu.store.logs.filter((l) => l.tokenName === 'laptop');
  const row = (text: string | RegExp) => page.locator('[id="workbench.view.extension.modelGateway"] .monaco-list-row', { hasText: text });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      emulator: { profile: 'new-api' },
      codeServer: (e) => {
        // The operator's user, and the one key it handed out: limited to $10, used for a week.
        const user = e.store.addUser({ username: 'team', quota: 50_000_000 });
        const key = e.store.addKey({ userId: user.id, name: 'laptop', remainQuota: 5_000_000 });
        secret = key.secret;
        e.store.seedHistory(user.id, 6);
        return { env: { MODEL_GATEWAY_BASE_URL: e.url, MODEL_GATEWAY_API_KEY: key.secret, MODEL_GATEWAY_ACCESS_TOKEN: '' } };
      },
    });
    ({ emu, page } = wb);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `wallet-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it("with the API key alone: the key's quota left in the Account view and the status bar, and its newest calls", async () => {
    const stored = [...emu.store.keys.values()].find((k) => k.name === 'laptop')!;
    const left = `$${(stored.remainQuota / 500_000).toFixed(2)}`;
    await openModelGatewayContainer(page, row('API key “laptop”').first(), 'account');
    const keyRow = row('API key “laptop”').first();
    assert.match(await keyRow.innerText(), new RegExp(`${left.replace('$', '\\$')} left of \\$10\\.00`));
    await page.locator('.statusbar-item', { hasText: left }).first().waitFor({ timeout: 30_000 });
    await keyRow.click();
    // The newest call first: its model and its cost, as the key's own log has it.
    const newest = [...laptopCalls()].sort((a, b) => b.id - a.id)[0];
    const callRow = row(newest.modelName).first();
    await callRow.waitFor({ timeout: 30_000 });
    assert.match(await callRow.innerText(), /\$\d+\.\d{2}/);
    assert.equal(await row('the system access token').count(), 1, 'the access token is offered, not required');
    await page.screenshot({ path: join(SHOTS, 'account-key-only.png') });
    assert.equal(emu.requestsTo('/api/user/self').length, 0, 'nothing asked for the account');
  });

  it("with the API key alone: the Usage view charts the key's spend per day and lists its newest calls", async () => {
    await runPaletteCommand(page, 'Model Gateway: Show Usage and Spend');
    const frame = await webviewFrame(page, 'main#app h1', 'Gateway usage');
    await frame.locator('#who', { hasText: 'API key “laptop”' }).waitFor({ timeout: 30_000 });
    await frame.locator('#chart svg, #chart canvas').first().waitFor({ timeout: 30_000 });
    const recent = frame.locator('section', { hasText: 'Recent calls' });
    await recent.waitFor();
    assert.ok((await recent.locator('tbody tr').count()) >= 10, 'the newest calls listed');
    const total = Number(/\$([\d,]+\.\d+)/.exec(await frame.locator('.card', { hasText: 'Spent, last 7 days' }).innerText())?.[1]?.replace(/,/g, ''));
    const week = new Date();
    const start = new Date(week.getFullYear(), week.getMonth(), week.getDate() - 6).getTime() / 1000;
    const expected =
      laptopCalls()
        .filter((l) => l.createdAt >= start)
        .reduce((n, l) => n + l.quota, 0) / 500_000;
    assert.ok(Math.abs(total - expected) < 0.01, `the key's own spend: ${total} vs ${expected}`);
    await page.screenshot({ path: join(SHOTS, 'usage-key-only.png') });
    assert.ok(emu.requestsTo('/api/log/token').length > 0);
    assert.ok(
      !emu.requests.some((r) => r.path.startsWith('/api/') && r.path !== '/api/pricing' && !r.path.endsWith('/token')),
      'only the key routes and the public prices',
    );
    assert.ok(secret.startsWith('sk-'));
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('a redemption code raises the balance once; the same code again shows the gateway’s message and changes nothing', async () => {
    emu.store.redemptions.set('E2E-GIFT-5', { quota: 2_500_000, status: 1 });
    await runPaletteCommand(page, 'Model Gateway: Set System Access Token');
    await answerPrompt(page, 'Model Gateway: System Access Token', GatewayEmulator.demoAccessToken);
    await answerPrompt(page, 'Model Gateway: Account User Id', String(GatewayEmulator.demoUserId));
    const account = row(/demo\s*\$100\.00/).first();
    await account.waitFor({ timeout: 30_000 });
    // The account row's inline button, as a person finds it.
    await account.hover();
    await account.locator('[aria-label="Redeem a Code…"]').click();
    await answerPrompt(page, 'Redeem a Code', 'E2E-GIFT-5');
    await page.locator('.notifications-toasts', { hasText: 'Redeemed: $5.00 added. The balance is now $105.00.' }).first().waitFor({ timeout: 30_000 });
    await row(/demo\s*\$105\.00/)
      .first()
      .waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'account-redeemed.png') });
    await runPaletteCommand(page, 'Notifications: Clear All Notifications');
    await runPaletteCommand(page, 'Model Gateway: Redeem a Code…');
    await answerPrompt(page, 'Redeem a Code', 'E2E-GIFT-5');
    const refusal = page.locator('.notifications-toasts', { hasText: '该兑换码已被使用' }).first();
    await refusal.waitFor({ timeout: 30_000 });
    await until('the balance unchanged', async () => (await row(/demo\s*\$105\.00/).count()) > 0, 10_000);
    assert.equal(emu.store.users.get(GatewayEmulator.demoUserId)!.quota, 52_500_000);
  });
});
