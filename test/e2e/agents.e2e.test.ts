import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand } from '../vscode/harness';
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

  /** The Agent Sessions view, by its focus command (the container's icon carries a badge while a session waits). */
  async function showSessions(): Promise<void> {
    await runPaletteCommand(page, 'Model Gateway: Focus on Agent Sessions View');
    await page.locator('.pane-header', { hasText: 'Agent Sessions' }).waitFor({ timeout: 30_000 });
  }

  async function idle(): Promise<void> {
    await chat()
      .locator('.turn.assistant')
      .nth(answersBefore)
      .and(chat().locator('.turn.assistant:not([data-status="streaming"])'))
      .waitFor({ timeout: 90_000 });
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
        // A git repository: background agents work in worktrees of it.
        const id = ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid'];
        execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: ws });
        execFileSync('git', [...id, 'add', '-A'], { cwd: ws });
        execFileSync('git', [...id, 'commit', '-q', '-m', 'start'], { cwd: ws });
      },
      codeServer: (e) => ({ env: demoCredentials(e), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    ({ page } = wb);
    // Each model request waits, as a model server's does: two subagents at once show both running.
    wb.emu.inject({ path: '/v1/chat/completions', fault: { kind: 'slowFirstByte', ms: 700 }, times: Infinity });
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `agents-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
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

  it('a message sent while a reply runs is queued, shown, and sent when the reply ends', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Use read_file on lib/rates.ts and lib/quote.ts #steps=2');
    const input = chat().locator('#input');
    await input.fill('What does lib/report.ts export?');
    await input.press('Enter');
    const row = chat().locator('#queued .queued-row');
    await row.waitFor({ timeout: 10_000 });
    assert.match(await row.innerText(), /What does lib\/report\.ts export\?[\s\S]*queued/);
    assert.equal(await input.inputValue(), '', 'the input is free for the next message');
    await page.screenshot({ path: join(SHOTS, 'agents-queued.png') });
    // The first reply ends, then the queued message goes by itself.
    await chat().locator('.turn.user').nth(1).filter({ hasText: 'What does lib/report.ts export?' }).waitFor({ timeout: 60_000 });
    await row.waitFor({ state: 'detached' });
    answersBefore = 1;
    await idle();
    assert.equal(await chat().locator('.turn.assistant').count(), 2);
    assert.equal(await chat().locator('.turn.assistant').nth(0).getAttribute('data-status'), 'done', 'the first reply ran to its end');
  });

  it('Steer adds a queued message to the running reply: the model reads it with its next request, and it is shown where it went', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Use read_file on lib/rates.ts, lib/invoice.ts and lib/quote.ts #steps=3');
    const input = chat().locator('#input');
    await input.fill('Also say which file imports quoteGross');
    await input.press('Enter');
    const row = chat().locator('#queued .queued-row');
    await row.locator('button', { hasText: 'Steer' }).click({ timeout: 10_000 });
    await idle();
    const steered = lastAnswer().locator('.steered');
    await steered.waitFor({ timeout: 10_000 });
    assert.match(await steered.innerText(), /You, while it worked: Also say which file imports quoteGross/);
    assert.equal(await row.count(), 0, 'nothing left queued');
    assert.equal(await chat().locator('.turn.assistant').count(), 1, 'steering is not a turn of its own');
    const carried = wb!.emu
      .requestsTo('/v1/chat/completions')
      .filter((r) => JSON.stringify(r.body).includes('[The person added while you were working:]\\nAlso say which file imports quoteGross'));
    assert.ok(carried.length >= 1, 'a request of the running turn carried it');
    await steered.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'agents-steered.png') });
  });

  it('a queued message can be taken back to edit or removed: nothing is sent then', async () => {
    await ask('Use read_file on lib/rates.ts and lib/invoice.ts #steps=2');
    const input = chat().locator('#input');
    for (const text of ['First thought', 'Second thought']) {
      await input.fill(text);
      await input.press('Enter');
    }
    const rows = chat().locator('#queued .queued-row');
    await rows.nth(1).waitFor({ timeout: 10_000 });
    await rows.nth(0).locator('button[aria-label="Remove"]').click();
    await rows.nth(1).waitFor({ state: 'detached' });
    await input.fill('typed meanwhile');
    await rows.nth(0).locator('button[aria-label="Edit"]').click();
    await rows.first().waitFor({ state: 'detached' });
    assert.equal(await input.inputValue(), 'Second thought\n\ntyped meanwhile', 'taken back before what was typed: nothing lost');
    await idle();
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await chat().locator('.turn.user', { hasText: 'thought' }).count(), 0, 'neither was sent');
    await input.fill('');
  });

  it('Fork from here: a new conversation with the turns up to that answer, named after the original, which stays whole', async () => {
    const turnsBefore = await chat().locator('.turn.assistant').count();
    assert.ok(turnsBefore >= 2);
    const original = await chat().locator('#title').innerText();
    await chat().locator('.turn.assistant').first().locator('button', { hasText: 'Fork' }).click();
    await chat().locator('.turn.assistant').nth(1).waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await chat().locator('.turn.assistant').count(), 1);
    assert.equal(await chat().locator('.turn.user').count(), 1);
    assert.equal(await chat().locator('#title').innerText(), `${original} (fork)`);
    await page.screenshot({ path: join(SHOTS, 'agents-fork.png') });
    // The fork goes on by itself; the original keeps every turn.
    await ask('What does lib/report.ts export?');
    await idle();
    assert.equal(await chat().locator('.turn.assistant').count(), 2);
    await chat().locator('#history').click();
    await chat()
      .locator('#history-panel .history-open', { hasText: `${original} (fork)` })
      .waitFor();
    await chat().locator('#history-panel .history-open').filter({ hasText: original }).filter({ hasNotText: '(fork)' }).first().click();
    await chat()
      .locator('.turn.assistant')
      .nth(turnsBefore - 1)
      .waitFor({ timeout: 10_000 });
    assert.equal(await chat().locator('.turn.assistant').count(), turnsBefore);
  });

  it('memory: "remember that…" is written only after Accept (the change shown), and read into a new conversation, shown as a chip', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Remember that invoices round to whole cents, for this repository');
    const row = chat().locator('#approval-bar .approval-row').first();
    await row.waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /\.modelgateway\/memory\.md/);
    const file = join(wb!.workspace, '.modelgateway', 'memory.md');
    assert.ok(!existsSync(file), 'nothing is written before the decision');
    await page.screenshot({ path: join(SHOTS, 'agents-memory-approval.png') });
    await row.locator('button', { hasText: 'Accept' }).click();
    await idle();
    assert.match(readFileSync(file, 'utf8'), /^# Memory\n[\s\S]*\n- Invoices round to whole cents\.\n$/);
    await runPaletteCommand(page, 'View: Close All Editors');
    // A new conversation reads it: in the system prompt, and as a chip with its tokens.
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('What does lib/quote.ts do?');
    await idle();
    const system = (wb!.emu.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: { role: string; content: string }[] }).messages[0];
    assert.equal(system.role, 'system');
    assert.match(system.content, /<memory scope="repository" source="\.modelgateway\/memory\.md">[\s\S]*- Invoices round to whole cents\./);
    assert.match(await chat().locator('#rules-in-use').innerText(), /^Memory:\s*\.modelgateway\/memory\.md · \d+/);
    await page.screenshot({ path: join(SHOTS, 'agents-memory-read.png') });
  });

  it('a background session: started with a task, the window used meanwhile, its question answered later, its diff reviewed and applied', async () => {
    const file = join(wb!.workspace, 'lib', 'rates.ts');
    // From the chat: the typed task, then Start in Background; the person starts it with Enter.
    await openModelGatewayContainer(page, chat().locator('#input'));
    await chat().locator('#input').fill('Use replace_in_file on lib/rates.ts to replace "0.2" with "0.25"');
    await chat().locator('#background').click();
    const box = page.locator('.quick-input-widget input');
    await box.waitFor();
    assert.equal(await box.inputValue(), 'Use replace_in_file on lib/rates.ts to replace "0.2" with "0.25"');
    await box.press('Enter');
    await showSessions();
    const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Agent Sessions' }) });
    const row = view.locator('.monaco-list-row', { hasText: 'Use replace_in_file on lib/rates.ts' });
    await row.waitFor({ timeout: 30_000 });
    // Edits ask (auto-approval of edits is off): the question waits in a notification and in the view.
    const toast = page.locator('.notification-toast', { hasText: 'Write its change to lib/rates.ts in its worktree?' });
    await toast.waitFor({ timeout: 30_000 });
    await row.filter({ hasText: 'waiting for you' }).waitFor();
    // Meanwhile the window is the person's: the chat answers another question.
    await openModelGatewayContainer(page, chat().locator('#input'));
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await ask('What does lib/quote.ts do?');
    await idle();
    assert.equal(readFileSync(file, 'utf8'), 'export const taxRate = 0.2;\n', 'nothing of the session reached the workspace');
    await page.screenshot({ path: join(SHOTS, 'agents-background-waiting.png') });
    // Answered later, from the view (the notification may have gone by now).
    await showSessions();
    await row.click();
    await toast.last().locator('.monaco-button', { hasText: 'Accept' }).click();
    await row
      .filter({ hasText: /done · model-gateway\/use-replace-in-file-on-lib-rat-[0-9a-f]{6} · 1 file · [\d,]+ tokens · \$0\.\d{4}/ })
      .waitFor({ timeout: 60_000 });
    assert.equal(readFileSync(file, 'utf8'), 'export const taxRate = 0.2;\n', 'still untouched before Apply');
    // Review: the worktree's diff against its base.
    await row.hover();
    await row.locator('.action-label[aria-label="Review"]').click();
    await page.locator('.tab', { hasText: /Agent session “Use replace_in_file/ }).waitFor({ timeout: 20_000 });
    // Drawn: the base's line and the session's, side by side.
    await page.locator('.monaco-diff-editor .view-line', { hasText: 'taxRate = 0.25' }).first().waitFor({ timeout: 30_000 });
    await page.locator('.monaco-diff-editor .view-line', { hasText: 'taxRate = 0.2;' }).first().waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, 'agents-background-review.png') });
    await row.hover();
    await row.locator('.action-label[aria-label="Apply (Merge)"]').click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(
      await dialog.innerText(),
      /Merge model-gateway\/use-replace-in-file-on-lib-rat-[0-9a-f]{6} into main\? 1 files: 1 insertion\(\+\), 1 deletion\(-\)\.[\s\S]*lib\/rates\.ts/,
    );
    await dialog.getByRole('button', { name: 'Merge' }).click();
    await row.filter({ hasText: 'merged' }).waitFor({ timeout: 20_000 });
    assert.equal(readFileSync(file, 'utf8'), 'export const taxRate = 0.25;\n');
    assert.match(
      execFileSync('git', ['log', '-1', '--format=%s'], { cwd: wb!.workspace, encoding: 'utf8' }),
      /^Merge model-gateway\/use-replace-in-file-on-lib-rat-[0-9a-f]{6}: Use replace_in_file/,
    );
    await page.screenshot({ path: join(SHOTS, 'agents-background-applied.png') });
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('a session survives a window reload: waiting when the window went, stopped after it, taken up again by Resume; Discard removes its worktree and branch', async () => {
    await runPaletteCommand(page, 'Model Gateway: Start in Background');
    const box = page.locator('.quick-input-widget input');
    await box.waitFor();
    await box.fill('Use replace_in_file on lib/quote.ts to replace "1 + taxRate" with "1.0 + taxRate"');
    await box.press('Enter');
    await showSessions();
    const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Agent Sessions' }) });
    const row = view.locator('.monaco-list-row', { hasText: 'Use replace_in_file on lib/quote.ts' });
    await row.filter({ hasText: 'waiting for you' }).waitFor({ timeout: 30_000 });
    await runPaletteCommand(page, 'Developer: Reload Window');
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await showSessions();
    await row.filter({ hasText: 'stopped' }).waitFor({ timeout: 60_000 });
    await page.screenshot({ path: join(SHOTS, 'agents-background-after-reload.png') });
    await row.hover();
    await row.locator('.action-label[aria-label="Resume"]').click();
    const toast = page.locator('.notification-toast', { hasText: 'Write its change to lib/quote.ts in its worktree?' });
    await toast.last().locator('.monaco-button', { hasText: 'Accept' }).click({ timeout: 30_000 });
    await row.filter({ hasText: /done · .* · 1 file · / }).waitFor({ timeout: 60_000 });
    const worktrees = execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: wb!.workspace, encoding: 'utf8' });
    const branch = /branch refs\/heads\/(model-gateway\/use-replace-in-file-on-lib-quo-[0-9a-f]{6})/.exec(worktrees)?.[1];
    assert.ok(branch, worktrees);
    await row.hover();
    await row.locator('.action-label[aria-label="Discard"]').click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Its 1 changed files are lost/);
    await dialog.getByRole('button', { name: 'Discard' }).click();
    await row.waitFor({ state: 'detached', timeout: 20_000 });
    assert.doesNotMatch(execFileSync('git', ['worktree', 'list'], { cwd: wb!.workspace, encoding: 'utf8' }), /use-replace-in-file-on-lib-quo/);
    assert.equal(execFileSync('git', ['branch', '--list', branch], { cwd: wb!.workspace, encoding: 'utf8' }).trim(), '');
    assert.match(readFileSync(join(wb!.workspace, 'lib', 'quote.ts'), 'utf8'), /1 \+ taxRate/, 'the workspace never got it');
  });
});
