/**
 * A real VS Code for tests and the demo: code-server from the cache that
 * scripts/setup-code-server.mjs fills, in the oldest supported version (4.100.3 = VS Code 1.100.3)
 * or the newest (4.139.1 = VS Code 1.139.1, on Node 24): `MODEL_GATEWAY_VSCODE=oldest|newest`
 * picks it. Our extension is unpacked into a fresh extensions folder; headless Chromium
 * (Debian's) is driven by playwright-core.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';

export const ROOT = resolve(__dirname, '..', '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; publisher: string; version: string };
export const EXTENSION_ID = `${PKG.publisher}.${PKG.name}`;

export type VsCodeVersion = 'oldest' | 'newest';

/** The VS Code these tests run on: `MODEL_GATEWAY_VSCODE` (oldest unless said). */
export function testedVsCode(): VsCodeVersion {
  return process.env.MODEL_GATEWAY_VSCODE === 'newest' ? 'newest' : 'oldest';
}

export interface CodeServerInstall {
  dir: string;
  /** The Node that runs this code-server (the machine's, or Node 24 from the cache). */
  node: string;
  vscode: string;
}

/** Runs the setup script (installs code-server, its Node and the Debian packages once). */
export function ensureCodeServer(which: VsCodeVersion = testedVsCode()): CodeServerInstall {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'setup-code-server.mjs'), which], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error('code-server setup failed (see above)');
  return (JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<VsCodeVersion, CodeServerInstall>)[which];
}

/** Copies the built extension (as `vsce` would ship it) into an extensions folder. */
export function installUnpacked(extensionsDir: string): string {
  const target = join(extensionsDir, `${EXTENSION_ID}-${PKG.version}`);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const entry of ['package.json', 'package.nls.json', 'package.nls.zh-cn.json', 'l10n', 'README.md', 'dist', 'media']) {
    if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(target, entry), { recursive: true });
  }
  return target;
}

/**
 * Adds copied extension folders to the extensions folder's list (`extensions.json`): once an
 * installer has written that list (a .vsix installed), VS Code loads only what it names.
 */
function listInstalled(extensionsDir: string, folders: string[]): void {
  const listFile = join(extensionsDir, 'extensions.json');
  if (!existsSync(listFile)) return;
  const list = JSON.parse(readFileSync(listFile, 'utf8')) as unknown[];
  for (const folder of folders) {
    const location = join(extensionsDir, folder);
    const manifest = JSON.parse(readFileSync(join(location, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
    list.push({
      identifier: { id: `${manifest.publisher}.${manifest.name}` },
      version: manifest.version,
      location: { $mid: 1, fsPath: location, external: `file://${location}`, path: location, scheme: 'file' },
      relativeLocation: folder,
      metadata: { installedTimestamp: Date.now(), source: 'vsix' },
    });
  }
  writeFileSync(listFile, JSON.stringify(list));
}

/**
 * The paths of the log files with these names under a user data folder, oldest start first: each
 * window's logs are in a folder named by its start time (exthost1, exthost2… within), read in
 * name order.
 */
export function logFiles(userDataDir: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }))) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (names.includes(e.name)) found.push(join(dir, e.name));
    }
  };
  walk(join(userDataDir, 'logs'));
  return found;
}

