import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startPgliteServer, type PgliteServer } from '../fixtures/pgliteServer';
import { ROOT, runPaletteCommand } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');

describe('the team store end to end (code-server, headless Chromium, PGlite with pgvector)', function () {
  this.timeout(180_000);
  let store: PgliteServer;
  let wb: Workbench | undefined;
  let page: Page;

  before(async () => {
    mkdirSync(join(ARTIFACTS, 'screenshots'), { recursive: true });
    store = await startPgliteServer();
    wb = await startWorkbench({
      codeServer: (e) => ({
        env: demoCredentials(e),
        settings: { 'modelGateway.defaultModels.embeddings': 'embed-emu-256', 'modelGateway.search.teamStore': store.url },
      }),
    });
    ({ page } = wb);
  });

  after(async () => {
    await page?.screenshot({ path: join(ARTIFACTS, 'team-store-last.png') }).catch(() => undefined);
    await wb?.close();
    await store?.stop();
  });

  const notification = (text: string | RegExp) => page.locator('.notification-list-item', { hasText: text });

  it('a build fills the store, and Team Store Status says what it holds and what the build did', async () => {
    await runPaletteCommand(page, 'Model Gateway: Build or Update the Search Index');
    await page
      .locator('.statusbar-item', { hasText: /\d+ chunks/ })
      .first()
      .waitFor({ timeout: 60_000 });
    await runPaletteCommand(page, 'Model Gateway: Team Store Status');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    const text = await dialog.innerText();
    assert.match(text, /Team store: connected/);
    assert.match(text, /Where: postgres@127\.0\.0\.1:\d+\/postgres/);
    assert.match(text, /Holds: \d+ vectors of embed-emu-256 \(256 dimensions\)/);
    assert.match(text, /The last build and the changes since: took 0 vectors, added \d+/);
    assert.match(text, /Search: on this machine, with the vectors taken from the store/);
    await dialog.getByRole('button', { name: 'Set Password' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'screenshots', 'team-store-status.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('with the store down, a rebuild goes on with this machine’s embeddings and says so once', async () => {
    await store.pause();
    try {
      await runPaletteCommand(page, 'Model Gateway: Rebuild the Search Index');
      const down = notification(/cannot be reached .* Semantic search goes on with this machine's embeddings/);
      await down.waitFor({ timeout: 60_000 });
      await down.getByRole('button', { name: 'Open Settings' }).waitFor();
      await page
        .locator('.statusbar-item', { hasText: /\d+ chunks/ })
        .first()
        .waitFor({ timeout: 60_000 });
      assert.equal(await notification(/cannot be reached/).count(), 1, 'told once');
      // The notification in place (it slides in).
      await page.waitForTimeout(600);
      await page.screenshot({ path: join(ARTIFACTS, 'screenshots', 'team-store-down.png') });
    } finally {
      await store.resume();
    }
  });
});
