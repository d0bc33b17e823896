// @vscode-specific: the walkthrough, the palette and the tree are the workbench's own; the .vsix installs against each engine.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startPgliteServer } from '../fixtures/pgliteServer';
import { GatewayEmulator } from '../emulator/server';
import { answerPrompt, type CodeServer, EXTENSION_ID, launchBrowser, logFiles, webviewFrame, openModelGatewayContainer, openWorkbench, ROOT, runPaletteCommand, sampleWorkspace, startCodeServer } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';
import { until } from '../wait';

const ARTIFACTS = join(ROOT, 'test-results');
/** The folder-name prefix of the empty extension the packaged test installs beside ours (it sorts before `model-gateway.`). */
const FLOOR_ID = 'model-gateway-tests.activation-floor';
/** Its name in Developer: Show Running Extensions. */
const FLOOR_NAME = 'Activation Floor (test)';

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
    if (this.currentTest?.state === 'failed') await page.screenshot({ path: join(ARTIFACTS, `account-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
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
    for (const step of ['Connect your gateway', 'Check the connection and your balance', 'Pick your default chat model', 'Ask your first question', 'Index the workspace', 'Turn on inline completions', 'See what you spend']) {
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
    await until('the walkthrough marks the key and the connection done', async () => {
      if (!(await walkthroughStep('connect').isVisible())) await runPaletteCommand(page, 'Model Gateway: Get Started');
      return (await stepDone('connect')) && (await stepDone('account'));
    }, 40_000);
    // Done with it, the person closes the walkthrough (it moves on to the next step, and takes the focus, as steps complete).
    await runPaletteCommand(page, 'View: Close All Editors');
    await page.locator('.part.editor').filter({ hasText: 'Get started with Model Gateway' }).waitFor({ state: 'detached', timeout: 10_000 }).catch(() => undefined);
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
    await until('the key\'s menu open at Disable Key', async () => {
      await row.click({ button: 'right' });
      const ok = await page.getByRole('menuitem', { name: 'Disable Key' }).hover({ timeout: 5000 }).then(() => true, () => false);
      if (!ok && (await page.locator('.context-view .monaco-menu').isVisible())) await page.keyboard.press('Escape');
      return ok;
    }, 30_000);
    await page.keyboard.press('Enter');
    await treeRow(page, 'e2e-key').filter({ hasText: 'disabled' }).first().waitFor({ timeout: 30_000 });
    const key = [...emu.store.keys.values()].find((k) => k.name === 'e2e-key');
    assert.equal(key?.status, 2, 'the gateway has the key disabled (status 2, as one-api and new-api store it)');
    await page.screenshot({ path: join(ARTIFACTS, 'e2e-keys.png') });
  });
});

describe('the packaged .vsix', function () {
  this.timeout(300_000);

  // The budget was 600 KB until the agent's problems and navigation checks (600.7 KB): raised by 10 KB
  // on purpose, with the next place to find room named in docs/user-guide.md.
  it('stays under 610 KB, installs into code-server, activates, and runs every bundle it holds', async () => {
    const packaged = spawnSync('npm', ['run', 'package'], { cwd: ROOT, encoding: 'utf8' });
    // Packaging builds the minified bundles into dist/: put the test build back for later suites.
    const rebuilt = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(packaged.status, 0, packaged.stdout + packaged.stderr);
    assert.equal(rebuilt.status, 0, rebuilt.stderr);
    const size = statSync(join(ROOT, 'model-gateway.vsix')).size;
    assert.ok(size < 610 * 1024, `the .vsix is ${(size / 1024).toFixed(1)} KB (the budget is 610 KB)`);
    // vsce says nothing to fix (a missing icon, repository, license or changelog is a warning).
    assert.doesNotMatch(packaged.stdout + packaged.stderr, /WARNING/i);
    // Its SHA-256 beside it, as sha256sum writes it.
    const digest = createHash('sha256').update(readFileSync(join(ROOT, 'model-gateway.vsix'))).digest('hex');
    assert.equal(readFileSync(join(ROOT, 'model-gateway.vsix.sha256'), 'utf8'), `${digest}  model-gateway.vsix\n`);
    const emu = await GatewayEmulator.start();
    const store = await startPgliteServer();
    const workspace = sampleWorkspace();
    let server: CodeServer | undefined;
    let browser: Browser | undefined;
    try {
      server = await startCodeServer({
        workspace,
        vsix: join(ROOT, 'model-gateway.vsix'),
        // An extension that does nothing, activated by the same events just before ours (its folder
        // name sorts first): VS Code's figure for it is what VS Code adds to any extension there.
        extraExtensions: [{ folder: join(ROOT, 'test', 'e2e', 'fixtures', 'activation-floor'), id: `${FLOOR_ID}-0.0.1` }],
        env: demoCredentials(emu),
        settings: {
          'modelGateway.defaultModels.chat': 'gpt-4o-mini',
          'modelGateway.defaultModels.embeddings': 'embed-emu-256',
          'modelGateway.search.teamStore': store.url,
          'modelGateway.mcp.servers': { everything: { command: process.execPath, args: [join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'] } },
        },
      });
      browser = await launchBrowser();
      const page = await openWorkbench(browser, server);
      // The status-bar item is created in activate(): its presence shows the extension ran.
      await page.locator('.statusbar-item', { hasText: 'Model Gateway' }).first().waitFor({ timeout: 60_000 });
      const first = await activationAsVsCodeReportsIt(page);
      console.log(`      first start on VS Code ${server.vscode} (no code cache yet), activation as Developer: Show Running Extensions reports it: ${first.ours} ms (an empty extension just before ours: ${first.floor} ms; same page: ${first.others || 'no built-in figures'}); activate() called to returned: ${activateDuration(server.userDataDir)}`);
      console.log(`      activated by the same event before ours (their code loads inside VS Code's figure for ours): ${activatedBefore(server.userDataDir).join(', ') || 'none'}`);
      await page.keyboard.press('Control+W');

      // The chat webview (webview.js, chat.css) through the gateway client (gateway.js, zod.js).
      const chat = page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');
      await openModelGatewayContainer(page, chat.locator('#input'));
      await chat.locator('#input').fill('Hello from the packaged extension');
      await chat.locator('#input').press('Enter');
      await chat.locator('.turn.assistant:not([data-status="streaming"]) .markdown').first().waitFor({ timeout: 60_000 });
      assert.ok((await chat.locator('.turn.assistant .markdown').first().innerText()).trim().length > 0, 'an answer is drawn');
      // MCP (mcp.js): the configured server starts and its prompts are offered after /.
      await chat.locator('#input').fill('');
      await chat.locator('#input').pressSequentially('/args');
      await chat.locator('#mentions .mention', { hasText: 'everything/args-prompt' }).waitFor({ timeout: 60_000 });
      await chat.locator('#input').press('Escape');

      // The search index (searchWorker.js writes its first snapshot) with the team store (teamStore.js).
      await runPaletteCommand(page, 'Model Gateway: Build or Update the Search Index');
      await page.locator('.statusbar-item', { hasText: /\d+ chunks/ }).first().waitFor({ timeout: 60_000 });
      await runPaletteCommand(page, 'Model Gateway: Team Store Status');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(await dialog.innerText(), /Team store: connected/);
      assert.match(await dialog.innerText(), /Holds: [1-9]\d* vectors of embed-emu-256/);
      await page.keyboard.press('Escape');
      // The snapshot was written by the worker's own bundle, not on the extension host for want of it.
      assert.match(hostLog(server.userDataDir), /Search index: snapshots are written in a worker thread/);

      // The Usage view's own bundle (usage.js, usage.css).
      await runPaletteCommand(page, 'Model Gateway: Show Usage and Spend');
      // With an API key only, the view shows the key's own totals (its bundle drew them).
      await webviewFrame(page, 'main#app', /Used on this key/);
      await page.screenshot({ path: join(ARTIFACTS, 'packaged-vsix.png') });

      // Every later start: the shell's compiled code comes from the cache written after the first.
      const cacheDir = join(server.userDataDir, 'User', 'globalStorage', EXTENSION_ID.toLowerCase(), 'code-cache');
      await until('the code cache written after the first start', () => existsSync(cacheDir) && readdirSync(cacheDir).some((f) => f.endsWith('.bin')), 60_000);
      const logsBefore = hostLog(server.userDataDir).split('activated in').length;
      await runPaletteCommand(page, 'Developer: Reload Window');
      await until('the extension activated again', () => hostLog(server!.userDataDir).split('activated in').length > logsBefore, 90_000);
      await page.locator('.statusbar-item', { hasText: 'Model Gateway' }).first().waitFor({ timeout: 60_000 });
      const again = await activationAsVsCodeReportsIt(page);
      console.log(`      later starts (code cache in use): ${again.ours} ms (target ≤ 50 ms; an empty extension just before ours: ${again.floor} ms; same page: ${again.others || 'no built-in figures'}); activate() called to returned: ${activateDuration(server.userDataDir)}`);
      console.log(`      activated by the same event before ours at that start: ${activatedBefore(server.userDataDir).join(', ') || 'none'}`);
    } finally {
      await browser?.close();
      await server?.stop();
      await store.stop();
      await emu.close();
      rmSync(workspace, { recursive: true, force: true, maxRetries: 3 });
    }
  });
});