export interface CodeServer {
  url: string;
  /** The VS Code version it runs (1.100.3, 1.139.1). */
  vscode: string;
  workspace: string;
  userDataDir: string;
  extensionsDir: string;
  process: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

export interface StartOptions {
  workspace: string;
  /** Which installed VS Code (default: `MODEL_GATEWAY_VSCODE`, else the oldest). */
  vscode?: VsCodeVersion;
  env?: Record<string, string>;
  /** Extra extension folders to copy in (e.g. the integration-test runner). */
  extraExtensions?: { folder: string; id: string; files?: Record<string, string> }[];
  settings?: Record<string, unknown>;
  /** Install this .vsix with code-server's own installer instead of copying the build. */
  vsix?: string;
  port?: number;
  /** Workspace trust on, the folder untrusted (VS Code's Restricted Mode); off otherwise. */
  restrictedMode?: boolean;
  /**
   * The display language (`zh-cn`). VS Code uses a language only when a language pack for it is
   * registered (`languagepacks.json` in the user data folder, naming the pack's core translations):
   * one is registered with no core translations, so the workbench's own words stay English and
   * the extensions (`vscode.env.language`, package.nls.<language>.json, l10n bundles) speak it.
   */
  locale?: string;
}

export async function startCodeServer(options: StartOptions): Promise<CodeServer> {
  const install = ensureCodeServer(options.vscode);
  const installDir = install.dir;
  const base = mkdtempSync(join(tmpdir(), 'mg-vscode-'));
  const userDataDir = join(base, 'user-data');
  const extensionsDir = join(base, 'extensions');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'security.workspace.trust.enabled': !!options.restrictedMode,
        // Restricted Mode without the start-up question: the folder stays untrusted.
        ...(options.restrictedMode ? { 'security.workspace.trust.startupPrompt': 'never' } : {}),
        'telemetry.telemetryLevel': 'off',
        'extensions.autoCheckUpdates': false,
        // Newer VS Codes open their own Chat view in the secondary side bar at start, where it can
        // take the focus from the editor a test just selected text in (older ones ignore this).
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        ...options.settings,
      },
      null,
      2,
    ),
  );
  if (options.locale) {
    const core = join(base, 'language-pack', 'main.i18n.json');
    mkdirSync(dirname(core), { recursive: true });
    writeFileSync(core, JSON.stringify({ contents: {} }));
    writeFileSync(
      join(userDataDir, 'languagepacks.json'),
      JSON.stringify({
        [options.locale]: {
          hash: 'model-gateway-test',
          extensions: [{ extensionIdentifier: { id: 'model-gateway-test.language-pack' }, version: '1.0.0' }],
          translations: { vscode: core },
          label: options.locale,
        },
      }),
    );
  }
  const entry = join(installDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  if (options.vsix) {
    const r = spawnSync(install.node, [entry, '--extensions-dir', extensionsDir, '--user-data-dir', userDataDir, '--install-extension', options.vsix], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`installing ${options.vsix} failed:\n${r.stdout}\n${r.stderr}`);
  } else installUnpacked(extensionsDir);
  for (const extra of options.extraExtensions ?? []) {
    const target = join(extensionsDir, extra.id);
    cpSync(extra.folder, target, { recursive: true });
    for (const [name, text] of Object.entries(extra.files ?? {})) writeFileSync(join(target, name), text);
  }
  listInstalled(
    extensionsDir,
    (options.extraExtensions ?? []).map((e) => e.id),
  );
  const child = spawn(
    install.node,
    [
      entry,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${options.port ?? 0}`,
      '--disable-telemetry',
      '--disable-update-check',
      ...(options.restrictedMode ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--extensions-dir',
      extensionsDir,
      '--user-data-dir',
      userDataDir,
      ...(options.locale ? ['--locale', options.locale] : []),
      options.workspace,
    ],
    // Its own process group: stopping it ends the extension host and the language servers it
    // started too (a TypeScript server left running writes into the temp folder after the run).
    { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start in 60 s:\n${output}`)), 60_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolvePromise(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    vscode: install.vscode,
    workspace: options.workspace,
    userDataDir,
    extensionsDir,
    process: child,
    output: () => output,
    stop: async () => {
      const group = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // The group is gone already.
        }
      };
      if (child.exitCode === null) {
        group('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
      }
      group('SIGKILL');
      // Its profile, extensions and logs go with it (read the logs before stopping).
      rmSync(base, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

/** Opens the workbench on the workspace and waits until it is drawn. */
export async function openWorkbench(browser: Browser, server: CodeServer): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await context.newPage();
  await page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  return page;
}

/** A small sample workspace for tests and the demo. */
export function sampleWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mg-workspace-'));
  writeFileSync(join(dir, 'README.md'), '# Sample project\n\nA small workspace to try Model Gateway with.\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'greet.ts'), 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n');
  writeFileSync(join(dir, 'src', 'math.ts'), 'export const add = (a: number, b: number): number => a + b;\n');
  return dir;
}

/**
 * Runs a command from the palette as a person would (F1, type, click the row), retrying while the
 * workbench is still registering extension contributions (a busy machine can open the palette
 * before our commands are listed).
 */
export async function runPaletteCommand(page: Page, title: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const input = page.locator('.quick-input-widget input');
    await page.keyboard.press('F1');
    // A webview (the chat) that holds the focus keeps F1 to itself: focus the workbench, again.
    if (!(await input.isVisible().catch(() => false))) {
      await input.waitFor({ state: 'visible', timeout: 2000 }).catch(async () => {
        await page
          .locator('.part.editor')
          .first()
          .click({ position: { x: 10, y: 10 } });
        await page.keyboard.press('F1');
      });
    }
    const row = page.locator(`.quick-input-list .monaco-list-row[aria-label^="${title}"]`).first();
    try {
      // The palette can close again at once (an editor that just opened takes the focus): then
      // the fill fails quickly and the whole attempt is repeated.
      await input.waitFor({ state: 'visible', timeout: 5000 });
      await input.fill(`>${title}`, { timeout: 5000 });
      await row.waitFor({ timeout: 5000 });
      // Bounded too: the palette can also close between finding the row and clicking it (a
      // walkthrough moving on to its next step takes the focus), and a hidden row is waited on.
      await row.click({ timeout: 5000 });
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      // Escape only closes a palette that is still open: with none, it would go to the editor (a
      // walkthrough goes back to the Welcome page on Escape).
      if (await input.isVisible().catch(() => false)) await page.keyboard.press('Escape');
      await page.waitForTimeout(500);
    }
  }
}

