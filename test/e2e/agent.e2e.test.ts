import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');

const PROJECT: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, target: 'es2020', module: 'commonjs', noEmit: true }, include: ['lib'] }),
  'lib/rates.ts': 'export const taxRate = 0.2;\n',
  'lib/invoice.ts': "import { taxRate } from './rates';\n\nexport const invoiceTax = (net: number): number => net * taxRate;\n",
  'lib/quote.ts': "import { taxRate } from './rates';\n\nexport function quoteGross(net: number): number {\n  return net * (1 + taxRate);\n}\n",
  'lib/late.ts': "export const late: number = 'not a number';\n",
  '.github/agents/reviewer.agent.md':
    "---\nname: Reviewer\ndescription: Reviews code; reads and navigates, never edits\ntools: ['codebase', 'usages', 'problems']\n---\nYou are a strict reviewer. Never propose edits.\n",
  '.github/prompts/explain-module.prompt.md':
    '---\ndescription: Explain a module to a newcomer\nagent: ask\n---\nExplain what lib/quote.ts does, for someone new to this code.\n',
};

/**
 * The editor-aware agent in the panel, as a person meets it: a rename across three files in one
 * multi-file diff with one Accept and one Undo; a task from tasks.json asked like a command, its
 * problems in the card; a custom agent in the mode picker; a prompt file after `/`.
 */
