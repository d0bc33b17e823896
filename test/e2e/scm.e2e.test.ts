// @vscode-specific: the Source Control view's input box, its menu and the comment threads are the workbench's own parts.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { until } from '../wait';
import { ROOT, runPaletteCommand } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const SHOTS = join(ROOT, 'test-results', 'screenshots');
const SECRET = 'sk-live-0123456789abcdef';

/**
 * Source control through the gateway, as a person meets it in code-server with the built-in Git
 * extension: the button in the commit box writes a message from the staged change in the
 * repository's style (a secret file's lines never sent), and *Review My Changes* puts a finding
 * on the changed line whose *Apply Fix* changes the file.
 */
describe('commit messages and reviews, end to end (code-server, Git, headless Chromium)', function () {
  this.timeout(240_000);
  let wb: Workbench | undefined;
  let page: Page;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: wb!.workspace, encoding: 'utf8' });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      prepare: (ws) => {
        const run = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'ignore' });
        run('init', '-q', '-b', 'main');
        run('config', 'user.email', 'dev@example.com');
        run('config', 'user.name', 'Dev');
        run('add', '.');
        run('commit', '-qm', 'feat: start the sample project');
        writeFileSync(
          join(ws, 'src', 'math.ts'),
          'export const add = (a: number, b: number): number => a + b;\nexport const sub = (a: number, b: number): number => a - b;\n',
        );
        run('commit', '-qam', 'feat(math): add sub');
        // The change to describe: a new function (with a bug a reviewer catches), and a secret file.
        writeFileSync(
          join(ws, 'src', 'greet.ts'),
          'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n\nexport function isAnonymous(name: string): boolean {\n  return name == "";\n}\n',
        );
        writeFileSync(join(ws, '.env'), `API_KEY=${SECRET}\n`);
        run('add', 'src/greet.ts', '.env');
      },
      codeServer: (e) => ({ env: demoCredentials(e), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    page = wb.page;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page
        ?.screenshot({ path: join(ROOT, 'test-results', `scm-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) })
        .catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it("the button in the commit box writes a message from the staged change, in the repository's style; a secret file is named, never read", async () => {
    const emu = wb!.emu;
    await page.keyboard.press('Control+Shift+G');
    const scm = page.locator('.part.sidebar');
    const box = scm.locator('.scm-editor .monaco-editor').first();
    await box.waitFor({ timeout: 60_000 });
    // The staged change is listed before the button is pressed (the Git extension has read the repository).
    await scm.locator('.monaco-list-row', { hasText: 'greet.ts' }).first().waitFor({ timeout: 60_000 });
    // The box's button: ours alone (1.100), or beside VS Code's own "Generate Commit Message"
    // (Copilot's, which a gateway key does not reach): then ours is in the button's drop-down.
    const toolbar = scm.locator('.scm-editor-toolbar').first();
    await toolbar.locator('.action-label').first().waitFor({ timeout: 30_000 });
    const ours = toolbar.locator('.action-label[aria-label="Write a Commit Message"]');
    const before = emu.requestsTo('/v1/chat/completions').length;
    if (await ours.isVisible()) await ours.click();
    else {
      await toolbar.locator('.action-label[aria-label="More Actions..."]').click();
      await page.locator('.context-view .action-label', { hasText: 'Write a Commit Message' }).first().click();
    }
    const boxText = async () => (await box.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
    const message = await until(
      'the message in the box',
      async () => {
        const t = await boxText();
        // The box wraps a long line: words may be split over its lines.
        return /^feat: add isAnonymous to\s+greet\.ts/.test(t) ? t.replace(/\s+/g, ' ') : undefined;
      },
      60_000,
    );
    assert.match(message, /^feat: add isAnonymous to greet\.ts/, 'in the style of the last subjects (conventional commits)');
    await page.screenshot({ path: join(SHOTS, 'scm-commit-message.png') });
    const sent = emu.requestsTo('/v1/chat/completions').slice(before);
    assert.equal(sent.length, 1, 'one request');
    const body = JSON.stringify(sent[0].body);
    assert.ok(body.includes('isAnonymous'), 'the staged diff was sent');
    assert.ok(body.includes('feat(math): add sub'), 'with the recent subjects');
    assert.ok(body.includes('.env (a secret file, not shown)'), 'the secret file named');
    assert.ok(!body.includes(SECRET), "the secret file's lines never sent");
    // The cost shows in the status bar.
    await page
      .locator('.statusbar-item', { hasText: /Commit message by .*tokens/ })
      .first()
      .waitFor({ timeout: 15_000 });
  });

  it('Review My Changes puts a finding on the changed line; Apply Fix changes the file', async () => {
    const emu = wb!.emu;
    const before = emu.requestsTo('/v1/chat/completions').length;
    await runPaletteCommand(page, 'Model Gateway: Review My Changes');
    const picker = page.locator('.quick-input-widget');
    await picker.locator('.monaco-list-row', { hasText: 'Working Tree' }).first().click();
    // The finding's thread opens on its line in the editor.
    const thread = page.locator('.review-widget').filter({ hasText: 'type coercion' }).first();
    await page
      .locator('.notifications-toasts', { hasText: /Review of the working tree: 1 finding\b/ })
      .first()
      .waitFor({ timeout: 60_000 });
    await runPaletteCommand(page, 'Go to File');
    await page.keyboard.type('greet.ts');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'greet.ts' }).first().click();
    await thread.waitFor({ timeout: 30_000 });
    assert.match(((await thread.textContent()) ?? '').replace(/\s+/g, ' '), /Model Gateway review\W+Warning[\s\S]*type coercion[\s\S]*Proposed fix/);
    await page.screenshot({ path: join(SHOTS, 'scm-review-finding.png') });
    const sent = emu.requestsTo('/v1/chat/completions').slice(before);
    assert.equal(sent.length, 1);
    assert.ok(!JSON.stringify(sent[0].body).includes(SECRET), "the secret file's lines never sent");
    // Also in the Problems view, under the review's source.
    await runPaletteCommand(page, 'View: Focus Problems');
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'Model Gateway review' }).first().waitFor({ timeout: 15_000 });
    await thread.locator('.action-label[aria-label="Apply Fix"]').first().click();
    await until('the fix in the file', () => readFileSync(join(wb!.workspace, 'src', 'greet.ts'), 'utf8').includes('return name === "";'), 15_000);
    await thread.waitFor({ state: 'detached', timeout: 10_000 });
    assert.ok(git('diff', '--cached', '--name-only').includes('src/greet.ts'));
    await page.screenshot({ path: join(SHOTS, 'scm-review-fixed.png') });
  });
});