/** Opens the Model Gateway container until `ready` is visible (clicking the icon of an open container closes it). */
/** The extension's two view containers: the chat alone (full height), and Account with Video Jobs. */
export const CONTAINERS = {
  chat: { id: 'workbench.view.extension.modelGatewayChat', label: 'Model Gateway Chat' },
  account: { id: 'workbench.view.extension.modelGateway', label: 'Model Gateway' },
} as const;

export async function openModelGatewayContainer(
  page: Page,
  ready: { waitFor(o: { timeout: number }): Promise<void> },
  which: keyof typeof CONTAINERS = 'chat',
  timeoutMs = 60_000,
  /** The container's name in the display language, when it is not English. */
  label: string = CONTAINERS[which].label,
): Promise<void> {
  const { id } = CONTAINERS[which];
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (!(await page.locator(`[id="${id}"]`).isVisible())) {
      // The label may carry a keybinding after it, and one container's name starts the other's.
      const item = page.locator(`.activitybar [aria-label="${label}"], .activitybar [aria-label^="${label} ("]`).first();
      await item.click();
      // The pointer leaves the activity bar, so its tooltip does not cover the view.
      await page.mouse.move(700, 500);
    }
    try {
      await ready.waitFor({ timeout: 5000 });
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
    }
  }
}

/**
 * Waits for the input box (or quick pick) whose title contains `title`, types, and confirms. The
 * palette's widget is reused for the next prompt, so waiting for the title keeps typing in step.
 */
export async function answerPrompt(page: Page, title: string, text: string): Promise<void> {
  const widget = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: title }) });
  await widget.waitFor({ state: 'visible' });
  const input = widget.locator('input');
  await input.fill(text);
  // Pressed on the input itself: a walkthrough that moves on to its next step can take the focus
  // between the fill and the key (the quick pick, with ignoreFocusOut, stays open but deaf). Even
  // so, a full e2e run once left the prompt open with its answer typed: the key is pressed again
  // while this prompt (this title) is still the one shown.
  for (let attempt = 1; ; attempt++) {
    await input.press('Enter');
    try {
      await widget.waitFor({ state: 'hidden', timeout: 3000 });
      return;
    } catch (err) {
      if (attempt === 5) throw new Error(`the prompt "${title}" stayed open after Enter was pressed ${attempt} times`, { cause: err });
    }
  }
}

/**
 * The webview document (a frame inside VS Code's webview iframes) holding an element that matches
 * `selector` (and `text`): editor-tab webviews have no stable name to find them by. When none does
 * in time, the error says what the workbench showed instead (its tabs, notifications and frames),
 * since a CI log is often all there is to go on.
 */
export async function webviewFrame(page: Page, selector: string, text?: string | RegExp, timeoutMs = 60_000): Promise<Frame> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    for (const f of page.frames())
      if (
        (await f
          .locator(selector, text ? { hasText: text } : {})
          .count()
          .catch(() => 0)) > 0
      )
        return f;
    if (Date.now() > end) throw new Error(`no webview shows ${selector}${text ? ` with "${String(text)}"` : ''}; ${await workbenchSummary(page)}`);
    await page.waitForTimeout(100);
  }
}

/** What the workbench shows, in one line for an error message: its tabs, notifications and frames. */
async function workbenchSummary(page: Page): Promise<string> {
  const texts = async (selector: string) =>
    (
      await page
        .locator(selector)
        .allInnerTexts()
        .catch(() => [] as string[])
    )
      .map((t) => t.replace(/\s+/g, ' ').trim())
      .filter(Boolean);
  const tabs = await texts('.tab');
  const active = await texts('.tab.active');
  const notices = await texts('.notifications-toasts .notification-list-item-message');
  const frames = page.frames().map((f) => f.url().replace(/\?.*$/, '').slice(-60));
  return `tabs [${tabs.join(' | ')}], active [${active.join(' | ')}], notifications [${notices.join(' | ')}], ${frames.length} frames [${frames.join(' , ')}]`;
}

/**
 * Reloads the window and returns once the new document's workbench is there: the old document
 * would otherwise answer the wait for the workbench while it is still unloading.
 */
export async function reloadWindow(page: Page, timeoutMs = 90_000): Promise<void> {
  await page.evaluate('window.mgDocumentBeforeReload = true');
  await runPaletteCommand(page, 'Developer: Reload Window');
  await page.waitForFunction("!window.mgDocumentBeforeReload && !!document.querySelector('.monaco-workbench .part.editor')", undefined, {
    timeout: timeoutMs,
    polling: 200,
  });
}
