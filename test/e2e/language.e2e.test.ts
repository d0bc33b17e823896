import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

/** The screenshots in Chinese, linked from the README. */
const SHOTS = join(ROOT, 'test-results', testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');
const HAN = /[\u4e00-\u9fff]/;

/** Drags the side bar to its narrowest (VS Code keeps it at least 170 px wide). */
async function narrowestSideBar(page: Page): Promise<void> {
  await page.setViewportSize({ width: 1000, height: 900 });
  const side = page.locator('.part.sidebar').first();
  const box = await side.boundingBox();
  if (!box) return;
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  // Past the minimum VS Code would hide the side bar (it snaps closed): stop at it.
  await page.mouse.move(box.x + 170, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
}

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

  it("answers, with its usage line in Chinese, and shows a gateway error as a Chinese card with the server's own words", async () => {
    const input = chat().locator('#input');
    await input.fill('你好');
    await input.press('Enter');
    const answer = chat().locator('.turn.assistant').first();
    await answer.locator('.usage').waitFor({ timeout: 30_000 });
    assert.match(await answer.locator('.usage').innerText(), /^输入 \d[\d,]* · 输出 \d/);

    wb.emu.inject({
      path: '/v1/chat',
      fault: {
        kind: 'status',
        status: 403,
        body: { error: { message: 'Insufficient balance: the user quota is used up.', type: 'permission_error', code: 'insufficient_user_quota' } },
      },
    });
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

  it("the agent's approval bar, tool cards and problems in Chinese: no English of ours left, no button broken inside a word in the narrowest side bar", async () => {
    await openModelGatewayContainer(page, chat().locator('#input'), 'chat', 60_000, 'Model Gateway 聊天');
    // A conversation of its own (the one before ended in the gateway's English error, quoted on purpose).
    await runPaletteCommand(page, 'Model Gateway: 新建聊天');
    await chat().locator('.turn').first().waitFor({ state: 'detached', timeout: 30_000 });
    await narrowestSideBar(page);
    const input = chat().locator('#input');
    await input.fill('Use replace_in_file on src/math.ts to replace "a + b" with "a + c"');
    await input.press('Enter');
    const bar = chat().locator('#approval-bar');
    await bar.locator('button', { hasText: '接受' }).waitFor({ timeout: 60_000 });
    // One decision control per step: the card in the turn points to the bar, it has no buttons of its own.
    const turn = chat().locator('.turn.assistant').last();
    await turn.locator('.approval.waiting', { hasText: '请在下方栏中决定' }).waitFor();
    assert.equal(await turn.locator('.approval button').count(), 0, 'no second Accept in the turn');
    assert.match(await bar.innerText(), /编辑\s+src\/math\.ts/);
    await page.screenshot({ path: join(SHOTS, 'zh-cn-agent-approval-narrow.png') });
    assert.deepEqual(await englishLeft(), [], 'the approval state');
    assert.deepEqual(await brokenButtons(), [], 'each button on one line');
    await bar.locator('button', { hasText: '接受' }).click();
    // The edit broke the file: its card says so in Chinese, never "no new problems".
    const problems = turn.locator('.problems').first();
    await problems.waitFor({ timeout: 60_000 });
    assert.match(await problems.innerText(), /1 个新问题|未检查/);
    // The model takes it back: one more step to accept.
    await bar.locator('button', { hasText: '接受' }).waitFor({ timeout: 60_000 });
    await bar.locator('button', { hasText: '接受' }).click();
    await turn.and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor({ timeout: 60_000 });
    await turn.locator('details.tool summary .status', { hasText: '完成' }).first().waitFor();
    await turn.locator('.problems').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'zh-cn-agent-done-narrow.png') });
    assert.deepEqual(await englishLeft(), [], 'the finished turn');
    assert.deepEqual(await brokenButtons(), [], 'each button on one line, finished');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  /**
   * The Latin words of the chat's own text (what the extension says, not what it quotes): answers,
   * code, paths, the problems' messages (the language server's words), model ids and tool names aside.
   */
  async function englishLeft(): Promise<string[]> {
    const words = await chat()
      .locator('body')
      .evaluate((body) => {
        type El = { remove(): void; textContent: string | null; querySelectorAll(s: string): El[]; cloneNode(deep: boolean): El };
        const copy = (body as unknown as El).cloneNode(true);
        for (const el of copy.querySelectorAll(
          '.bar .title, .history, .markdown, pre, code, .inline-diff, .approval-file, .problem span, .turn.user, select, option, .sr-only, .chip, #input, .tool summary b, .who, script, style',
        ))
          el.remove();
        return [...((copy.textContent ?? '').match(/[A-Za-z][A-Za-z'’-]*/g) ?? [])];
      });
    const allowed =
      /^(Model|Gateway|API|ID|MCP|Token|token|Enter|Shift|PNG|JPEG|WEBP|MB|KB|GB|s|ms|ts|M|k|gpt-.*|claude-.*|src|math|Messages|Chat|Completions|Responses)$/;
    return [...new Set(words.filter((w) => !allowed.test(w)))];
  }

  /** Buttons and short labels whose text takes more than one line (a word broken across lines), by their text's line boxes. */
  async function brokenButtons(): Promise<string[]> {
    return chat()
      .locator('body')
      .evaluate((body) => {
        type Rect = { top: number; width: number; height: number };
        type Node = { nodeType: number; textContent: string | null };
        type El = Node & {
          childNodes: Node[];
          getBoundingClientRect(): Rect;
          querySelectorAll(s: string): El[];
          ownerDocument: { createRange(): { selectNodeContents(n: Node): void; getClientRects(): Rect[] } };
        };
        const root = body as unknown as El;
        const out: string[] = [];
        // Buttons, and the short labels beside them: a tool card's state, the approval's verb.
        for (const b of root.querySelectorAll('button, .tool summary .status, .approval-verb, .problems-head')) {
          const r = b.getBoundingClientRect();
          if (r.width === 0 || r.height === 0) continue;
          // The label's own line boxes (the codicon beside it sits on the same line at another height).
          const tops = new Set<number>();
          for (const node of b.childNodes) {
            if (node.nodeType !== 3 || !(node.textContent ?? '').trim()) continue;
            const range = root.ownerDocument.createRange();
            range.selectNodeContents(node);
            for (const x of range.getClientRects()) if (x.width > 0) tops.add(Math.round(x.top));
          }
          if (tops.size > 1) out.push(`${(b.textContent ?? '').trim()} (${tops.size} lines, ${Math.round(r.width)} px)`);
        }
        return out;
      });
  }

  it('shows the Account tree and the status bar in Chinese', async () => {
    await openModelGatewayContainer(
      page,
      page.locator('[id="workbench.view.extension.modelGateway"] .monaco-list-row', { hasText: 'API 密钥' }).first(),
      'account',
      60_000,
      'Model Gateway',
    );
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
