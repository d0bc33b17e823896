// @vscode-specific: the walkthrough, the palette and the tree are the workbench's own.
import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { answerPrompt, EXTENSION_ID, webviewFrame, openModelGatewayContainer, ROOT, runPaletteCommand } from '../vscode/harness';
import { type Workbench, startWorkbench } from './workbench';
import { until } from '../wait';

const ARTIFACTS = join(ROOT, 'test-results');

/**
 * A step of the walkthrough as the person sees it: visible ones only, since a walkthrough that went
 * back to the Welcome page keeps its steps in the page, hidden, and no longer ticks them.
 */
const walkthroughStep = (step: string) => pageRef.locator(`[data-step-id$="#${step}"]:visible`);

/** Whether the walkthrough shows a step as done (VS Code ticks its checkbox). */
async function stepDone(step: string): Promise<boolean> {
  const box = walkthroughStep(step).locator('.codicon').first();
  return (await box.count()) > 0 && /\bcomplete\b/.test((await box.getAttribute('class')) ?? '');
}
let pageRef: Page;

function treeRow(page: Page, text: string) {
  return page.locator('[id="workbench.view.extension.modelGateway"] .monaco-list-row', { hasText: text });
}

describe('end to end in VS Code for the Web (headless Chromium)', function () {
  this.timeout(180_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Signed out: the credentials are set through the palette, as a new user would.
    wb = await startWorkbench({ codeServer: (e) => ({ env: { MODEL_GATEWAY_BASE_URL: e.url, MODEL_GATEWAY_API_KEY: '', MODEL_GATEWAY_ACCESS_TOKEN: '' } }) });
    ({ emu, page } = wb);
    pageRef = page;
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `account-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
  });

  after(async () => {
    await page?.screenshot({ path: join(ARTIFACTS, 'e2e-last.png') }).catch(() => undefined);
    await wb?.close();
  });

  it('opens the Model Gateway container, which welcomes a new user', async () => {
    await openModelGatewayContainer(page, page.getByText('Set the API key of your gateway account'), 'account');
    await page.locator('[id="workbench.view.extension.modelGateway"]').getByRole('button', { name: 'Set API Key' }).waitFor();
    await page.locator('[id="workbench.view.extension.modelGateway"]').getByRole('button', { name: 'Get Started' }).waitFor();
  });

  it('opens the Get Started walkthrough once, on the first start without a gateway', async () => {
    const walkthrough = page.locator('.part.editor').filter({ hasText: 'Get started with Model Gateway' }).first();
    await walkthrough.waitFor({ timeout: 30_000 });
    for (const step of [
      'Connect your gateway',
      'Check the connection and your balance',
      'Pick your default chat model',
      'Ask your first question',
      'Index the workspace',
      'Turn on inline completions',
      'Write commit messages and review changes',
      'See what you spend',
    ]) {
      await walkthrough.getByText(step, { exact: true }).first().waitFor();
    }
    assert.equal(await stepDone('connect'), false, 'nothing is done yet');
    await page.screenshot({ path: join(ARTIFACTS, 'walkthrough.png') });
  });

  it('sets the API key and the access token through the command palette, then shows the balance', async () => {
    await runPaletteCommand(page, 'Model Gateway: Set API Key');
    await answerPrompt(page, 'Model Gateway: API Key', GatewayEmulator.demoKey);
    await runPaletteCommand(page, 'Model Gateway: Set System Access Token');
    await answerPrompt(page, 'Model Gateway: System Access Token', GatewayEmulator.demoAccessToken);
    // new-api (the emulator's default profile) also wants the user id, asked for at once.
    if (emu.profile === 'new-api') await answerPrompt(page, 'Model Gateway: Account User Id', String(GatewayEmulator.demoUserId));
    const status = page.locator('.statusbar-item', { hasText: 'Model Gateway' });
    await status.filter({ hasText: '$100.00' }).first().waitFor({ timeout: 30_000 });
    // The account row (the key named demo is listed too, and the tree refreshes as credentials land).
    const row = treeRow(page, 'demo').filter({ hasText: '$100.00' }).first();
    await row.waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /^demo\s*\$100\.00/);
    await page.screenshot({ path: join(ARTIFACTS, 'e2e-balance.png') });
    // The walkthrough's first two steps completed as the person did them (the key, then the connection).
    // Asked of the walkthrough as the person sees it: if another editor has come in front of it
    // meanwhile, or it has gone back to the Welcome page (one CI run, and three of seventeen here,
    // timed out with the balance shown and the Welcome tab in front), it is opened again, as the person would, and
    // its steps read there.
    await until(
      'the walkthrough marks the key and the connection done',
      async () => {
        if (!(await walkthroughStep('connect').isVisible())) await runPaletteCommand(page, 'Model Gateway: Get Started');
        return (await stepDone('connect')) && (await stepDone('account'));
      },
      40_000,
    );
    // Done with it, the person closes the walkthrough (it moves on to the next step, and takes the focus, as steps complete).
    await runPaletteCommand(page, 'View: Close All Editors');
    await page
      .locator('.part.editor')
      .filter({ hasText: 'Get started with Model Gateway' })
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => undefined);
  });

  it("the walkthrough's other steps complete as the person does them, from its own buttons", async () => {
    await runPaletteCommand(page, 'Model Gateway: Get Started');
    const walkthrough = page.locator('.part.editor').filter({ hasText: 'Get started with Model Gateway' }).first();
    await walkthrough.waitFor({ timeout: 30_000 });
    /** Opens a step (its title) and presses one of its buttons, as a person reading it does. */
    const press = async (title: string, label: string): Promise<void> => {
      await walkthrough.getByText(title, { exact: true }).first().click();
      await walkthrough.getByRole('button', { name: label, exact: true }).first().click();
    };
    assert.equal(await stepDone('models'), false);
    await press('Pick your default chat model', 'Set a Default Model');
    await answerPrompt(page, 'Choose a model', 'gpt-4o-mini');
    // gpt-4o-mini can do chat and completion, so the command always asks which (waited for, however
    // slow the machine: a CI run on two busy cores took longer than a fixed 2 s to show it).
    await answerPrompt(page, 'Make gpt-4o-mini the default for', 'chat');
    await until('the default model step done', () => stepDone('models'));

    await press('Ask your first question', 'Open Chat');
    const chat = page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().frameLocator('iframe#active-frame');
    const input = chat.locator('#input');
    await input.waitFor({ timeout: 30_000 });
    assert.equal(await stepDone('chat'), false, 'opening the chat is not asking');
    await input.fill('Say hello in a few words');
    await input.press('Enter');
    await chat.locator('.turn.assistant[data-status="done"]').first().waitFor({ timeout: 60_000 });
    await until('the first question step done', () => stepDone('chat'));

    await runPaletteCommand(page, 'Model Gateway: Get Started');
    await press('Index the workspace', 'Build the Search Index');
    await until('the index step done', () => stepDone('index'));
    await until('the index built (the embedding model was called)', () => emu.requests.some((r) => r.path === '/v1/embeddings'));

    await press('Turn on inline completions', 'Choose the Model for Inline Completions');
    await answerPrompt(page, 'Model for inline completions', 'gpt-4o-mini');
    await page.locator('.notifications-toasts', { hasText: 'Inline completions now use gpt-4o-mini' }).first().waitFor({ timeout: 20_000 });
    await until('the completions step done', () => stepDone('completions'));

    await press('See what you spend', 'Show Usage and Spend');
    await webviewFrame(page, 'main#app h1', 'Gateway usage');
    await runPaletteCommand(page, 'Model Gateway: Get Started');
    await until('the usage step done', () => stepDone('usage'));
    for (const step of ['connect', 'account', 'models', 'chat', 'index', 'completions', 'usage']) assert.ok(await stepDone(step), `${step} is ticked`);
    await page.screenshot({ path: join(ARTIFACTS, 'walkthrough-done.png') });
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('creates a key with the wizard and disables it from the tree', async () => {
    await openModelGatewayContainer(page, page.locator('[id="workbench.view.extension.modelGateway"] .pane-header', { hasText: 'Account' }), 'account');
    await page.locator('[id="workbench.view.extension.modelGateway"] .pane-header', { hasText: 'Account' }).hover();
    await page.locator('[id="workbench.view.extension.modelGateway"] [aria-label="Create API Key"]').first().click();
    await answerPrompt(page, 'Create API Key (1/4)', 'e2e-key');
    await answerPrompt(page, 'Create API Key (2/4)', 'Never expires');
    await answerPrompt(page, 'Create API Key (3/4)', '5');
    await answerPrompt(page, 'Create API Key (4/4)', '');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /shown this once/);
    assert.match(await dialog.innerText(), /sk-[0-9a-f]{48}/, 'the new key is shown once');
    await dialog.getByRole('button', { name: 'Copy' }).click();
    const row = treeRow(page, 'e2e-key').first();
    await row.waitFor({ timeout: 30_000 });
    assert.match(await row.innerText(), /\$5\.00 left/);
    // VS Code's menus ignore a click that follows their opening too closely; choose as a keyboard
    // user. The tree can still be refreshing after the creation, which closes an open menu (a full
    // run once saw the item detached): then the person opens it again.
    await until(
      "the key's menu open at Disable Key",
      async () => {
        await row.click({ button: 'right' });
        const ok = await page
          .getByRole('menuitem', { name: 'Disable Key' })
          .hover({ timeout: 5000 })
          .then(
            () => true,
            () => false,
          );
        if (!ok && (await page.locator('.context-view .monaco-menu').isVisible())) await page.keyboard.press('Escape');
        return ok;
      },
      30_000,
    );
    await page.keyboard.press('Enter');
    await treeRow(page, 'e2e-key').filter({ hasText: 'disabled' }).first().waitFor({ timeout: 30_000 });
    const key = [...emu.store.keys.values()].find((k) => k.name === 'e2e-key');
    assert.equal(key?.status, 2, 'the gateway has the key disabled (status 2, as one-api and new-api store it)');
    await page.screenshot({ path: join(ARTIFACTS, 'e2e-keys.png') });
  });
});
