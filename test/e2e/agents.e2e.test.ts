import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { EXTENSION_ID, openModelGatewayContainer, ROOT } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
const SHOTS = join(ARTIFACTS, 'screenshots-newest');

const PROJECT: Record<string, string> = {
  'lib/rates.ts': 'export const taxRate = 0.2;\n',
  'lib/invoice.ts': "import { taxRate } from './rates';\n\nexport const invoiceTax = (net: number): number => net * taxRate;\n",
  'lib/quote.ts': "import { taxRate } from './rates';\n\nexport function quoteGross(net: number): number {\n  return net * (1 + taxRate);\n}\n",
  'lib/report.ts': "import { quoteGross } from './quote';\n\nexport const grossOf = (nets: number[]): number[] => nets.map(quoteGross);\n",
};

/**
 * Several agents at once, as a person meets them in the panel: a question the agent splits
 * between two subagents running in parallel, each with its own card, steps and cost.
 */
describe('several agents: subagents in the panel (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let wb: Workbench | undefined;
  let page: Page;
  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');
  const lastAnswer = () => chat().locator('.turn.assistant').last();
  let answersBefore = 0;

  async function ask(text: string): Promise<void> {
    answersBefore = await chat().locator('.turn.assistant').count();
    const input = chat().locator('#input');
    await input.fill(text);
    await input.press('Enter');
    await chat().locator('.turn.assistant').nth(answersBefore).waitFor({ timeout: 30_000 });
  }

  async function idle(): Promise<void> {
    await chat().locator('.turn.assistant').nth(answersBefore).and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor({ timeout: 90_000 });
    await chat().locator('#send').waitFor({ state: 'visible' });
  }

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      prepare: (ws) => {
        for (const [rel, text] of Object.entries(PROJECT)) {
          mkdirSync(join(ws, rel, '..'), { recursive: true });
          writeFileSync(join(ws, rel), text);
        }
      },
      codeServer: (e) => ({ env: demoCredentials(e), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    ({ page } = wb);
    // Each model request waits, as a model server's does: two subagents at once show both running.
    wb.emu.inject({ path: '/v1/chat/completions', fault: { kind: 'slowFirstByte', ms: 700 }, times: Infinity });
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await page.screenshot({ path: join(ARTIFACTS, `agents-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it('a question answered by 2 subagents in parallel: both run at once, each card with its own steps, tokens and cost', async () => {
    await ask('In parallel, find "taxRate" and "quoteGross"');
    const cards = lastAnswer().locator('.subagent');
    // While they run: both at once (the parallel cap is 3).
    await lastAnswer().locator('.subagent.running').nth(1).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'agents-subagents-running.png') });
    await idle();
    assert.equal(await cards.count(), 2);
    for (const [i, term] of ['taxRate', 'quoteGross'].entries()) {
      const line = await cards.nth(i).locator('.subagent-line').innerText();
      assert.match(line, new RegExp(`find "${term}"`));
      assert.match(line, /gpt-4o-mini · done in \d+\.\d s · 2 requests · [\d,]+ tokens · \$0\.\d{4}/);
    }
    // Its steps fold under it: the task, then its own search.
    await cards.nth(0).locator('.subagent-steps > summary').click();
    const steps = await cards.nth(0).locator('.subagent-steps').innerText();
    assert.match(steps, /Search the text "taxRate"/);
    assert.match(steps, /search_text taxRate/);
    // The answer's line counts them, included in its cost.
    assert.match(await lastAnswer().locator('.usage').innerText(), /2 subagents: [\d,]+ tokens, \$0\.\d{4}, included/);
    // The answer itself is the parent's, from the two subagents' answers.
    assert.match(await lastAnswer().locator('.markdown').last().innerText(), /From the tool results \(2\)/);
    await cards.nth(0).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'agents-subagents-done.png') });
  });
});