/** The extension's row in Developer: Show Running Extensions: "Activation: N ms" (code loading plus the activate call, VS Code's own figure). */
async function activationAsVsCodeReportsIt(page: Page): Promise<{ ours: number; floor: number; others: string }> {
  // The list draws only the rows in view, the slowest first: a tall page shows every one.
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: viewport?.width ?? 1400, height: 2400 });
  await runPaletteCommand(page, 'Developer: Show Running Extensions');
  const rows = page.locator('.monaco-list-row').filter({ hasText: /Activation: \d+\s*ms/ });
  await rows.filter({ hasText: 'Model Gateway' }).first().waitFor({ timeout: 30_000 });
  await rows.filter({ hasText: FLOOR_NAME }).first().waitFor({ timeout: 30_000 });
  const figures = new Map<string, number>();
  for (const text of await rows.allInnerTexts()) {
    const m = /Activation: (\d+)\s*ms/.exec(text);
    if (m) figures.set(text.split('\n')[0].trim(), Number(m[1]));
  }
  if (viewport) await page.setViewportSize(viewport);
  const ours = [...figures].find(([name]) => name.startsWith('Model Gateway'));
  assert.ok(ours, `our row among: ${[...figures.keys()].join(', ')}`);
  const floor = figures.get(FLOOR_NAME);
  assert.ok(floor !== undefined, `the empty extension's row among: ${[...figures.keys()].join(', ')}`);
  // The built-in extensions on the same page, measured in the same window: the machine's pace.
  const others = ['Git', 'Merge Conflict', 'Emmet'].flatMap((name) => (figures.has(name) ? [`${name} ${figures.get(name)} ms`] : [])).join(', ');
  return { ours: ours[1], floor, others };
}

