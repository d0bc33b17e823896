import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

/** The screenshots in Chinese, linked from the README. */
const SHOTS = join(ROOT, 'test-results', testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');
const HAN = /[\u4e00-\u9fff]/;

/**
 * A person whose VS Code speaks Simplified Chinese: code-server started in zh-cn (with a language
 * pack registered, see the harness), so VS Code loads package.nls.zh-cn.json and
 * l10n/bundle.l10n.zh-cn.json for the extension, and the chat webview gets the same bundle.
 */
describe('in Simplified Chinese (code-server --locale zh-cn)', function () {
  this.timeout(180_000);
  let wb: Workbench;
  let page: Page;
  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      codeServer: (e) => ({ env: demoCredentials(e, { accessToken: true }), locale: 'zh-cn', settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    page = wb.page;
  });

  after(async () => {
    await wb?.close();
  });

  it('names its views in Chinese, and its chat panel speaks Chinese', async () => {
    await page.locator('.activitybar [aria-label^="Model Gateway 聊天"]').first().waitFor({ timeout: 60_000 });
    await openModelGatewayContainer(page, chat().locator('#input'), 'chat', 60_000, 'Model Gateway 聊天');
    assert.equal(await chat().locator('#send').getAttribute('aria-label'), '发送');
    assert.match((await chat().locator('#input').getAttribute('placeholder')) ?? '', /^询问有关代码的问题/);
    assert.equal(await chat().locator('html').getAttribute('lang'), 'zh-cn');
    // The welcome text of an empty conversation, in the page a person reads.
    await chat().getByText('关于代码，问什么都可以', { exact: false }).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'zh-cn-chat.png') });
  });

  it('answers, with its usage line in Chinese, and shows a gateway error as a Chinese card with the server\'s own words', async () => {
    const input = chat().locator('#input');
    await input.fill('你好');
    await input.press('Enter');
    const answer = chat().locator('.turn.assistant').first();
    await answer.locator('.usage').waitFor({ timeout: 30_000 });
    assert.match(await answer.locator('.usage').innerText(), /^输入 \d[\d,]* · 输出 \d/);

    wb.emu.inject({ path: '/v1/chat', fault: { kind: 'status', status: 403, body: { error: { message: 'Insufficient balance: the user quota is used up.', type: 'permission_error', code: 'insufficient_user_quota' } } } });
    await input.fill('再来一次？');
    await input.press('Enter');
    const card = chat().locator('.turn.assistant').nth(1).locator('.error-card');
    await card.waitFor({ timeout: 30_000 });
    const text = await card.innerText();
    assert.match(text, /账户余额或此密钥的额度已用尽/, text);
    // The gateway's own message is quoted as it came, untranslated.
    assert.match(text, /Insufficient balance: the user quota is used up\./, text);
    await card.locator('button', { hasText: '充值余额' }).waitFor();
    await card.locator('button', { hasText: '重试' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'zh-cn-error.png') });
  });

  it('shows the Account tree and the status bar in Chinese', async () => {
    await openModelGatewayContainer(page, page.locator('[id="workbench.view.extension.modelGateway"] .monaco-list-row', { hasText: 'API 密钥' }).first(), 'account', 60_000, 'Model Gateway');
    const tree = page.locator('[id="workbench.view.extension.modelGateway"]');
    await tree.locator('.monaco-list-row', { hasText: '模型' }).first().waitFor();
    await tree.locator('.pane-header', { hasText: '账户' }).first().waitFor();
    await tree.locator('.pane-header', { hasText: '视频任务' }).first().waitFor();
    // A key's row: its state, quota and expiry in words of the display language.
    const key = tree.locator('.monaco-list-row', { hasText: 'sk-' }).filter({ hasText: '到期' }).first();
    await key.waitFor({ timeout: 30_000 });
    assert.ok(HAN.test(await key.innerText()));
    await page.screenshot({ path: join(SHOTS, 'zh-cn-account.png') });
  });

  it('lists its commands in the palette in Chinese', async () => {
    await runPaletteCommand(page, 'Model Gateway: 显示用量和花费');
    // The Usage view opens in its own tab, its title and cards in Chinese.
    const usage = page.frameLocator('iframe.webview').last().frameLocator('iframe#active-frame');
    await usage.getByText('今日', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'zh-cn-usage.png') });
  });
});
