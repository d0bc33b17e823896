import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { until } from '../wait';
import { EXTENSION_ID, webviewFrame, openModelGatewayContainer, reloadWindow, ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
/** The screenshots linked from the README. */
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');

/** `$12.34` → 12.34 */
const dollarsOf = (text: string) => Number(/\$([\d,]+\.\d+)/.exec(text)?.[1]?.replace(/,/g, '') ?? NaN);

describe('spend and usage end to end (code-server, headless Chromium)', function () {
  this.timeout(240_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;
  let workspace: string;

  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().frameLocator('iframe#active-frame');

  /** The Usage view's document. */
  const usageFrame = (): Promise<Frame> => webviewFrame(page, 'main#app h1', 'Gateway usage');

  /** The models the demo user spent on in the last `days` local days, as the emulator recorded them. */
  function modelsSpentOn(days: number): Set<string> {
    const d = new Date();
    const start = new Date(d.getFullYear(), d.getMonth(), d.getDate() - (days - 1)).getTime() / 1000;
    return new Set(emu.store.logs.filter((l) => l.userId === GatewayEmulator.demoUserId && l.createdAt >= start && l.quota > 0).map((l) => l.modelName));
  }

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // Ten days of past use, so the chart has days to stack and the forecast a rate.
    wb = await startWorkbench({
      emulator: { historyDays: 10 },
      codeServer: (e) => ({ env: demoCredentials(e, { accessToken: true }), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    ({ emu, page, workspace } = wb);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `usage-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it("a chat answer shows what it cost, and the conversation's total; the status bar shows today's spend", async () => {
    await openModelGatewayContainer(page, chat().locator('#input'));
    const input = chat().locator('#input');
    await input.fill('Say hello in a few words');
    await input.press('Enter');
    const answer = chat().locator('.turn.assistant:not([data-status="streaming"])').last();
    await answer.locator('.usage').waitFor({ timeout: 60_000 });
    // new-api publishes gpt-4o-mini's price; one-api publishes none, so the cost is unknown there.
    const line = await answer.locator('.usage').innerText();
    if (emu.profile === 'new-api') {
      assert.match(line, /· \$0\.\d{4}$/, line);
      assert.match(await chat().locator('.meter-cost').innerText(), /^\$0\.\d{4}$/);
    } else {
      assert.match(line, /cost unknown/, line);
    }
    await page
      .locator('.statusbar-item', { hasText: /today \$\d/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'chat-cost.png') });
  });

  it('opens the Usage view after chat and image calls: the chart stacks a series per model, and the CSV adds up to the spend shown', async () => {
    // An image costs money too (the quick path: prompt, price, generate).
    await runPaletteCommand(page, 'Model Gateway: Generate Image');
    const quick = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: /^Generate Image$/ }) });
    await quick.waitFor();
    await quick.locator('input').fill('a paper boat on a pond');
    await page.keyboard.press('Enter');
    await page.locator('.monaco-dialog-box').getByRole('button', { name: 'Generate' }).click();
    await page.locator('.tab.active', { hasText: /^a-paper-boat-on-a-pond-\d+\.png/ }).waitFor({ timeout: 60_000 });

    await runPaletteCommand(page, 'Model Gateway: Show Usage and Spend');
    const view = await usageFrame();
    const expectedModels = modelsSpentOn(7);
    assert.ok(expectedModels.has('gpt-4o-mini') && expectedModels.has('imagegen-v3-generate'), [...expectedModels].join(', '));
    const expectedSeries = expectedModels.size > 6 ? 6 : expectedModels.size;
    // The chart is drawn: an SVG with one group of bars per series.
    const series = view.locator('#chart svg g.ct-series');
    await until(`${expectedSeries} series in the chart`, async () => (await series.count()) === expectedSeries, 30_000);
    // Each series' group is in the SVG before its bars are (the chart draws as the view sizes it).
    await until('bars drawn for every series', async () => (await view.locator('#chart svg line.ct-bar').count()) >= expectedSeries, 10_000);
    assert.equal(await view.locator('.legend li').count(), expectedSeries);
    assert.match(await view.locator('.legend').innerText(), /imagegen-v3-generate/);
    assert.match((await view.locator('#chart').getAttribute('aria-label')) ?? '', /Spend per day over the last 7 days/);
    // The bars have a size a person can see.
    const box = await view.locator('#chart svg').boundingBox();
    assert.ok(box && box.width > 200 && box.height > 150, JSON.stringify(box));
    const shown = dollarsOf(await view.locator('#total .card-value').innerText());
    const truth =
      emu.store.logs
        .filter((l) => l.userId === GatewayEmulator.demoUserId && l.createdAt >= new Date(new Date().setHours(0, 0, 0, 0) - 6 * 86_400_000).getTime() / 1000)
        .reduce((n, l) => n + l.quota, 0) / 500_000;
    assert.ok(Math.abs(shown - truth) < 0.006, `shown ${shown}, the emulator billed ${truth}`);
    assert.ok(dollarsOf(await view.locator('#today .card-value').innerText()) > 0);
    assert.match(await view.locator('#forecast .card-value').innerText(), /\d+ days|< 1 day/);
    await page.screenshot({ path: join(SHOTS, 'usage-view.png') });

    // Export: VS Code's own save dialog (in the browser: a path in a quick input) offers a name
    // in the workspace; the user takes it.
    await view.locator('#export').click();
    const pathInput = page.locator('.quick-input-widget input');
    await pathInput.waitFor({ timeout: 30_000 });
    await until('the offered file name', async () => /gateway-usage-[\d-]+-to-[\d-]+\.csv$/.test(await pathInput.inputValue()), 30_000);
    await page.keyboard.press('Enter');
    const status = await view.locator('#status', { hasText: /Exported \d+ rows to / }).innerText({ timeout: 30_000 });
    const target = join(workspace, /to (\S+\.csv)\.$/.exec(status)![1]);
    await until('the CSV file', () => existsSync(target), 30_000);
    const lines = readFileSync(target, 'utf8').trim().split(/\r?\n/);
    assert.equal(lines[0], 'date,model,requests,dollars');
    const sum = lines.slice(1).reduce((n, l) => n + Number(l.split(',').at(-1)), 0);
    assert.ok(Math.abs(sum - shown) < 0.006, `the CSV's rows sum to ${sum}, the view shows ${shown}`);
    assert.ok(lines.some((l) => l.includes(',imagegen-v3-generate,')));
  });

  it('says what went wrong when the gateway refuses, with the button that fixes it, and recovers on Refresh', async () => {
    const view = await usageFrame();
    emu.faults.add({ path: '/api/log/self', fault: { kind: 'status', status: 401, message: '无权进行此操作，access token 无效' } });
    await view.locator('#refresh').click();
    const card = view.locator('.error[role="alert"]');
    await card.waitFor({ timeout: 30_000 });
    assert.match(await card.innerText(), /could not be refreshed[\s\S]*refused the system access token/);
    await view.locator('#total').waitFor({ state: 'visible' });
    await card.getByRole('button', { name: 'Set Access Token' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'usage-error.png') });
    emu.faults.clear();
    await view.locator('#refresh').click();
    await view.locator('.error').waitFor({ state: 'detached', timeout: 30_000 });
    await view.locator('#chart svg g.ct-series').first().waitFor({ timeout: 30_000 });
  });

  it('switches to 30 days, is usable narrow, and its table twin lists every day', async () => {
    const view = await usageFrame();
    await view.locator('button[data-range="30"]').click();
    await view.locator('button[data-range="30"][aria-pressed="true"]').waitFor({ timeout: 30_000 });
    await view.locator('#chart svg g.ct-series').first().waitFor({ timeout: 30_000 });
    await view.locator('.as-table summary').click();
    assert.equal(await view.locator('.as-table tbody tr').count(), 30);
    await view.locator('.as-table summary').click();
    const wide = (await view.locator('#chart svg').boundingBox())?.width ?? 0;
    await page.setViewportSize({ width: 700, height: 900 });
    // The chart is drawn again (after its resize debounce) at the narrower width.
    const box = await until('the chart redrawn narrower', async () => {
      const b = await view.locator('#chart svg').boundingBox();
      return b && b.width < wide ? b : undefined;
    });
    assert.ok(box.width > 150, `the chart redraws to the narrower width, still readable (${box.width} px)`);
    await page.screenshot({ path: join(SHOTS, 'usage-narrow.png') });
    await page.setViewportSize({ width: 1400, height: 900 });
    await view.locator('button[data-range="7"]').click();
    await view.locator('button[data-range="7"][aria-pressed="true"]').waitFor({ timeout: 30_000 });
  });

  it('comes back after a window reload with fresh figures (the tab is restored, the data read again)', async () => {
    const reads = () => emu.requests.filter((r) => r.path === '/api/log/self').length;
    const before = reads();
    await reloadWindow(page);
    await page.locator('.tab', { hasText: 'Gateway Usage' }).first().click({ timeout: 60_000 });
    const view = await usageFrame();
    await view.locator('#chart svg g.ct-series').first().waitFor({ timeout: 60_000 });
    assert.ok(reads() > before, 'the restored tab read the log again');
    // The restored tab may draw twice (its saved state, then the fresh figures): the second drawing
    // counts. VS Code may also load the restored webview's document again once the tab is shown, so
    // the chart is looked for in the view's documents as they are now, not in the one found first
    // (a CI run counted 0 series in that one while the screenshot showed all four).
    const expected = Math.min(6, modelsSpentOn(7).size);
    const shown = async () => {
      let most = 0;
      for (const f of page.frames())
        most = Math.max(
          most,
          await f
            .locator('main#app #chart svg g.ct-series')
            .count()
            .catch(() => 0),
        );
      return most;
    };
    await until('the chart shows a series per model', async () => (await shown()) === expected, 30_000).catch(() => undefined);
    assert.equal(await shown(), expected);
  });

  it('follows a dark theme: the chart takes the theme colours', async () => {
    const themed = async () =>
      (await usageFrame())
        .locator('#chart svg .ct-series-a line.ct-bar')
        .first()
        .evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { stroke: string } }).getComputedStyle(el).stroke);
    const light = await themed();
    await runPaletteCommand(page, 'Preferences: Color Theme');
    await page.locator('.quick-input-widget input').fill('Dark Modern');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Dark Modern' }).first().waitFor();
    await page.keyboard.press('Enter');
    await until('the dark theme in the view', async () => (await themed()) !== light, 30_000);
    await page.screenshot({ path: join(SHOTS, 'usage-dark.png') });
    await runPaletteCommand(page, 'Preferences: Color Theme');
    await page.locator('.quick-input-widget input').fill('Light Modern');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Light Modern' }).first().waitFor();
    await page.keyboard.press('Enter');
  });
});
