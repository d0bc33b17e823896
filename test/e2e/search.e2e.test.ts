import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { webviewFrame, ROOT, runPaletteCommand } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');

describe('semantic search and media end to end (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;

  before(async () => {
    mkdirSync(join(ARTIFACTS, 'screenshots'), { recursive: true });
    wb = await startWorkbench({
      codeServer: (e) => ({
        env: demoCredentials(e),
        settings: { 'modelGateway.defaultModels.embeddings': 'embed-emu-256', 'modelGateway.defaultModels.rerank': 'rerank-emu' },
      }),
    });
    ({ emu, page } = wb);
  });

  after(async () => {
    await page?.screenshot({ path: join(ARTIFACTS, 'search-last.png') }).catch(() => undefined);
    await wb?.close();
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
    // Each result says why it matched.
    assert.match(await first.innerText(), /relevance \d\.\d{2} · similarity \d\.\d{2}/);
    // A query both files answer: grouped by file, a separator naming the second file.
    await widget.locator('input').fill('export number string name');
    await widget.locator('.quick-input-list .monaco-list-row', { hasText: 'src/math.ts' }).first().waitFor({ timeout: 30_000 });
    assert.ok((await widget.locator('.quick-input-list-separator', { hasText: /src\/(math|greet)\.ts/ }).count()) >= 1, 'a separator per file');
    await widget.locator('input').fill('greet a person by name hello');
    // The rows of this query (not the previous one's): the words it matched.
    await first.filter({ hasText: /src\/greet\.ts:1-3.*words: greet, name, hello/ }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'search-quickpick.png') });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'greet.ts' }).waitFor({ timeout: 30_000 });
    await page
      .locator('.statusbar-item', { hasText: /\d+ chunks/ })
      .first()
      .waitFor();
  });

  it('generates an image the quick way (prompt, price, done), with the full wizard one click away', async () => {
    await runPaletteCommand(page, 'Model Gateway: Generate Image');
    const quick = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: /^Generate Image$/ }) });
    await quick.waitFor();
    assert.match(await quick.innerText(), /Enter: V3 DEFAULT, 1x1, one image \(\$0\.060/);
    // The gear opens the wizard, the prompt kept: its first question is the model.
    await quick.locator('input').fill('a paper boat on a pond');
    await quick.locator('.quick-input-titlebar [aria-label^="All options"]').click();
    await page.locator('.quick-input-title', { hasText: 'Generate Image (2/8)' }).waitFor();
    await page.keyboard.press('Escape');
    // The quick path: the prompt, then the price, then the image.
    await runPaletteCommand(page, 'Model Gateway: Generate Image');
    await quick.waitFor();
    await quick.locator('input').fill('a paper boat on a pond');
    await page.keyboard.press('Enter');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Generate 1 image for \$0\.060\?/);
    await dialog.getByRole('button', { name: 'Generate' }).click();
    await page.locator('.tab.active', { hasText: /^a-paper-boat-on-a-pond-\d+\.png/ }).waitFor({ timeout: 60_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'image-generated.png') });
  });

  it("with only an API key, the Usage view shows the key's own spend (indexing and the image counted) and says the access token gives the rest", async () => {
    await runPaletteCommand(page, 'Model Gateway: Show Usage and Spend');
    const view = await webviewFrame(page, 'main#app .cards');
    // new-api answers the key's own usage and log: the view names the key and its quota.
    assert.match(await view.locator('#who').innerText(), /API key “demo” · unlimited/);
    assert.match(await view.locator('.card', { hasText: 'Key quota lasts' }).innerText(), /Unlimited/);
    const spent = await view
      .locator('.card', { hasText: /Spent, last \d+ days/ })
      .locator('.card-value')
      .innerText();
    const billed = [...emu.store.keys.values()].find((k) => k.key === GatewayEmulator.demoKey.replace(/^sk-/, ''))!.usedQuota / 500_000;
    assert.ok(billed > 0, 'the key was billed for indexing and the image');
    assert.ok(Math.abs(Number(spent.replace('$', '')) - billed) < 1e-3, `shown ${spent}; the key spent ${billed} on indexing and the image`);
    await view.locator('section', { hasText: 'Recent calls' }).locator('td', { hasText: 'embed-emu-256' }).first().waitFor();
    await view.getByRole('button', { name: 'Set Access Token' }).waitFor();
    assert.equal(await view.locator('#export').isDisabled(), false, "the key's days can be exported");
    await page.screenshot({ path: join(ARTIFACTS, 'screenshots', 'usage-key-only.png') });
  });
});