/** The extension's own log lines (its output channel, as VS Code writes it under the user data folder), oldest start first. */
function hostLog(userDataDir: string): string {
  return logFiles(userDataDir, ['Model Gateway.log'])
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

/**
 * The extensions the extension host activated for the same event just before ours, in order
 * (its log at info level: "ExtensionService#_doActivateExtension <id>, startup: …, activationEvent: '…'").
 */
function activatedBefore(userDataDir: string): string[] {
  const lines = logFiles(userDataDir, ['exthost.log', 'remoteexthost.log']).flatMap((f) => readFileSync(f, 'utf8').split('\n'));
  const activations = lines.flatMap((l) => {
    const m = /_doActivateExtension ([\w.-]+), startup: \w+, activationEvent: '([^']+)'/.exec(l);
    return m ? [{ id: m[1], event: m[2] }] : [];
  });
  // The latest start's.
  let ours = activations.length - 1;
  while (ours >= 0 && activations[ours].id.toLowerCase() !== EXTENSION_ID.toLowerCase()) ours--;
  if (ours < 0) return [];
  const before: string[] = [];
  for (let i = ours - 1; i >= 0 && activations[i].event === activations[ours].event; i--) before.unshift(activations[i].id);
  return [...before, `(ours by '${activations[ours].event}')`];
}

/** What the extension logs of its latest activation: activate() called to returned, its synchronous part, the bundle's top-level code. */
function activateDuration(userDataDir: string): string {
  const all = [...hostLog(userDataDir).matchAll(/activated in ([\d.]+ ms.*)/g)];
  assert.ok(all.length > 0, 'the extension logs its activation');
  return all[all.length - 1][1];
}
