import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { answerPrompt, launchBrowser, openWorkbench, ROOT, runPaletteCommand, sampleWorkspace, startCodeServer, type CodeServer } from '../vscode/harness';

const ARTIFACTS = join(ROOT, 'test-results');

describe('semantic search and media end to end (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let emu: GatewayEmulator;
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    emu = await GatewayEmulator.start();
    server = await startCodeServer({
      workspace: sampleWorkspace(),
      env: { MODEL_GATEWAY_BASE_URL: emu.url, MODEL_GATEWAY_API_KEY: GatewayEmulator.demoKey },
      settings: { 'modelGateway.defaultModels.embeddings': 'embed-emu-256', 'modelGateway.defaultModels.rerank': 'rerank-emu' },
    });
    browser = await launchBrowser();
    page = await openWorkbench(browser, server);
  });

  after(async () => {
    await page?.screenshot({ path: join(ARTIFACTS, 'search-last.png') }).catch(() => undefined);
    await browser?.close();
    await server?.stop();
    await emu?.close();
  });

  it('offers to build the index, then the quick pick finds the file and opens it at the range', async () => {
    await runPaletteCommand(page, 'Model Gateway: Semantic Search');
    // No index yet: the notification offers to build it.
    await page.locator('.notification-list-item', { hasText: 'no semantic search index yet' }).getByRole('button', { name: 'Build Index' }).click();
    const widget = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: 'Semantic Search' }) });
    await widget.waitFor({ timeout: 60_000 });
    await widget.locator('input').fill('greet a person by name hello');
    const first = widget.locator('.quick-input-list .monaco-list-row').first();
    await first.filter({ hasText: 'src/greet.ts:1-3' }).waitFor({ timeout: 30_000 });
    assert.match(await first.innerText(), /relevance \d\.\d{3}/);
    await page.screenshot({ path: join(ARTIFACTS, 'search-quickpick.png') });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'greet.ts' }).waitFor({ timeout: 30_000 });
    await page.locator('.statusbar-item', { hasText: /\d+ chunks/ }).first().waitFor();
  });

  it('generates an image from the command palette, shows the price first, and opens it in the editor', async () => {
    await runPaletteCommand(page, 'Model Gateway: Generate Image');
    await answerPrompt(page, 'Generate Image (1/8)', 'a paper boat on a pond');
    for (const step of ['(2/8)', '(3/8)', '(4/8)']) await answerPrompt(page, `Generate Image ${step}`, '');
    await answerPrompt(page, 'Generate Image (5/8)', '1');
    for (const step of ['(6/8)', '(7/8)']) await answerPrompt(page, `Generate Image ${step}`, '');
    await answerPrompt(page, 'Generate Image (8/8)', 'seed=42');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Generate 1 image for \$0\.060\?/);
    await dialog.getByRole('button', { name: 'Generate' }).click();
    await page.locator('.tab.active', { hasText: 'a-paper-boat-on-a-pond-42.png' }).waitFor({ timeout: 60_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'image-generated.png') });
  });
});
