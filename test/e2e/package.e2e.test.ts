// @vscode-specific: the .vsix installs and activates against each engine (engines.vscode, activation events).
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startPgliteServer } from '../fixtures/pgliteServer';
import { GatewayEmulator } from '../emulator/server';
import {
  type CodeServer,
  EXTENSION_ID,
  launchBrowser,
  logFiles,
  webviewFrame,
  openModelGatewayContainer,
  openWorkbench,
  ROOT,
  runPaletteCommand,
  sampleWorkspace,
  startCodeServer,
} from '../vscode/harness';
import { demoCredentials } from './workbench';
import { until } from '../wait';

const ARTIFACTS = join(ROOT, 'test-results');
/** The folder-name prefix of the empty extension the packaged test installs beside ours (it sorts before `model-gateway.`). */
const FLOOR_ID = 'model-gateway-tests.activation-floor';
/** Its name in Developer: Show Running Extensions. */
const FLOOR_NAME = 'Activation Floor (test)';

/**
 * `npm run package` once per `npm test` run: the first VS Code's pass packages (and puts the test
 * build back), the other installs the same file. `npm test` names a folder of its run
 * (`MG_RUN_DIR`) where the first pass records the packaging's exit code, output and digest; the
 * record counts only while the .vsix still has that digest. Run alone, each run packages.
 */
function packageOncePerRun(): { status: number | null; output: string } {
  const vsix = join(ROOT, 'model-gateway.vsix');
  const record = process.env.MG_RUN_DIR ? join(process.env.MG_RUN_DIR, 'packaged.json') : undefined;
  const digestOf = () => (existsSync(vsix) ? createHash('sha256').update(readFileSync(vsix)).digest('hex') : '');
  if (record && existsSync(record)) {
    const earlier = JSON.parse(readFileSync(record, 'utf8')) as { status: number | null; output: string; digest: string };
    if (earlier.digest === digestOf()) {
      console.log('      (the .vsix an earlier pass of this run packaged)');
      return earlier;
    }
  }
  const packaged = spawnSync('npm', ['run', 'package'], { cwd: ROOT, encoding: 'utf8' });
  // Packaging builds the minified bundles into dist/: put the test build back for later suites.
  const rebuilt = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(rebuilt.status, 0, rebuilt.stderr);
  const result = { status: packaged.status, output: packaged.stdout + packaged.stderr };
  if (record) writeFileSync(record, JSON.stringify({ ...result, digest: digestOf() }));
  return result;
}

describe('the packaged .vsix', function () {
  this.timeout(300_000);

  // The budget was 600 KB until the agent's problems and navigation checks (600.7 KB): raised by 10 KB
  // on purpose, with the next place to find room named in docs/user-guide.md. Raised again to 625 KB
  // with next edits, commit messages and reviews (618.0 KB), and to 640 KB with Gemini's own format,
  // the key's own spend and the wallet (redemption codes, check-in, plans): 627.9 KB; to 660 KB with
  // several agents (subagents, queued and steering messages, fork, memory): 645.0 KB, and 653.9 KB
  // with the background agents in git worktrees (src/sessions/); to 670 KB with issue 72's runtime
  // layer and hardening (one tool policy, the git runner, scm per file, the job store): 665.0 KB; to
  // 680 KB with issue 73's sandbox for commands (bubblewrap's boundary, the host proxy): 672.9 KB; to
  // 690 KB with issue 74's fallback chain (the runtime's chain and breaker, the card line, the chain
  // picker, the Usage view's table): 682.3 KB.
  it('stays under 690 KB, installs into code-server, activates, and runs every bundle it holds', async () => {
    const packaged = packageOncePerRun();
    assert.equal(packaged.status, 0, packaged.output);
    const size = statSync(join(ROOT, 'model-gateway.vsix')).size;
    assert.ok(size < 690 * 1024, `the .vsix is ${(size / 1024).toFixed(1)} KB (the budget is 690 KB)`);
    // vsce says nothing to fix (a missing icon, repository, license or changelog is a warning).
    assert.doesNotMatch(packaged.output, /WARNING/i);
    // Its SHA-256 beside it, as sha256sum writes it.
    const digest = createHash('sha256')
      .update(readFileSync(join(ROOT, 'model-gateway.vsix')))
      .digest('hex');
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
          'modelGateway.mcp.servers': {
            everything: {
              command: process.execPath,
              args: [join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
            },
          },
        },
      });
      browser = await launchBrowser();
      const page = await openWorkbench(browser, server);
      // The status-bar item is created in activate(): its presence shows the extension ran.
      await page.locator('.statusbar-item', { hasText: 'Model Gateway' }).first().waitFor({ timeout: 60_000 });
      const first = await activationAsVsCodeReportsIt(page);
      console.log(
        `      first start on VS Code ${server.vscode} (no code cache yet), activation as Developer: Show Running Extensions reports it: ${first.ours} ms (an empty extension just before ours: ${first.floor} ms; same page: ${first.others || 'no built-in figures'}); activate() called to returned: ${activateDuration(server.userDataDir)}`,
      );
      console.log(
        `      activated by the same event before ours (their code loads inside VS Code's figure for ours): ${activatedBefore(server.userDataDir).join(', ') || 'none'}`,
      );
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
      await page
        .locator('.statusbar-item', { hasText: /\d+ chunks/ })
        .first()
        .waitFor({ timeout: 60_000 });
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
      // With an API key only, the view shows the key's own spend and calls (its bundle drew them).
      await webviewFrame(page, 'main#app', /Recent calls/);
      await page.screenshot({ path: join(ARTIFACTS, 'packaged-vsix.png') });

      // Every later start: the shell's compiled code comes from the cache written after the first.
      const cacheDir = join(server.userDataDir, 'User', 'globalStorage', EXTENSION_ID.toLowerCase(), 'code-cache');
      await until('the code cache written after the first start', () => existsSync(cacheDir) && readdirSync(cacheDir).some((f) => f.endsWith('.bin')), 60_000);
      const logsBefore = hostLog(server.userDataDir).split('activated in').length;
      await runPaletteCommand(page, 'Developer: Reload Window');
      await until('the extension activated again', () => hostLog(server!.userDataDir).split('activated in').length > logsBefore, 90_000);
      await page.locator('.statusbar-item', { hasText: 'Model Gateway' }).first().waitFor({ timeout: 60_000 });
      const again = await activationAsVsCodeReportsIt(page);
      console.log(
        `      later starts (code cache in use): ${again.ours} ms (target ≤ 50 ms; an empty extension just before ours: ${again.floor} ms; same page: ${again.others || 'no built-in figures'}); activate() called to returned: ${activateDuration(server.userDataDir)}`,
      );
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
