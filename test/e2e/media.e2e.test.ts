import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { png, pngSize, readMp3Text } from '../emulator/media';
import { GatewayEmulator } from '../emulator/server';
import { until } from '../wait';
import { answerPrompt, reloadWindow, ROOT, runPaletteCommand } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');

describe('media commands end to end (code-server, headless Chromium)', function () {
  this.timeout(240_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;
  let workspace: string;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    wb = await startWorkbench({
      prepare: (ws) => writeFileSync(join(ws, 'photo.png'), png(300, 200, 7)),
      codeServer: (e) => ({ env: demoCredentials(e), settings: { 'modelGateway.assets.videoPollSeconds': 1 } }),
    });
    ({ emu, page, workspace } = wb);
  });

  after(async () => {
    await page?.screenshot({ path: join(ARTIFACTS, 'media-last.png') }).catch(() => undefined);
    await wb?.close();
  });

  it('the Explorer context menu of an image offers the image actions; Describe shows the descriptions', async () => {
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'photo.png' });
    await row.waitFor({ timeout: 60_000 });
    // A menu opened before the extension's contributions are registered lacks them: reopen it.
    const entry = page.locator('.context-view .monaco-menu .action-item', { hasText: 'Model Gateway' });
    const end = Date.now() + 60_000;
    for (;;) {
      await row.click({ button: 'right' });
      try {
        await entry.waitFor({ timeout: 3000 });
        break;
      } catch (err) {
        if (Date.now() > end) throw err;
        await page.keyboard.press('Escape');
      }
    }
    await entry.hover();
    const submenu = page.locator('.context-view .monaco-submenu');
    for (const action of ['Remix Image…', 'Edit Image with Mask…', 'Replace Image Background…', 'Upscale Image…', 'Moderate Image']) {
      await submenu.locator('.action-item', { hasText: action }).first().waitFor();
    }
    await page.screenshot({ path: join(ARTIFACTS, 'media-image-menu.png') });
    const pick = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: 'Descriptions of photo.png' }) });
    const describe = submenu.locator('.action-item', { hasText: 'Describe Image' });
    await describe.click();
    // Under load a submenu click can land while the menu is still settling (it stays open and runs
    // nothing): click again while the menu is there and the descriptions are not.
    await until(
      'the descriptions',
      async () => {
        if (await pick.locator('.monaco-list-row', { hasText: 'A 300x200 image' }).isVisible()) return true;
        if (await describe.isVisible()) await describe.click({ timeout: 2000 }).catch(() => undefined);
        return false;
      },
      30_000,
    );
    await page.keyboard.press('Escape');
  });

  it('Speak Selection through the wizard saves a WAV and plays it in the player', async () => {
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'README.md' }).click();
    await page.locator('.tab.active', { hasText: 'README.md' }).waitFor();
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+A');
    // The editor holds the selection (the status bar counts it) before the command reads it.
    await page
      .locator('.statusbar-item', { hasText: /selected/ })
      .first()
      .waitFor({ timeout: 10_000 });
    await runPaletteCommand(page, 'Model Gateway: Speak Selection');
    await answerPrompt(page, 'Speak (1/4)', 'tts-1');
    await answerPrompt(page, 'Speak (2/4)', 'alloy');
    await answerPrompt(page, 'Speak (3/4)', 'wav');
    await answerPrompt(page, 'Speak (4/4)', '1.0');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Speak \d+ characters\?/);
    await dialog.getByRole('button', { name: 'Speak' }).click();
    await page.locator('.tab', { hasText: /▶ speech-sample-project.*\.wav/ }).waitFor({ timeout: 60_000 });
    const saved = readdirSync(join(workspace, 'generated')).filter((f) => f.endsWith('.wav'));
    assert.equal(saved.length, 1);
    // The player's audio element loads the file (the browser reads its real duration).
    const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const audio = frame.locator('audio#player');
    await audio.waitFor({ timeout: 30_000 });
    // (No DOM types in this project's tsconfig: the element is typed by hand.)
    type Audio = { readyState: number; duration: number; addEventListener(type: string, fn: () => void, o: { once: boolean }): void };
    const seconds = await audio.evaluate(
      (el) =>
        new Promise<number>((resolve) => {
          const a = el as unknown as Audio;
          if (a.readyState >= 1) resolve(a.duration);
          else a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
        }),
    );
    const text = readFileSync(join(workspace, 'README.md'), 'utf8');
    assert.ok(Math.abs(seconds - text.length / 15) < 0.5, `${seconds} s`);
    await page.screenshot({ path: join(ARTIFACTS, 'media-player.png') });
  });

  it('a video job started from the palette survives a window reload and is downloaded once, by the new extension host', async () => {
    await runPaletteCommand(page, 'Model Gateway: Generate Video');
    await answerPrompt(page, 'Generate Video (1/5)', 'a lighthouse in a storm');
    await answerPrompt(page, 'Generate Video (2/5)', 'sora-2');
    await answerPrompt(page, 'Generate Video (3/5)', '4');
    await answerPrompt(page, 'Generate Video (4/5)', '1280x720');
    await answerPrompt(page, 'Generate Video (5/5)', 'No reference image');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /sora-2 · 4 s · 1280x720/);
    await dialog.getByRole('button', { name: 'Create' }).click();
    const jobRow = page.getByRole('treeitem').filter({ hasText: 'a lighthouse in a storm' });
    await jobRow.filter({ hasText: 'queued' }).waitFor({ timeout: 30_000 });
    const id = [...emu.videos.keys()].at(-1)!;

    // Reload the window: the extension host goes away with it, and a new one activates from the
    // stored state. Only then does the video complete (the emulator's clock moves).
    const activations = () => emu.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
    const before = activations();
    await reloadWindow(page);
    await until('the new extension host to check the connection', () => activations() > before, 60_000);
    emu.clock.advance(80_000);

    const file = await until(
      'the downloaded video',
      () => {
        const dir = join(workspace, 'generated');
        const mp4 = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith('video-a-lighthouse-in-a-storm') && f.endsWith('.mp4')) : undefined;
        return mp4 && join(dir, mp4);
      },
      60_000,
    );
    assert.equal(readFileSync(file).toString('ascii', 4, 8), 'ftyp');
    // That nothing else downloads it can only be shown by letting time pass: three poll periods
    // (videoPollSeconds is 1), in which a host of the old window would have polled and fetched.
    await new Promise((r) => setTimeout(r, 3000));
    // Downloaded once: no extension host of the old window is still polling.
    assert.equal(emu.requests.filter((r) => r.method === 'GET' && r.path === `/v1/videos/${id}/content`).length, 1);
    assert.equal(readdirSync(join(workspace, 'generated')).filter((f) => f.endsWith('.mp4')).length, 1);
    await runPaletteCommand(page, 'Model Gateway: Focus on Video Jobs View').catch(() => undefined);
    await jobRow.filter({ hasText: 'downloaded' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'media-video-jobs.png') });
  });
  it("music and a Midjourney grid end as files in the assets folder; the grid's U2 makes one upscaled image", async () => {
    const generated = join(workspace, 'generated');
    const filesLike = (re: RegExp) => (existsSync(generated) ? readdirSync(generated).filter((f) => re.test(f)) : []);
    // A song from a description: the price asked first, then two clips saved and the player open.
    await runPaletteCommand(page, 'Model Gateway: Generate Music');
    await answerPrompt(page, 'Generate Music (1/3)', 'Describe the song');
    await answerPrompt(page, 'Generate Music (2/3)', 'a calm song about the sea');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Generate music for \$0\.10/);
    await dialog.getByRole('button', { name: 'Generate' }).click();
    const songRow = page.getByRole('treeitem').filter({ hasText: 'a calm song about' });
    await songRow.waitFor({ timeout: 30_000 });
    emu.clock.advance(60_000);
    const songs = await until('two clips of the song', () => (filesLike(/^music-.*\.mp3$/).length === 2 ? filesLike(/^music-.*\.mp3$/) : undefined), 60_000);
    assert.ok(songs.every((f) => readMp3Text(readFileSync(join(generated, f)))?.text?.includes('a calm song about the sea')));
    await page
      .locator('.tab', { hasText: /▶ music-/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await songRow.filter({ hasText: 'downloaded' }).waitFor({ timeout: 30_000 });

    // A Midjourney grid, then U2 from the notification's follow-up, each with its price.
    await runPaletteCommand(page, 'Model Gateway: Midjourney: Imagine');
    await answerPrompt(page, 'Midjourney: Imagine', 'a paper boat on a pond');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Imagine a grid of 4 images for \$0\.10/);
    await dialog.getByRole('button', { name: 'Imagine' }).click();
    await until('the Midjourney task at the gateway', () => [...emu.tasks.values()].some((t) => t.kind === 'mj'), 30_000);
    emu.clock.advance(40_000);
    const grid = await until('the grid', () => filesLike(/^mj-a-paper-boat-on-a-pond\.png$/)[0], 60_000);
    assert.deepEqual(pngSize(readFileSync(join(generated, grid))), { width: 512, height: 512 });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Midjourney grid ready' });
    await toast.getByRole('button', { name: 'Upscale or Vary…' }).click();
    await answerPrompt(page, 'Upscale or vary', 'U2');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /U2 for \$0\.05/);
    await dialog.getByRole('button', { name: 'Go' }).click();
    await until('the upscale at the gateway', () => [...emu.tasks.values()].some((t) => t.action === 'UPSCALE'), 30_000);
    emu.clock.advance(40_000);
    await until('the upscaled image', () => filesLike(/^mj-a-paper-boat-on-a-pond-u2\.png$/)[0], 60_000);
    await runPaletteCommand(page, 'Model Gateway: Focus on Music and Midjourney View').catch(() => undefined);
    await page.getByRole('treeitem').filter({ hasText: 'U2 · a paper boat' }).filter({ hasText: 'downloaded' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'media-music-midjourney.png') });
  });
});