describe('the editor-aware agent in the panel (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let wb: Workbench | undefined;
  let page: Page;
  let workspace: string;
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
    await chat()
      .locator('.turn.assistant')
      .nth(answersBefore)
      .and(chat().locator('.turn.assistant:not([data-status="streaming"])'))
      .waitFor({ timeout: 90_000 });
    await chat().locator('#send').waitFor({ state: 'visible' });
  }

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    wb = await startWorkbench({
      prepare: (ws) => {
        for (const [rel, text] of Object.entries(PROJECT)) {
          mkdirSync(join(ws, rel, '..'), { recursive: true });
          writeFileSync(join(ws, rel), text);
        }
        mkdirSync(join(ws, '.vscode'), { recursive: true });
        writeFileSync(
          join(ws, '.vscode', 'tasks.json'),
          JSON.stringify(
            {
              version: '2.0.0',
              tasks: [
                { label: 'check', type: 'process', command: process.execPath, args: [tsc, '-p', '.', '--noEmit', '--pretty', 'false'], problemMatcher: '$tsc' },
              ],
            },
            null,
            2,
          ),
        );
      },
      codeServer: (e) => ({ env: demoCredentials(e), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    ({ page, workspace } = wb);
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const reject of await chat().locator('#approval-bar button', { hasText: 'Reject' }).all()) await reject.click().catch(() => undefined);
      await page.screenshot({ path: join(ARTIFACTS, `agent-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
    }
  });

  after(async () => {
    await wb?.close();
  });

  it('the first edit in a fresh window, before any TypeScript file was opened, is reported with the error it introduced, never as clean', async () => {
    assert.equal(await page.locator('.tab', { hasText: /\.ts\b/ }).count(), 0, 'no TypeScript file was opened yet');
    await ask('Use replace_in_file on src/math.ts to replace "a + b" with "a + c"');
    const bar = chat().locator('#approval-bar');
    // Accepted as soon as it is asked: the language server has had no time to start meanwhile.
    await bar.locator('button', { hasText: 'Accept' }).first().click({ timeout: 60_000 });
    const problems = lastAnswer().locator('.tool-wrap', { hasText: 'replace_in_file' }).first().locator('.problems');
    await problems.waitFor({ timeout: 60_000 });
    const first = await problems.innerText();
    assert.doesNotMatch(first, /No new problems/, 'a broken file is never reported clean');
    // Known at once, or said to be unknown and then updated when the server reports.
    if (/Not checked/.test(first)) await problems.filter({ hasText: /1 new problem/ }).waitFor({ timeout: 60_000 });
    const known = await problems.innerText();
    assert.match(known, /1 new problem/);
    assert.match(known, /src\/math\.ts:1/);
    assert.match(known, /Cannot find name 'c'/);
    await page.screenshot({ path: join(SHOTS, 'agent-cold-first-edit.png') });
    // The model takes its edit back: one more step to accept.
    await bar.locator('button', { hasText: 'Accept' }).first().click({ timeout: 60_000 });
    await idle();
    assert.match(readFileSync(join(workspace, 'src', 'math.ts'), 'utf8'), /a \+ b/);
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('a rename across 3 files: one multi-file diff, one Accept, one Undo that puts all 3 back', async () => {
    const files = ['lib/rates.ts', 'lib/invoice.ts', 'lib/quote.ts'];
    const before = files.map((f) => readFileSync(join(workspace, f), 'utf8'));
    await ask('Rename taxRate to vatRate in lib/rates.ts');
    const row = chat().locator('#approval-bar .approval-row').first();
    await row.waitFor({ timeout: 90_000 });
    const text = await row.innerText();
    assert.match(text, /Rename taxRate to vatRate/);
    assert.match(text, /3 files: .*lib\/rates\.ts/);
    // The diff of every file, in one editor.
    await page.locator('.tab', { hasText: 'proposed change to 3 files' }).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'agent-rename-approval.png') });
    await row.locator('button', { hasText: 'Accept' }).click();
    await idle();
    for (const f of files) assert.match(readFileSync(join(workspace, f), 'utf8'), /vatRate/, f);
    // The proposal's tab goes with the decision: nothing still says "Accept or Reject".
    await page.locator('.tab', { hasText: 'proposed change to 3 files' }).first().waitFor({ state: 'detached', timeout: 10_000 });
    const undo = lastAnswer().locator('.tool-actions button', { hasText: 'Undo (3 files)' });
    await undo.waitFor();
    await page.screenshot({ path: join(SHOTS, 'agent-rename-done.png') });
    await undo.click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Undo the change to 3 files\?/);
    // What the undo changes is shown while the person decides…
    assert.equal(await page.locator('.tab', { hasText: 'Restore: the files as they are' }).count(), 1, 'the restore preview is open while asked');
    await dialog.getByRole('button', { name: 'Undo' }).click();
    await lastAnswer().locator('.tool-actions', { hasText: 'Undone: the 3 files are back' }).waitFor({ timeout: 10_000 });
    assert.deepEqual(
      files.map((f) => readFileSync(join(workspace, f), 'utf8')),
      before,
    );
    // …and closed once it is done (it would show two identical sides).
    await page.locator('.tab', { hasText: 'Restore: the files as they are' }).first().waitFor({ state: 'detached', timeout: 10_000 });
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('a task from tasks.json asks like a command, showing its line; its problems come back in the card', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Run the task "check"');
    const row = chat().locator('#approval-bar .approval-row').first();
    await row.waitFor({ timeout: 60_000 });
    const text = await row.innerText();
    assert.match(text, /task "check" \(tasks\.json/);
    assert.match(text, /typescript\/bin\/tsc -p \. --noEmit/);
    assert.match(text, /tasks\.json always asks/);
    await page.screenshot({ path: join(SHOTS, 'agent-task-approval.png') });
    await row.locator('button', { hasText: 'Run' }).click();
    await idle();
    const card = lastAnswer().locator('details.tool', { hasText: 'run_task' }).first();
    await card.locator('summary').click();
    const result = await card.innerText();
    assert.match(result, /Task "check" .* exited with code [12]/);
    // VS Code 1.100 keeps a task's problems from extensions (the Problems panel has them): the card says so.
    if (testedVsCode() === 'newest') assert.match(result, /lib\/late\.ts:1: error: Type 'string' is not assignable to type 'number'/);
    else assert.match(result, /No problems from its problem matcher reached the chat/);
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'agent-task-done.png') });
  });

  it('a custom agent of the workspace is in the mode picker and named on its answers; a prompt file is a / command that sets its mode', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await chat().locator('#mode option[value="custom:reviewer"]').waitFor({ state: 'attached', timeout: 30_000 });
    await chat().locator('#mode').selectOption('custom:reviewer');
    await chat().locator('#mode option[selected][value="custom:reviewer"]').waitFor({ state: 'attached' });
    await ask('What does lib/quote.ts do?');
    await idle();
    assert.match(await lastAnswer().locator('.who').innerText(), /· Reviewer$/);
    await page.screenshot({ path: join(SHOTS, 'agent-custom-mode.png') });

    const input = chat().locator('#input');
    await input.fill('');
    await input.pressSequentially('/expl');
    await chat().locator('#mentions .mention', { hasText: 'explain-module' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'agent-prompt-file.png') });
    await input.press('Enter');
    await chat().locator('#notice', { hasText: 'From the prompt file explain-module (mode: ask)' }).waitFor({ timeout: 15_000 });
    assert.equal(await input.inputValue(), 'Explain what lib/quote.ts does, for someone new to this code.');
    await chat().locator('#mode option[selected][value="ask"]').waitFor({ state: 'attached' });
    await chat().locator('#mode').selectOption('agent');
  });

  it("a workspace's new MCP server is announced once and waits in a panel line; Review shows its command line and starts it", async () => {
    const everything = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    writeFileSync(
      join(workspace, '.vscode', 'mcp.json'),
      JSON.stringify({ servers: { docs: { command: process.execPath, args: [everything, 'stdio'] } } }, null, 2),
    );
    const toast = page
      .locator('.notification-toast', { hasText: 'start only once you review' })
      .or(page.locator('.notification-toast', { hasText: 'starts only once you review' }));
    await toast.first().waitFor({ timeout: 30_000 });
    assert.match(await toast.first().innerText(), /\.vscode\/mcp\.json defines an MCP server \("docs"\)/);
    const line = chat().locator('#unasked .mcp-waiting');
    await line.waitFor({ timeout: 15_000 });
    assert.match(await line.innerText(), /MCP: "docs" waits for you to review its command line/);
    await page.screenshot({ path: join(SHOTS, 'mcp-waiting.png') });
    await line.locator('button', { hasText: 'Review' }).click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Start the MCP server "docs"[\s\S]*server-everything/);
    await page.screenshot({ path: join(SHOTS, 'mcp-review.png') });
    await dialog.getByRole('button', { name: 'Start Server' }).click();
    await line.waitFor({ state: 'detached', timeout: 30_000 });
  });

  it("a server's request for the model waits in the approval bar with the model, the messages and the price; after Allow the server gets the answer", async () => {
    // The server started by the test before: the servers pick says when it runs, as a person would look.
    const running = page.locator('.quick-input-list .monaco-list-row', { hasText: 'docs' }).filter({ hasText: /running/ });
    for (let tries = 0; ; tries++) {
      await runPaletteCommand(page, 'Model Gateway: MCP Servers');
      if (
        await running.waitFor({ timeout: 3000 }).then(
          () => true,
          () => false,
        )
      )
        break;
      await page.keyboard.press('Escape');
      if (tries > 20) assert.fail('the server "docs" did not start');
    }
    await page.keyboard.press('Escape');
    await ask('Use the trigger sampling request tool with the prompt "Name a colour"');
    const bar = chat().locator('#approval-bar');
    // The tool call asks first (a workspace server's tools ask), then the server's request for the model.
    await bar.locator('.approval-row.tool').waitFor({ timeout: 30_000 });
    await bar.locator('.approval-row.tool button', { hasText: 'Allow' }).first().click();
    const row = bar.locator('.approval-row.sampling');
    await row.waitFor({ timeout: 30_000 });
    const said = await row.innerText();
    assert.match(said.replace(/\s+/g, ' '), /MCP server docs asks gpt-4o-mini · at most \$\d/);
    assert.match(said, /User: Resource trigger-sampling-request context: Name a colour/);
    assert.match(said, /Asks because an MCP server's request to your model is paid from your balance/);
    await page.screenshot({ path: join(SHOTS, 'mcp-sampling-approval.png') });
    await row.locator('button', { hasText: /^\s*Allow\s*$/ }).click();
    await idle();
    const card = lastAnswer().locator('.tool', { hasText: 'trigger-sampling-request' }).first();
    await card.waitFor();
    assert.match((await card.getAttribute('class')) ?? '', /\bdone\b/, 'the call ended well: the server got its answer');
    await page.screenshot({ path: join(SHOTS, 'mcp-sampling-done.png') });
  });

  it("a server's image result is in the tool card, in view without opening it", async () => {
    await ask('Use the get tiny image tool');
    const bar = chat().locator('#approval-bar');
    await bar.locator('.approval-row.tool').waitFor({ timeout: 30_000 });
    await bar.locator('.approval-row.tool button', { hasText: 'Allow' }).first().click();
    await idle();
    const image = lastAnswer().locator('.tool-images img').first();
    await image.waitFor();
    assert.match((await image.getAttribute('alt')) ?? '', /Image 1 returned by docs__get-tiny-image/);
    assert.ok(
      await image.evaluate((img) => (img as { complete: boolean; naturalWidth: number }).complete && (img as { naturalWidth: number }).naturalWidth > 0),
      'the image loads (the panel allows data: images)',
    );
    await page.screenshot({ path: join(SHOTS, 'mcp-image-result.png') });
  });

  it("Configure Tools… lists the server's tools, on; one turned off is not found by the agent any more, and the first request never carried it", async () => {
    const picker = page.locator('.quick-input-widget');
    await runPaletteCommand(page, 'Model Gateway: Configure Tools…');
    const echo = picker.locator('.monaco-list-row', { hasText: 'docs__echo' });
    await echo.waitFor({ timeout: 15_000 });
    assert.match(await picker.innerText(), /MCP server docs/);
    const checked = async () => (await echo.getAttribute('aria-checked')) ?? String(await echo.locator('input[type="checkbox"]').isChecked());
    assert.equal(await checked(), 'true', "an MCP server's tools are on until turned off");
    await page.screenshot({ path: join(SHOTS, 'configure-tools.png') });
    // Narrow the list to the echo tool, turn it off, keep the choice for this workspace.
    await page.keyboard.type('docs__echo');
    await echo.click();
    assert.equal(await checked(), 'false');
    await page.keyboard.press('Enter');
    const scope = picker.locator('.monaco-list-row', { hasText: 'This workspace' });
    await scope.waitFor({ timeout: 10_000 });
    await scope.click();
    await picker.waitFor({ state: 'hidden', timeout: 10_000 });

    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Call the echo tool with "hello"');
    await idle();
    const cards = await lastAnswer().locator('details.tool summary').allInnerTexts();
    assert.ok(
      cards.some((c) => /find_tools/.test(c)),
      `the agent looked for the tool: ${cards.join(' | ')}`,
    );
    assert.ok(!cards.some((c) => /docs__echo/.test(c)), `the echo tool was not offered: ${cards.join(' | ')}`);
    await page.screenshot({ path: join(SHOTS, 'configure-tools-off.png') });
  });
});
