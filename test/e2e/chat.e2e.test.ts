// @vscode-specific: the chat webview in each workbench: its view containers, pickers, focus, reload and the secondary side bar.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { png } from '../emulator/media';
import { fromWebviewTypes } from '../../src/common/chatProtocol';
import { GatewayEmulator } from '../emulator/server';
import { until } from '../wait';
import { answerPrompt, EXTENSION_ID, logFiles, testedVsCode, openModelGatewayContainer, ROOT, runPaletteCommand, type CodeServer } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
/** The screenshots of the chat's main states, linked from the README. */
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');

function hostLogs(userDataDir: string): string[] {
  return logFiles(userDataDir, ['Model Gateway.log']);
}

function hostLogTail(userDataDir: string): string {
  return hostLogs(userDataDir)
    .map((f) => readFileSync(f, 'utf8').split('\n').slice(-25).join('\n'))
    .join('\n');
}

/** The types of the chat view's messages the host received, from its log (it logs each by type). */
function receivedTypes(userDataDir: string): Set<string> {
  const types = new Set<string>();
  for (const f of hostLogs(userDataDir)) for (const m of readFileSync(f, 'utf8').matchAll(/chat view: ([a-z-]+)/g)) types.add(m[1]);
  return types;
}

describe('chat panel end to end (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let emu: GatewayEmulator;
  let server: CodeServer;
  let wb: Workbench | undefined;
  let page: Page;
  let workspace: string;

  // The side-bar chat's webview, found by name once it is the only one (an editor tab adds another).
  let sideFrameName = '';
  const chat = (): FrameLocator =>
    page
      .frameLocator(sideFrameName ? `iframe.webview[name="${sideFrameName}"]` : `iframe.webview[src*="extensionId=${EXTENSION_ID}"]`)
      .frameLocator('iframe#active-frame');
  const lastAnswer = () => chat().locator('.turn.assistant').last();
  const answerText = async () => (await lastAnswer().locator('.markdown').allInnerTexts()).join('\n');

  /**
   * Whether a person sees the element: wholly inside the chat view's window and, for the
   * conversation, inside the scrolled area (not just present in the DOM).
   */
  async function inView(locator: ReturnType<FrameLocator['locator']>): Promise<boolean> {
    return locator.evaluate((el) => {
      const g = globalThis as unknown as {
        innerHeight: number;
        document: { getElementById(id: string): { getBoundingClientRect(): { top: number; bottom: number } } | null };
      };
      const r = (el as unknown as { getBoundingClientRect(): { top: number; bottom: number; height: number } }).getBoundingClientRect();
      const scroller = g.document.getElementById('messages')?.getBoundingClientRect();
      const inside =
        (el as unknown as { closest(s: string): unknown }).closest('#messages') && scroller
          ? r.top >= scroller.top - 1 && r.bottom <= scroller.bottom + 1
          : true;
      return r.height > 0 && r.top >= -1 && r.bottom <= g.innerHeight + 1 && !!inside;
    });
  }

  async function assertInView(locator: ReturnType<FrameLocator['locator']>, what: string): Promise<void> {
    // Rendering settles within a few frames; the check is what the person sees after that.
    await until(`${what} in the viewport`, () => inView(locator), 2_000).catch(() => undefined);
    assert.ok(await inView(locator), `${what} is in the viewport`);
  }

  async function openChat(): Promise<void> {
    sideFrameName = '';
    await openModelGatewayContainer(page, chat().locator('#input'));
    sideFrameName = (await page.locator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().getAttribute('name')) ?? '';
  }

  /** Opens a workspace file in an editor as a person would (Go to File), and waits for its tab. */
  /** Opens a workspace file with Go to File, as a person does, until its tab is the active one (a click on a list still filtering can miss). */
  async function openFile(name: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await runPaletteCommand(page, 'Go to File');
      await page.keyboard.type(name);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click();
      const opened = await page
        .locator('.tab.active', { hasText: name })
        .first()
        .waitFor({ timeout: 5000 })
        .then(
          () => true,
          () => false,
        );
      if (opened) return;
      if (attempt >= 3) throw new Error(`${name} did not open in the editor`);
      await page.keyboard.press('Escape');
    }
  }

  let answersBefore = 0;

  /** Turns the sandbox on or off as a person does: the Settings editor's checkbox (it writes the user settings). */
  async function setSandbox(on: boolean, screenshot?: string): Promise<void> {
    await runPaletteCommand(page, 'Preferences: Open User Settings');
    // The search field has the focus when the editor opens (an editor of its own: typed into, as a person does).
    await page.locator('.settings-editor .settings-header .suggest-input-container').first().click({ timeout: 30_000 });
    await page.keyboard.press('Control+A');
    await page.keyboard.type('modelGateway.agent.sandbox.enabled');
    const row = page.locator('.settings-editor .setting-item-contents', { hasText: 'Sandbox: Enabled' }).first();
    const box = row.locator('.setting-value-checkbox').first();
    await box.waitFor({ timeout: 30_000 });
    if (((await box.getAttribute('aria-checked')) === 'true') !== on) await box.click();
    await until('the checkbox ' + (on ? 'checked' : 'cleared'), async () => ((await box.getAttribute('aria-checked')) === 'true') === on, 10_000);
    if (screenshot) await page.screenshot({ path: join(SHOTS, screenshot) });
    // VS Code 1.139 shows Settings over the window (closed by its ×); 1.100 as an editor.
    const modal = page.locator('.monaco-modal-editor-block');
    if (await modal.isVisible().catch(() => false)) await modal.locator('.codicon-close, .codicon-chrome-close').last().click();
    else await runPaletteCommand(page, 'View: Close All Editors');
    await page.locator('.settings-editor').first().waitFor({ state: 'hidden' });
  }

  /** Asks, and whether the approval bar showed at any moment of the answer (it has ended when this returns). */
  async function askWatchingTheBar(text: string): Promise<boolean> {
    let barSeen = false;
    await ask(text);
    const bar = chat().locator('#approval-bar');
    const answer = chat().locator('.turn.assistant').nth(answersBefore);
    while (!/done|stopped|error/.test((await answer.getAttribute('data-status')) ?? '')) barSeen ||= await bar.isVisible();
    await idle();
    return barSeen;
  }

  async function ask(text: string): Promise<void> {
    answersBefore = await chat().locator('.turn.assistant').count();
    const input = chat().locator('#input');
    await input.fill(text);
    await input.press('Enter');
    await chat().locator('.turn.assistant').nth(answersBefore).waitFor({ timeout: 30_000 });
  }

  /** Waits until the answer to the last question has finished (done, stopped or failed). */
  async function idle(): Promise<void> {
    await chat()
      .locator('.turn.assistant')
      .nth(answersBefore)
      .and(chat().locator('.turn.assistant:not([data-status="streaming"])'))
      .waitFor({ timeout: 60_000 });
    await chat().locator('#send').waitFor({ state: 'visible' });
  }

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      // A file that holds a secret, there from the start (Go to File lists what was there when the window opened).
      prepare: (ws) => {
        writeFileSync(join(ws, '.env'), 'OPENAI_API_KEY=sk-from-dotenv-must-not-leave\n');
        // "Run the tests" runs npm test: a test script that says what a real one would.
        writeFileSync(
          join(ws, 'package.json'),
          JSON.stringify({ name: 'sample', private: true, scripts: { test: 'echo "running 3 tests" && echo "3 passing"' } }, null, 2),
        );
      },
      codeServer: (e) => ({
        env: demoCredentials(e, { accessToken: true }),
        // small-context-emu has a 32,000-token window; the settings claim more (as a mistaken user might).
        settings: {
          'modelGateway.defaultModels.chat': 'gpt-4o-mini',
          // The reasoning model's effort, as a user sets it (its summaries then show as thinking).
          'modelGateway.modelOverrides': { 'small-context-emu': { contextWindow: 200_000 }, 'gpt-5-codex-emu': { reasoningEffort: 'low' } },
          // The reference MCP server from npm, for its prompts (`/`) and resources (`@`).
          'modelGateway.mcp.servers': {
            everything: {
              command: process.execPath,
              args: [join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
            },
          },
        },
      }),
    });
    ({ emu, server, page, workspace } = wb);
    await openChat();
  });

  const failedAbove: string[] = [];
  afterEach(async function () {
    emu.faults.clear();
    if (this.currentTest?.state === 'failed') {
      failedAbove.push(this.currentTest.title);
      // What the person saw when it failed, before anything is cleaned up.
      await page.screenshot({ path: join(ARTIFACTS, `chat-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
      // The host's side of the story, for the failure report.
      console.log(hostLogTail(server.userDataDir));
      const last = emu.requests.at(-1);
      console.log(`emulator: ${emu.requests.length} requests, the last ${last?.method} ${last?.path} (${JSON.stringify(last?.body ?? '').length} bytes)`);
      // A decision left waiting would block the next tests: refuse it.
      for (const reject of await chat().locator('#approval-bar button', { hasText: 'Reject' }).all()) await reject.click().catch(() => undefined);
      // The next test starts from a known state: no answer running, a conversation of its own
      // (so one failure is reported once, not again by the tests after it).
      if (
        await chat()
          .locator('#stop')
          .isVisible()
          .catch(() => false)
      )
        await chat()
          .locator('#stop')
          .click()
          .catch(() => undefined);
      await chat()
        .locator('#send')
        .waitFor({ state: 'visible', timeout: 30_000 })
        .catch(() => undefined);
      await runPaletteCommand(page, 'Model Gateway: New Chat').catch(() => undefined);
      await chat()
        .locator('#thread .empty')
        .waitFor({ timeout: 10_000 })
        .catch(() => undefined);
    }
  });

  after(async () => {
    await wb?.close();
  });

  it('sends a message and the answer streams in, with its usage', async () => {
    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 12 } });
    await ask('Explain streaming in a few words #words=150');
    await chat().locator('#stop').waitFor({ state: 'visible' });
    await lastAnswer().locator('.markdown').first().waitFor();
    const early = (await answerText()).length;
    const later = await until(
      'the answer to grow while streaming',
      async () => (await chat().locator('#stop').isVisible()) && (await answerText()).length > early && (await answerText()).length,
    );
    assert.ok(later > early, `text grew while streaming (${early} → ${later})`);
    await page.screenshot({ path: join(SHOTS, 'chat-streaming.png') });
    await idle();
    assert.match(await answerText(), /gpt-4o-mini\s+\(emulated\) read 1 message/);
    assert.match(await lastAnswer().locator('.usage').innerText(), /^in \d[\d,]* · out \d/);
    await assertInView(lastAnswer().locator('.usage'), 'the end of the finished answer');
    await page.screenshot({ path: join(SHOTS, 'chat-streamed.png') });
  });

  it('a code block streams as plain text and is coloured once it closes', async () => {
    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 40 } });
    await ask('Show the code of a trim helper in TypeScript');
    const code = lastAnswer().locator('pre.code').first();
    await until(
      'an open code block, still plain, while the answer streams',
      async () =>
        (await chat().locator('#stop').isVisible()) &&
        (await code.count()) > 0 &&
        (await code.innerText()).includes('export function') &&
        (await code.locator('.hljs-keyword').count()) === 0,
    );
    await page.screenshot({ path: join(SHOTS, 'chat-streaming-code.png') });
    await idle();
    assert.ok((await code.locator('.hljs-keyword').count()) > 0, 'coloured once the block closed');
    await page.screenshot({ path: join(SHOTS, 'chat-streamed-code.png') });
  });

  it('stop aborts mid-stream and keeps the partial answer, marked as stopped', async () => {
    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 25 } });
    await ask('A long answer please #words=600');
    await chat().locator('#stop').waitFor({ state: 'visible' });
    await lastAnswer().locator('.markdown').first().waitFor();
    await until('the first words of the answer', async () => (await answerText()).length >= 40);
    await chat().locator('#stop').click();
    await lastAnswer().locator('.badge', { hasText: 'Stopped' }).waitFor();
    await idle();
    await assertInView(lastAnswer().locator('.badge', { hasText: 'Stopped' }), 'the Stopped badge');
    const kept = await answerText();
    assert.ok(kept.length >= 40, 'the partial answer is kept');
    assert.ok(kept.split(' ').length < 600, 'it was cut short');
  });

  it('attaches an image (and refuses a GIF with a clear message)', async () => {
    const file = chat().locator('#file');
    await file.setInputFiles({ name: 'anim.gif', mimeType: 'image/gif', buffer: Buffer.from('GIF89a') });
    await chat().locator('#notice', { hasText: 'GIF images are not supported' }).waitFor();
    await file.setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: png(32, 32, 5) });
    await chat().locator('.chip', { hasText: 'pixel.png' }).waitFor();
    await ask('What is in this picture?');
    await idle();
    assert.match(await answerText(), /I looked at the image you attached/);
    await chat().locator('.turn.user img[alt="pixel.png"]').last().waitFor();
    const sent = emu.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: { content: unknown }[] };
    const parts = sent.messages.at(-1)!.content as { type: string; image_url?: { url: string } }[];
    assert.ok(parts.some((p) => p.type === 'image_url' && p.image_url!.url.startsWith('data:image/png;base64,')));
  });

  it('runs a tool-using turn that reads a file', async () => {
    await ask('Please read the file README.md');
    await idle();
    const card = lastAnswer().locator('details.tool').first();
    assert.match(await card.locator('summary').innerText(), /read_file\s+README\.md\s+done/);
    assert.match(await answerText(), /From the tool results \(1\)/);
    assert.match(await answerText(), /Sample project/);
    // File paths are links: in the answer, and in the tool card.
    await lastAnswer().locator('.markdown code.path-link', { hasText: 'README.md' }).first().click();
    await page.locator('.tab', { hasText: 'README.md' }).first().waitFor({ timeout: 10_000 });
    await runPaletteCommand(page, 'View: Close All Editors');
    await page.locator('.tab', { hasText: 'README.md' }).first().waitFor({ state: 'detached' });
    await card.locator('summary code.path-link', { hasText: 'README.md' }).click();
    await page.locator('.tab', { hasText: 'README.md' }).first().waitFor({ timeout: 10_000 });
    assert.equal(await card.getAttribute('open'), null, 'opening the file does not fold the card open');
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('applies an edit when it is accepted (the file changes) after showing the diff', async () => {
    const original = readFileSync(join(workspace, 'src', 'math.ts'));
    await ask('Use replace_in_file on src/math.ts to replace "a + b" with "b + a"');
    await chat().locator('#approval-bar button', { hasText: 'Accept' }).waitFor({ timeout: 60_000 });
    // One decision control per step: the turn's card points to the bar and has no Accept of its own.
    await lastAnswer().locator('.approval.waiting', { hasText: 'Your decision: in the bar below.' }).waitFor();
    assert.equal(await lastAnswer().locator('.approval button').count(), 0, 'no second Accept in the turn');
    // A one-line change is shown where the decision is made, without opening a tab.
    const inline = chat().locator('#approval-bar .inline-diff');
    await inline.waitFor();
    assert.equal(await inline.locator('.removed-line').innerText(), '- export const add = (a: number, b: number): number => a + b;');
    assert.equal(await inline.locator('.added-line').innerText(), '+ export const add = (a: number, b: number): number => b + a;');
    assert.equal(await page.locator('.tab', { hasText: 'math.ts' }).count(), 0, 'no diff tab for a small change');
    // Show diff opens the diff editor: the file as it is against the proposal.
    await chat().locator('#approval-bar button', { hasText: 'Show diff' }).click();
    await page.locator('.tab', { hasText: 'math.ts' }).first().waitFor({ timeout: 30_000 });
    await page.locator('.monaco-diff-editor .modified .view-line', { hasText: 'b + a' }).first().waitFor({ timeout: 30_000 });
    await page.locator('.monaco-diff-editor .original .view-line', { hasText: 'a + b' }).first().waitFor();
    assert.equal(await chat().locator('#send').isVisible(), false, 'Send is hidden while a turn runs');
    // The decision is above the input, in view whatever the scroll position, with the file and the size of the change.
    const bar = chat().locator('#approval-bar');
    await bar.locator('.approval-file', { hasText: 'src/math.ts' }).waitFor();
    assert.match(await bar.innerText(), /Edit\s+src\/math\.ts\s+\+1\s+−1/);
    await chat()
      .locator('#messages')
      .evaluate((m) => ((m as unknown as { scrollTop: number }).scrollTop = 0));
    await assertInView(bar.locator('button', { hasText: 'Accept' }), 'the Accept button (scrolled to the top)');
    // Enter while the edit waits says why nothing was sent.
    await chat().locator('#input').fill('one more thing');
    await chat().locator('#input').press('Enter');
    await chat().locator('#notice', { hasText: 'A step is waiting for your decision' }).waitFor();
    assert.equal(await chat().locator('#input').inputValue(), 'one more thing', 'the draft is kept');
    await chat().locator('#input').fill('');
    await page.screenshot({ path: join(SHOTS, 'chat-approval.png') });
    await bar.locator('button', { hasText: 'Accept' }).click();
    await bar.waitFor({ state: 'hidden' });
    await idle();
    assert.match(readFileSync(join(workspace, 'src', 'math.ts'), 'utf8'), /b \+ a/);
    await lastAnswer()
      .locator('details.tool summary', { hasText: /replace_in_file\s*src\/math\.ts\s*done/ })
      .first()
      .waitFor({ timeout: 10_000 });
    // Restore to before this turn: what will change is shown, the person confirms, the file is back byte for byte.
    await lastAnswer().locator('button', { hasText: 'Restore to before this turn' }).click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Restore src\/math\.ts to before this turn\?/);
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await lastAnswer().locator('.tool-actions', { hasText: 'Undone' }).first().waitFor({ timeout: 10_000 });
    assert.deepEqual(readFileSync(join(workspace, 'src', 'math.ts')), original, 'byte for byte');
    assert.equal(await lastAnswer().locator('button', { hasText: 'Restore to before this turn' }).count(), 0);
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('an edit of .vscode/settings.json opens the full diff with a warning, never the inline preview', async () => {
    mkdirSync(join(workspace, '.vscode'), { recursive: true });
    writeFileSync(join(workspace, '.vscode', 'settings.json'), '{ "editor.tabSize": 2 }\n');
    await ask('Use replace_in_file on .vscode/settings.json to replace "2" with "4"');
    const bar = chat().locator('#approval-bar');
    const warning = bar.locator('.approval-warning');
    await warning.waitFor({ timeout: 60_000 });
    assert.match(await warning.innerText(), /configures VS Code for this folder .* Read the whole diff before you accept/);
    assert.equal(await bar.locator('.inline-diff').count(), 0, 'a one-line change of a sensitive file is not shown inline');
    // The diff tab opens at once, its title marked.
    await page
      .locator('.tab', { hasText: /Careful: \.vscode\/settings\.json/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.locator('.monaco-diff-editor .modified .view-line', { hasText: '"editor.tabSize": 4' }).first().waitFor({ timeout: 30_000 });
    await assertInView(warning, 'the warning');
    await page.screenshot({ path: join(SHOTS, 'chat-approval-sensitive.png') });
    await bar.locator('button', { hasText: 'Reject' }).click();
    await idle();
    assert.equal(readFileSync(join(workspace, '.vscode', 'settings.json'), 'utf8'), '{ "editor.tabSize": 2 }\n');
    rmSync(join(workspace, '.vscode'), { recursive: true });
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('creates a file when accepted, and Undo on its card removes it', async () => {
    await ask('Use create_file to make todo.md with the content "buy milk"');
    const bar = chat().locator('#approval-bar');
    await bar.locator('button', { hasText: 'Accept' }).waitFor({ timeout: 60_000 });
    await bar.locator('button', { hasText: 'Accept' }).click();
    await idle();
    assert.equal(readFileSync(join(workspace, 'todo.md'), 'utf8'), 'buy milk');
    await lastAnswer().locator('.tool-actions button', { hasText: 'Undo' }).first().click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Created by this turn, removed: todo\.md/);
    await dialog.getByRole('button', { name: 'Undo' }).click();
    await lastAnswer().locator('.tool-actions', { hasText: 'Undone' }).first().waitFor({ timeout: 10_000 });
    assert.equal(existsSync(join(workspace, 'todo.md')), false);
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('leaves the file alone when an edit is rejected, and tells the model', async () => {
    await ask('Use create_file to make notes.md with the content "hello notes"');
    await chat().locator('#approval-bar button', { hasText: 'Reject' }).waitFor({ timeout: 60_000 });
    await chat().locator('#approval-bar .inline-diff .added-line', { hasText: '+ hello notes' }).waitFor();
    await chat().locator('#approval-bar button', { hasText: 'Show diff' }).click();
    // Decided where the person looks at the change: the diff editor's title bar.
    const titleReject = page.locator('.editor-actions .action-label[aria-label="Reject Proposed Change"]').first();
    await titleReject.waitFor({ timeout: 30_000 });
    assert.ok(await page.locator('.editor-actions .action-label[aria-label="Accept Proposed Change"]').first().isVisible());
    await titleReject.click();
    await idle();
    assert.equal(existsSync(join(workspace, 'notes.md')), false);
    await page.locator('.tab', { hasText: 'notes.md' }).waitFor({ state: 'detached', timeout: 10_000 });
    // The tool row and the model's reply render just after the turn ends: wait for them (text
    // content: the status badge is a separate span with no space before it).
    await lastAnswer()
      .locator('details.tool summary', { hasText: /create_file\s*notes\.md\s*rejected/ })
      .first()
      .waitFor({ timeout: 10_000 });
    await lastAnswer()
      .locator('.markdown', { hasText: /rejected the new file notes\.md/ })
      .first()
      .waitFor({ timeout: 10_000 });
  });

  it('shows gateway errors in the conversation with the action that fixes them, and a 429 countdown', async () => {
    emu.inject({
      path: '/v1/chat',
      fault: {
        kind: 'status',
        status: 403,
        body: { error: { message: 'Insufficient balance: the user quota is used up.', type: 'permission_error', code: 'insufficient_user_quota' } },
      },
    });
    await ask('Will this work?');
    await idle();
    const card = lastAnswer().locator('.error-card');
    assert.match(await card.innerText(), /top up the balance/i);
    await card.locator('button', { hasText: 'Top Up Balance' }).waitFor();
    await card.locator('button', { hasText: 'Retry' }).waitFor();

    emu.inject({ path: '/v1/chat', fault: { kind: 'status', status: 429, retryAfter: '90' } });
    await ask('And now?');
    await idle();
    const limited = lastAnswer().locator('.error-card');
    await limited.locator('.countdown', { hasText: /you can retry in (8\d|90) s/ }).waitFor();
    assert.equal(await limited.locator('button', { hasText: 'Retry' }).isDisabled(), true, 'Retry waits for the countdown');
    await assertInView(limited.locator('button', { hasText: 'Retry' }), 'the error card');
    await page.screenshot({ path: join(SHOTS, 'chat-errors.png') });
  });

  it('follows a new answer while at the bottom, stays put when scrolled up, and offers Jump to newest', async () => {
    const scroller = chat().locator('#messages');
    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 15 } });
    await ask('Tell me more #words=300');
    await scroller.evaluate((m) => ((m as unknown as { scrollTop: number }).scrollTop = 0));
    // More of the answer arrives after the person scrolled up: that is when a view would jump.
    const shown = (await answerText()).length;
    await until('more of the answer, or its end', async () => (await answerText()).length > shown || !(await chat().locator('#stop').isVisible()));
    const top = await scroller.evaluate((m) => (m as unknown as { scrollTop: number }).scrollTop);
    assert.ok(top < 5, `the view stays where the person scrolled (scrollTop ${top})`);
    await chat().locator('#jump').waitFor({ state: 'visible' });
    await idle();
    assert.ok((await scroller.evaluate((m) => (m as unknown as { scrollTop: number }).scrollTop)) < 5, 'still put after the answer ended');
    await chat().locator('#jump').click();
    await assertInView(lastAnswer().locator('.usage'), 'the newest content after Jump to newest');
    assert.equal(await chat().locator('#jump').isVisible(), false);
    // At the bottom again, the next answer is followed to its end.
    await ask('And a short one');
    await idle();
    await assertInView(lastAnswer().locator('.usage'), 'the end of the next answer');
  });

  it('regenerates the last answer, edits and resends a question, and wraps a code block on request', async () => {
    await ask('Show me a code example for parsing dates');
    await idle();
    const first = await lastAnswer().getAttribute('data-turn');
    await lastAnswer().locator('button', { hasText: 'Regenerate' }).click();
    await chat().locator(`.turn.assistant:last-child:not([data-turn="${first}"]):not([data-status="streaming"])`).waitFor({ timeout: 30_000 });
    assert.equal(
      await chat().locator('.turn.user', { hasText: 'Show me a code example for parsing dates' }).count(),
      1,
      'the question is asked again in place, not twice',
    );
    await lastAnswer().locator('.code-block').first().waitFor();
    const wrap = lastAnswer().locator('.code-block button[data-wrap]').first();
    await wrap.click();
    assert.equal(await lastAnswer().locator('.code-block').first().getAttribute('class'), 'code-block wrap');
    assert.equal(await wrap.getAttribute('aria-pressed'), 'true');
    // Edit the question: it is resent in its place and the old answer goes.
    const users = chat().locator('.turn.user');
    const before = await users.count();
    await users.last().hover();
    await users.last().locator('button[data-edit]').click();
    assert.equal(await chat().locator('#input').inputValue(), 'Show me a code example for parsing dates');
    await chat().locator('#input').fill('Show me a python function for parsing dates');
    await chat().locator('#input').press('Enter');
    await chat().locator('.turn.user', { hasText: 'Show me a python function for parsing dates' }).waitFor({ timeout: 30_000 });
    await chat().locator('.turn.assistant:last-child:not([data-status="streaming"])').waitFor({ timeout: 30_000 });
    assert.equal(await users.count(), before, 'the edited question replaced the old one');
    assert.equal(await chat().locator('.turn.user', { hasText: 'Show me a code example for parsing dates' }).count(), 0);
    await lastAnswer().locator('.code-block pre[data-lang="python"]').waitFor();
  });

  it('finds the conversation again after the window reloads', async () => {
    await page.reload();
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await openChat();
    await chat().locator('.turn.user', { hasText: 'Please read the file README.md' }).waitFor({ timeout: 30_000 });
    await assertInView(lastAnswer().locator('.usage'), 'the newest answer after a reload');
    await chat().locator('#history').click();
    const rows = chat().locator('.history-open');
    await rows.first().waitFor();
    assert.match(await rows.first().innerText(), /Explain streaming in a few words/);
    await page.screenshot({ path: join(SHOTS, 'chat-history.png') });
    await page.keyboard.press('Escape');
  });

  it('opens the same conversation in an editor tab, in step with the side bar', async () => {
    const sideTurns = await chat().locator('.turn').count();
    await runPaletteCommand(page, 'Model Gateway: Open Chat in Editor');
    await page.locator('.tab', { hasText: 'Model Gateway Chat' }).first().waitFor({ timeout: 30_000 });
    const editorChat = page
      .frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]:not([name="${sideFrameName}"])`)
      .frameLocator('iframe#active-frame');
    await editorChat.locator('#input').waitFor({ timeout: 30_000 });
    await editorChat
      .locator('.turn')
      .nth(Math.max(0, sideTurns - 1))
      .waitFor({ timeout: 30_000 });
    assert.equal(await editorChat.locator('.turn').count(), sideTurns, 'the same conversation');
    // A question asked in the tab shows in the side bar too.
    answersBefore = await chat().locator('.turn.assistant').count();
    await editorChat.locator('#input').fill('Asked from the editor tab');
    await editorChat.locator('#input').press('Enter');
    await chat().locator('.turn.user', { hasText: 'Asked from the editor tab' }).waitFor({ timeout: 30_000 });
    await idle();
    await page.screenshot({ path: join(SHOTS, 'chat-in-editor.png') });
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('adds the active file as context once however often it is added, and New Chat clears it', async () => {
    await openFile('README.md');
    await runPaletteCommand(page, 'Model Gateway: Add Selection to Chat');
    await chat().locator('#attachments .chip', { hasText: 'README.md' }).waitFor();
    await runPaletteCommand(page, 'Model Gateway: Add Selection to Chat');
    await chat().locator('#notice', { hasText: 'Already attached: README.md' }).waitFor();
    assert.equal(await chat().locator('#attachments .chip', { hasText: 'README.md' }).count(), 1, 'the same file is attached once');
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('#attachments .chip:not(.auto)').first().waitFor({ state: 'detached' });
    assert.equal(await chat().locator('.turn').count(), 0, 'a new conversation');
  });

  it('has a view container of its own: the chat takes the whole side bar', async () => {
    const container = await page.locator('[id="workbench.view.extension.modelGatewayChat"]').boundingBox();
    const view = await page.locator(`iframe.webview[name="${sideFrameName}"]`).boundingBox();
    assert.ok(container && view, 'both drawn');
    assert.ok(view.height > container.height * 0.9, `the chat is ${Math.round(view.height)} px of the container's ${Math.round(container.height)} px`);
    assert.equal(
      await page.locator('[id="workbench.view.extension.modelGatewayChat"] .pane-header', { hasText: 'Account' }).count(),
      0,
      'Account lives elsewhere',
    );
  });

  it('sends the active editor as a chip that can be removed, and mentions files with @ and #', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await openFile('greet.ts');
    const chip = chat().locator('#active-editor');
    await chip.filter({ hasText: 'src/greet.ts' }).waitFor({ timeout: 10_000 });
    await ask('What does this file do?');
    await idle();
    const lastUser = () => JSON.stringify((emu.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: unknown[] }).messages.at(-1));
    assert.match(lastUser(), /return `Hello, \$\{name\}!`/, 'the active file went with the question');
    // Removed, it stays out of the next question (until another file is active).
    await chip.locator('button[data-remove-active]').click();
    await chip.waitFor({ state: 'detached' });
    // `@` opens the file list; arrows and Enter pick; the file is attached and named in the text.
    const input = chat().locator('#input');
    await input.fill('');
    await input.pressSequentially('Compare with @mat');
    const list = chat().locator('#mentions');
    await list.locator('.mention', { hasText: 'math.ts' }).first().waitFor({ timeout: 10_000 });
    assert.equal(await list.locator('.mention').first().locator('.mention-name').innerText(), 'math.ts', 'the best match first');
    await input.press('Enter');
    await list.waitFor({ state: 'hidden' });
    assert.equal(await input.inputValue(), 'Compare with @src/math.ts ');
    await chat().locator('#attachments .chip', { hasText: 'src/math.ts' }).waitFor();
    // `#` works the same; Escape closes the list and keeps the text.
    await input.pressSequentially('and #REA');
    await list.locator('.mention', { hasText: 'README.md' }).first().waitFor();
    await input.press('Escape');
    await list.waitFor({ state: 'hidden' });
    assert.equal(await input.inputValue(), 'Compare with @src/math.ts and #REA');
    await input.press('Enter');
    await chat().locator('.turn.assistant').nth(0).and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor();
    await chat().locator('.turn.assistant').nth(1).and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor({ timeout: 30_000 });
    const sent = lastUser();
    assert.match(sent, /export const add/, 'the mentioned file went with the question');
    assert.doesNotMatch(sent, /Hello, \$\{name\}/, 'the removed active file did not');
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('an open .env is not sent with questions; attaching it by hand asks first', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await openFile('.env');
    const chip = chat().locator('#active-editor');
    await chip.filter({ hasText: 'not sent: may hold secrets' }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, 'chat-secret-file.png') });
    await ask('What is in my environment file?');
    await idle();
    const body = JSON.stringify(emu.requestsTo('/v1/chat/completions').at(-1)!.body);
    assert.doesNotMatch(body, /sk-from-dotenv/, 'the .env content stayed on the machine');
    // By hand (Add Selection to Chat), the person is asked; dismissing attaches nothing.
    await page.locator('.tab', { hasText: '.env' }).first().click();
    await runPaletteCommand(page, 'Model Gateway: Add Selection to Chat');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.filter({ hasText: 'may hold credentials or keys' }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, 'chat-secret-file-confirm.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await chat().locator('#attachments .chip:not(.auto)', { hasText: '.env' }).count(), 0, 'nothing attached by hand');
    await runPaletteCommand(page, 'View: Close All Editors');
    rmSync(join(workspace, '.env'));
  });

  it('applies a code block to the open file: a diff first, nothing written on Reject, the code on Accept', async () => {
    const file = join(workspace, 'src', 'greet.ts');
    const original = readFileSync(file);
    await openFile('greet.ts');
    await chat().locator('#active-editor', { hasText: 'greet.ts' }).waitFor({ timeout: 10_000 });
    await ask('Show me a code example for greeting people');
    await idle();
    // The answer's own example (an earlier block quotes the attached file).
    const block = lastAnswer()
      .locator('.code-block', { has: chat().locator('pre[data-lang="ts"]') })
      .last();
    const code = await block.locator('code').innerText();
    await block.locator('button[data-code="apply"]').click();
    const bar = chat().locator('#approval-bar');
    await bar.locator('.approval-file', { hasText: 'src/greet.ts' }).waitFor({ timeout: 30_000 });
    // Show diff opens (again) the proposal against the file.
    await runPaletteCommand(page, 'View: Close All Editors');
    await bar.locator('button', { hasText: 'Show diff' }).click();
    await page.locator('.monaco-diff-editor .modified .view-line', { hasText: 'const value = input.trim();' }).first().waitFor({ timeout: 30_000 });
    await bar.locator('button', { hasText: 'Reject' }).click();
    await chat().locator('#notice', { hasText: 'Not applied: src/greet.ts is unchanged.' }).waitFor();
    assert.deepEqual(readFileSync(file), original, 'nothing written on Reject');
    await openFile('greet.ts');
    // The tab shows at once; the extension host hears of the editor a moment later (the chat's chip says when).
    await chat().locator('#active-editor', { hasText: 'greet.ts' }).waitFor({ timeout: 10_000 });
    await block.locator('button[data-code="apply"]').click();
    await bar.locator('button', { hasText: 'Accept' }).click();
    await chat().locator('#notice', { hasText: 'Applied the code to src/greet.ts.' }).waitFor({ timeout: 10_000 });
    assert.equal(readFileSync(file, 'utf8'), `${code.replace(/\n+$/, '')}\n`, 'the file holds the code block');
    writeFileSync(file, original);
    // Copy puts the block on the clipboard (said in the view).
    await block.locator('button[data-code="copy"]').click();
    await chat().locator('#notice', { hasText: 'Copied.' }).waitFor();
    await runPaletteCommand(page, 'View: Close All Editors');
  });

  it('switches model and wire format from the pickers, adds the active file from the view, and runs an error card’s fix', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await chat().locator('#model').selectOption('claude-haiku-emu');
    await chat().locator('#format').selectOption('messages');
    // The host has the choice when its next state says so (the select's own value changes at once).
    await chat().locator('#format[title*="now messages"]').waitFor();
    await chat().locator('#model option[selected][value="claude-haiku-emu"]').waitFor({ state: 'attached' });
    const before = emu.requestsTo('/v1/messages').length;
    await ask('Which model are you?');
    await idle();
    const sent = emu.requestsTo('/v1/messages');
    assert.equal(sent.length, before + 1, 'the messages format was used');
    assert.equal((sent.at(-1)!.body as { model: string }).model, 'claude-haiku-emu');
    assert.match(await lastAnswer().locator('.who').innerText(), /claude-haiku-emu · messages/);
    await chat().locator('#format').selectOption('auto');
    await chat().locator('#model').selectOption('gpt-4o-mini');
    // The view's own "add the active file" button.
    await openFile('README.md');
    // The tab is active in the workbench before the extension host hears of it: the view's own
    // chip for the active editor says the host knows README.md is the one to add.
    await chat().locator('#attachments .chip.auto', { hasText: 'README.md' }).waitFor();
    await chat().locator('#context').click();
    await chat().locator('#attachments .chip:not(.auto)', { hasText: 'README.md' }).waitFor();
    await chat().locator('#attachments .chip:not(.auto) button').first().click();
    await runPaletteCommand(page, 'View: Close All Editors');
    // A model the gateway does not have: the card offers another, which opens the model picker.
    emu.inject({
      path: '/v1/chat',
      fault: {
        kind: 'status',
        status: 404,
        body: { error: { message: 'The model `gpt-4o-mini` does not exist', type: 'invalid_request_error', code: 'model_not_found' } },
      },
    });
    await ask('Are you there?');
    await idle();
    await lastAnswer().locator('.error-card button', { hasText: 'Pick Another Model' }).click();
    await page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: 'Chat model' }) }).waitFor();
    await page.keyboard.press('Escape');
  });

  it('chats in the Responses format the gateway lists for the model: a tool call, then its thinking shown and folded', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await chat().locator('#model').selectOption('gpt-5-codex-emu');
    try {
      await answerInResponses();
    } finally {
      await chat().locator('#model').selectOption('gpt-4o-mini');
      await chat().locator('#model option[selected][value="gpt-4o-mini"]').waitFor({ state: 'attached' });
    }
  });

  async function answerInResponses(): Promise<void> {
    // "auto" resolves to responses from /api/pricing's supported_endpoint_types (the only one listed).
    await chat().locator('#format[title*="now responses"]').waitFor();
    const before = emu.requestsTo('/v1/responses').length;
    await ask('Please read the file README.md');
    await idle();
    const sent = emu.requestsTo('/v1/responses').slice(before);
    assert.equal(sent.length, 2, 'one request per step');
    const second = sent[1].body as { store: boolean; include: string[]; input: { type?: string }[] };
    assert.equal(second.store, false);
    assert.deepEqual(second.include, ['reasoning.encrypted_content']);
    assert.deepEqual(
      second.input.map((i) => i.type ?? 'message'),
      ['message', 'reasoning', 'function_call', 'function_call_output'],
    );
    assert.match(await lastAnswer().locator('.who').innerText(), /gpt-5-codex-emu · responses/);
    assert.match(await lastAnswer().locator('details.tool summary').first().innerText(), /read_file\s+README\.md\s+done/);
    const thinking = lastAnswer().locator('details.thinking:not([hidden])').first();
    assert.match(await thinking.locator('summary').innerText(), /^Thought for (\d+\.\d s|less than a second)$/);
    await thinking.locator('summary').click();
    assert.match(await thinking.locator('.thinking-text').innerText(), /The user asked/);
    assert.match(await lastAnswer().locator('.usage').innerText(), /out \d[\d,]* \(reasoning \d[\d,]*\)/);
    await assertInView(lastAnswer().locator('.usage'), 'the end of the answer');
    await page.screenshot({ path: join(SHOTS, 'chat-responses-thinking.png') });
  }

  it('opens, renames and deletes conversations from the history, each answered by the host', async () => {
    if (!(await chat().locator('#history-panel').isVisible())) await chat().locator('#history').click();
    const rows = chat().locator('.history-row');
    await rows.first().waitFor();
    const count = await rows.count();
    assert.ok(count >= 3, `several conversations (${count})`);
    // Open an older one: its questions come back.
    await chat().locator('.history-open', { hasText: 'Explain streaming in a few words' }).click();
    await chat().locator('.turn.user', { hasText: 'Explain streaming in a few words' }).waitFor({ timeout: 10_000 });
    assert.match(await chat().locator('#title').innerText(), /Explain streaming/);
    // Rename it.
    await chat().locator('#history').click();
    const row = chat().locator('.history-row.current');
    await row.locator('button[data-rename]').click();
    await row.locator('input.rename').fill('Streaming, renamed');
    await row.locator('input.rename').press('Enter');
    await chat().locator('.history-open', { hasText: 'Streaming, renamed' }).waitFor({ timeout: 10_000 });
    await chat().locator('#title', { hasText: 'Streaming, renamed' }).waitFor();
    // Delete it: a second click confirms.
    const del = chat().locator('.history-row.current button[data-delete]');
    await del.click();
    await del.click();
    await chat().locator('.history-open', { hasText: 'Streaming, renamed' }).waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await rows.count(), count - 1);
    await page.keyboard.press('Escape');
    await chat().locator('.empty').waitFor();
  });

  it('reads well narrow and wide', async () => {
    await page.setViewportSize({ width: 760, height: 900 });
    await until('the workbench laid out at 760 px', async () => Math.round((await page.locator('.monaco-workbench').boundingBox())?.width ?? 0) === 760);
    if (!(await chat().locator('#history-panel').isVisible())) await chat().locator('#history').click();
    await chat().locator('.history-open').first().click();
    await chat().locator('.turn').first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'chat-narrow.png') });
    const overflow = await chat()
      .locator('#messages')
      .evaluate((m) => (m as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth - (m as unknown as { clientWidth: number }).clientWidth);
    assert.ok(overflow <= 1, `no sideways scrolling when narrow (${overflow} px)`);
    await page.setViewportSize({ width: 1600, height: 1000 });
    await runPaletteCommand(page, 'Model Gateway: Open Chat in Editor');
    await page.locator('.tab', { hasText: 'Model Gateway Chat' }).first().waitFor({ timeout: 30_000 });
    // The tab has its own New Chat (the side bar's is in the view's title bar); both views follow.
    const editorChat = page
      .frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]:not([name="${sideFrameName}"])`)
      .frameLocator('iframe#active-frame');
    await editorChat.locator('.turn .usage').first().waitFor({ timeout: 30_000 });
    await page.mouse.move(900, 600);
    await page.screenshot({ path: join(SHOTS, 'chat-wide.png') });
    assert.equal(await chat().locator('#new-chat').isVisible(), false);
    await editorChat.locator('#new-chat').click();
    await editorChat.locator('.empty').waitFor();
    await chat().locator('.empty').waitFor();
    await runPaletteCommand(page, 'View: Close All Editors');
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  it('shows the context meter, and a prompt the gateway refuses as too long is condensed and sent again, the question kept', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('A short question first');
    await idle();
    const meter = chat().locator('#context-meter');
    const meterText = meter.locator('.meter-text');
    await meter.waitFor();
    assert.match(await meterText.innerText(), /^[\d.]+k? \/ 128k tokens$/, 'gpt-4o-mini: a 128k window');
    // The settings claim a larger window than the model has: the gateway refuses, the chat learns.
    writeFileSync(
      join(workspace, 'big.txt'),
      Array.from({ length: 1500 }, (_, i) => `line ${i + 1}: notes about the gateway, the cache and the budget`).join('\n'),
    );
    await chat().locator('#model').selectOption('small-context-emu');
    await chat().locator('#model option[selected][value="small-context-emu"]').waitFor({ state: 'attached' });
    await ask('Read the file big.txt again and again #steps=6');
    await idle();
    assert.equal(await lastAnswer().locator('.error-card').count(), 0, 'no error card');
    await chat().locator('.turn.user', { hasText: 'Read the file big.txt again and again' }).waitFor();
    await meterText.filter({ hasText: /\/ 32k tokens · (shortened to fit|condensed)$/ }).waitFor({ timeout: 10_000 });
    assert.match((await meter.getAttribute('title')) ?? '', /To fit: .*(older result\(s\) left out|sent as a summary)/);
    // Condensed in the middle of the answer: its card sits after the last step it covers.
    if ((await meterText.innerText()).endsWith('condensed')) assert.equal(await lastAnswer().locator('.steps > .step + .condensed').count(), 1);
    await assertInView(meter, 'the context meter');
    await page.screenshot({ path: join(SHOTS, 'chat-context.png') });
    await chat().locator('#model').selectOption('gpt-4o-mini');
    rmSync(join(workspace, 'big.txt'));
  });

  it('condenses by hand from the meter: the summary shows where it was made, and the older turns stay', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Explain the gateway keys #words=120');
    await idle();
    await ask('And the balance?');
    await idle();
    const turnsBefore = await chat().locator('.turn').count();
    await chat().locator('#condense').click();
    const card = chat().locator('.condensed');
    await card.waitFor({ timeout: 30_000 });
    assert.match(await card.locator('summary').innerText(), /Earlier messages condensed by hand: [\d.]+k? → \d+ tokens/);
    // The card follows the first answer (all but the newest exchange were condensed).
    const before = await card.evaluate(
      (el) => (el as unknown as { previousElementSibling: { className: string } | null }).previousElementSibling?.className ?? '',
    );
    assert.match(before, /assistant/);
    await card.locator('summary').click();
    await card.locator('.condensed-summary h2', { hasText: 'Requests' }).waitFor();
    assert.match(await card.locator('.condensed-summary').innerText(), /Explain the gateway keys/);
    await page.screenshot({ path: join(SHOTS, 'chat-condensed.png') });
    await assertInView(card.locator('.condensed-summary h2').first(), 'the summary, from its start');
    assert.equal(await chat().locator('.turn').count(), turnsBefore, 'every turn stays on screen');
    // A second Condense has nothing new to take: it says so.
    await chat().locator('#condense').click();
    await chat().locator('#notice', { hasText: 'already condensed' }).waitFor({ timeout: 10_000 });
    // Later turns leave the card where it was made.
    await ask('Where were we?');
    await idle();
    assert.equal(await chat().locator('.condensed').count(), 1);
  });

  it("gives a question too large for the model's window back to the input, with the reason", async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await chat().locator('#model').selectOption('small-context-emu');
    await chat().locator('#model option[selected][value="small-context-emu"]').waitFor({ state: 'attached' });
    const huge = `Summarise this: ${'a long pasted log line with many words in it, '.repeat(3_000)}the end.`;
    await chat().locator('#input').fill(huge);
    await chat().locator('#input').press('Enter');
    await chat()
      .locator('#notice', { hasText: /needs about [\d.]+k tokens .* small-context-emu has room for about [\d.]+k/ })
      .waitFor({ timeout: 10_000 });
    assert.equal(await chat().locator('#input').inputValue(), huge, 'the question is back in the input');
    assert.equal(await chat().locator('.turn').count(), 0, 'nothing was sent');
    await assertInView(chat().locator('#notice'), 'the reason');
    await page.screenshot({ path: join(SHOTS, 'chat-too-large.png') });
    await chat().locator('#input').fill('');
    await chat().locator('#model').selectOption('gpt-4o-mini');
  });

  it('shows the project rules the chat sent, with their tokens, and drops one that is deleted', async () => {
    const agents = join(workspace, 'AGENTS.md');
    writeFileSync(agents, 'Run npm test before you finish. Keep functions small. Explain every change in one sentence.');
    try {
      await runPaletteCommand(page, 'Model Gateway: New Chat');
      await chat().locator('.empty').waitFor();
      await ask('What are the rules here?');
      await idle();
      const chip = chat().locator('#rules-in-use .chip.rule', { hasText: 'AGENTS.md' });
      await chip.waitFor();
      assert.match(await chip.innerText(), /AGENTS\.md · \d+/);
      assert.match((await chip.getAttribute('title')) ?? '', /in the system prompt, about \d+ tokens/);
      await assertInView(chip, 'the rules in use');
      await page.screenshot({ path: join(SHOTS, 'chat-rules.png') });
    } finally {
      rmSync(agents, { force: true });
    }
    await until('the deleted rules file out of the next request', async () => {
      await ask('And without them?');
      await idle();
      return (await chat().locator('#rules-in-use .chip.rule').count()) === 0;
    });
  });

  it('runs the tests in the sandbox without a question: in a terminal, with output and exit code in the tool card, which says where it ran', async () => {
    await chat().locator('#unasked', { hasText: 'Runs unasked: reads · commands in the sandbox' }).waitFor({ timeout: 30_000 });
    assert.equal(await askWatchingTheBar('Run the tests'), false, 'no question for a command the sandbox holds');
    // The command ran where the person can see it: a terminal of its own, in the panel.
    await page.getByText('Model Gateway agent (sandbox)').first().waitFor({ timeout: 30_000 });
    const card = lastAnswer().locator('details.tool', { hasText: 'run_command' }).first();
    await card.locator('summary', { hasText: /run_command\s*npm test\s*done/ }).waitFor();
    await lastAnswer().locator('.placement.inside', { hasText: 'ran in the sandbox' }).waitFor();
    await card.locator('summary').click();
    const result = await card.locator('pre').last().innerText();
    assert.match(result, /^\$ npm test\n\(in the workspace root; exit code 0; [\d.]+ s\)/);
    assert.match(result, /3 passing/);
    assert.match(await answerText(), /npm test succeeded \(exit code 0\): “3 passing”/);
    await assertInView(card.locator('pre').last(), 'the command output');
    await page.screenshot({ path: join(SHOTS, 'agent-command-sandbox.png') });
  });

  it('a command that needs the network asks once, naming the host, after its sandboxed run failed; run again with it open', async () => {
    const got: string[] = [];
    const site = createServer((req, res) => {
      got.push(req.url ?? '');
      res.end('pong\n');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const port = (site.address() as AddressInfo).port;
    try {
      await ask(`Run \`curl -fsS http://127.0.0.1:${port}/ping\` please`);
      const bar = chat().locator('#approval-bar');
      await bar.locator('.approval-command', { hasText: 'curl -fsS' }).waitFor({ timeout: 30_000 });
      assert.match(
        await bar.innerText(),
        /Run in the sandbox, with the network to 127\.0\.0\.1, in workspace root:[\s\S]*Asks because it failed in the sandbox and wants the network: 127\.0\.0\.1\./,
      );
      assert.deepEqual(got, [], 'nothing reached the host before the person opened it');
      assert.equal(await bar.locator('button', { hasText: 'Always allow' }).count(), 0);
      await page.screenshot({ path: join(SHOTS, 'agent-command-network.png') });
      await bar.locator('button[data-accept="true"]:not([data-always])').click();
      await bar.waitFor({ state: 'hidden' });
      await idle();
      await lastAnswer().locator('.placement.inside', { hasText: 'ran in the sandbox, with the network to 127.0.0.1' }).waitFor();
      const card = lastAnswer().locator('details.tool', { hasText: 'run_command' }).first();
      await card.locator('summary').click();
      assert.match(await card.locator('pre').last().innerText(), /exit code 0[\s\S]*pong/);
      assert.deepEqual(got, ['/ping'], 'one request, after the yes');
    } finally {
      site.close();
    }
  });

  it('Stop ends a long command in the sandbox and its turn', async () => {
    await ask('Run `sleep 40 && echo finished` please');
    await lastAnswer()
      .locator('summary', { hasText: /run_command.*running/ })
      .waitFor({ timeout: 30_000 });
    const stoppedAt = Date.now();
    await chat().locator('#stop').click();
    await idle();
    assert.ok(Date.now() - stoppedAt < 15_000, 'stopped within seconds, not after 40 s');
    await lastAnswer().locator('.badge', { hasText: 'Stopped' }).waitFor();
    const card = lastAnswer().locator('details.tool', { hasText: 'run_command' }).first();
    await card.locator('summary').click();
    assert.match(await card.innerText(), /stopped by the person/);
  });

  it('without a sandbox (off in the user settings) the person approves the command: run in a shell terminal; the card says so', async () => {
    await setSandbox(false, 'agent-sandbox-setting.png');
    await chat()
      .locator('#unasked', { hasText: /Runs unasked: reads(?!\s*·)/ })
      .waitFor({ timeout: 30_000 });
    await ask('Run the tests');
    const bar = chat().locator('#approval-bar');
    await bar.locator('.approval-command', { hasText: 'npm test' }).waitFor({ timeout: 30_000 });
    assert.match(await bar.innerText(), /Run in workspace root:\s*npm test\s*Asks because "npm test" is not in the allowed commands\./);
    await assertInView(bar.locator('button[data-accept="true"]:not([data-always])'), 'the Run button');
    await bar.locator('button', { hasText: 'Always allow' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'agent-command-approval.png') });
    await bar.locator('button[data-accept="true"]:not([data-always])').click();
    await bar.waitFor({ state: 'hidden' });
    await idle();
    const card = lastAnswer().locator('details.tool', { hasText: 'run_command' }).first();
    await card.locator('summary', { hasText: /run_command\s*npm test\s*done/ }).waitFor();
    await lastAnswer().locator('.placement.outside', { hasText: 'ran outside the sandbox, approved' }).waitFor();
    await card.locator('summary').click();
    const result = await card.locator('pre').last().innerText();
    assert.match(result, /^\$ npm test\n\(in the workspace root; exit code 0; [\d.]+ s\)/);
    assert.match(result, /3 passing/);
    await page.screenshot({ path: join(SHOTS, 'agent-command-done.png') });
  });

  it('"Always allow" lets the command run without the bar next time; Pause makes everything ask again', async () => {
    try {
      await ask('Run the tests');
      const bar = chat().locator('#approval-bar');
      await bar.locator('button', { hasText: 'Always allow' }).click({ timeout: 30_000 });
      await idle();
      await chat().locator('#unasked', { hasText: 'Runs unasked: reads · 1 allowed command' }).waitFor({ timeout: 10_000 });
      // Asked again: it runs with no bar at any moment of the turn.
      assert.equal(await askWatchingTheBar('Run the tests'), false, 'no approval bar for an always-allowed command');
      await lastAnswer()
        .locator('summary', { hasText: /run_command\s*npm test\s*done/ })
        .waitFor();
      await lastAnswer().locator('.placement.outside', { hasText: 'ran without a sandbox (allowed by your list)' }).waitFor();
      // One click pauses everything that ran unasked.
      await chat().locator('#toggle-pause').click();
      await chat().locator('#unasked.paused', { hasText: 'Auto-approval paused: everything asks.' }).waitFor({ timeout: 10_000 });
      await ask('Run the tests');
      await bar.locator('.approval-reason', { hasText: 'Asks because auto-approval is paused.' }).waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(SHOTS, 'agent-paused.png') });
      await bar.locator('button', { hasText: 'Reject' }).click();
      await idle();
      await chat().locator('#toggle-pause', { hasText: 'Resume' }).click();
      await chat().locator('#unasked:not(.paused)', { hasText: '1 allowed command' }).waitFor({ timeout: 10_000 });
    } finally {
      await setSandbox(true);
    }
  });

  it('offers MCP prompts after / (arguments asked, the text put in the input) and MCP resources after @', async () => {
    const input = chat().locator('#input');
    await input.fill('');
    await input.pressSequentially('/args');
    await chat().locator('#mentions .mention', { hasText: 'everything/args-prompt' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'agent-mcp-prompt.png') });
    await input.press('Enter');
    await answerPrompt(page, 'MCP prompt everything/args-prompt: city', 'Lisbon');
    await answerPrompt(page, 'MCP prompt everything/args-prompt: state', '');
    await until("the prompt's text in the input", async () => (await input.inputValue()) === "What's weather in Lisbon?", 15_000);
    await chat().locator('#notice', { hasText: 'From the MCP prompt everything/args-prompt' }).waitFor();
    await input.fill('');
    await input.pressSequentially('@architecture');
    await chat().locator('#mentions .mention', { hasText: 'everything: architecture.md' }).waitFor({ timeout: 30_000 });
    await input.press('Enter');
    const chip = chat().locator('#attachments .chip', { hasText: 'everything: architecture.md' });
    await chip.waitFor({ timeout: 15_000 });
    await chip.locator('button').click();
    await chip.waitFor({ state: 'detached' });
    await input.fill('');
  });

  it('works when moved to the secondary side bar', async () => {
    await runPaletteCommand(page, 'View: Move View');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /^Chat/ }).first().click();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Secondary Side Bar' }).first().click();
    // Webviews float over the workbench: the chat is the one drawn inside the secondary side bar.
    const frame = page.locator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).last();
    const moved = frame.contentFrame().locator('iframe#active-frame').contentFrame();
    await moved.locator('#input').waitFor({ timeout: 30_000 });
    const bar = await page.locator('.part.auxiliarybar').boundingBox();
    const box = await frame.boundingBox();
    assert.ok(bar && box && box.x >= bar.x - 1 && box.x + box.width <= bar.x + bar.width + 1, 'drawn in the secondary side bar');
    // The answer to this question, not the one before it (a long conversation takes a moment to draw).
    const before = await moved.locator('.turn.assistant').count();
    await moved.locator('#input').fill('Hello from the secondary side bar');
    await moved.locator('#input').press('Enter');
    await moved
      .locator('.turn.assistant')
      .nth(before)
      .and(moved.locator('.turn.assistant:not([data-status="streaming"])'))
      .locator('.usage')
      .waitFor({ timeout: 30_000 });
    assert.match(await moved.locator('.turn.user').last().innerText(), /Hello from the secondary side bar/);
    await runPaletteCommand(page, 'View: Reset View Locations');
    await openChat();
    await chat().locator('.turn.user', { hasText: 'Hello from the secondary side bar' }).waitFor({ timeout: 30_000 });
  });

  /** Clicks Accept in the approval bar for every decision the running answer asks, until it ends. */
  async function acceptUntilIdle(): Promise<void> {
    const accept = chat().locator('#approval-bar button', { hasText: 'Accept' }).first();
    for (;;) {
      if (await chat().locator('#send').isVisible()) return;
      if (await accept.isVisible().catch(() => false)) await accept.click().catch(() => undefined);
      await page.waitForTimeout(100);
    }
  }

  it("shows the problems an edit introduced in its tool card (tsserver's), and the next step's card says they are fixed", async () => {
    const file = join(workspace, 'src', 'calc.ts');
    const original = 'export const mul = (a: number, b: number): number => a * b;\n';
    writeFileSync(file, original);
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await ask('Use replace_in_file: "a * b;" becomes "a * c;" in src/calc.ts');
    const broke = lastAnswer().locator('.problems.bad').first();
    const accept = chat().locator('#approval-bar button', { hasText: 'Accept' }).first();
    // The first edit: accepted, then its card waits for the language server's word.
    await accept.waitFor({ timeout: 60_000 });
    await accept.click();
    await broke.waitFor({ timeout: 60_000 });
    assert.match(await broke.innerText(), /1 new problem[\s\S]*src\/calc\.ts:1\s+Cannot find name 'c'\. \(ts 2304\)/);
    await assertInView(broke, "the edit's new problem");
    await page.screenshot({ path: join(SHOTS, 'agent-problems.png') });
    await acceptUntilIdle();
    await lastAnswer().locator('.problems.ok', { hasText: 'No new problems; 1 fixed' }).waitFor({ timeout: 30_000 });
    assert.equal(readFileSync(file, 'utf8'), original, 'the fix took the broken edit back');
    // The problem links to its line.
    await broke.locator('[data-open-path="src/calc.ts"]').click();
    await page.locator('.tab', { hasText: 'calc.ts' }).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'agent-problems-fixed.png') });
    await runPaletteCommand(page, 'View: Close All Editors');
    rmSync(file, { force: true });
  });

  it('pins the plan of a multi-step answer above it and keeps the step in progress in view as it updates', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    // Every state the view drew, recorded in the view as it drew it (the rounds are milliseconds apart),
    // with whether the step in progress was inside the scrolled conversation then.
    await chat()
      .locator('#thread')
      .evaluate((thread) => {
        type El = { querySelector(s: string): El | null; textContent: string | null; getBoundingClientRect(): { top: number; bottom: number; height: number } };
        const g = globalThis as unknown as {
          __plan: { count: string; currentInView: boolean | null }[];
          MutationObserver: new (cb: () => void) => { observe(n: unknown, o: unknown): void };
          document: { getElementById(id: string): El | null };
        };
        g.__plan = [];
        new g.MutationObserver(() => {
          const plans = (thread as unknown as { querySelectorAll(s: string): El[] }).querySelectorAll('.turn.assistant:last-child .plan');
          const plan = plans[plans.length - 1];
          const count = plan?.querySelector('.plan-count')?.textContent ?? '';
          if (!count || g.__plan.at(-1)?.count === count) return;
          const current = plan.querySelector('.plan-item.in-progress');
          const box = g.document.getElementById('messages')!.getBoundingClientRect();
          const r = current?.getBoundingClientRect();
          g.__plan.push({ count, currentInView: r ? r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1 : null });
        }).observe(thread, { subtree: true, childList: true, characterData: true });
      });
    // Every round slowed, so the view can be photographed mid-way.
    emu.inject({ path: '/v1/chat', times: 6, fault: { kind: 'delayEvents', ms: 40 } });
    await ask('Read src/greet.ts, then read src/math.ts, then read README.md, then explain what the project does #words=40');
    const plan = lastAnswer().locator('.plan');
    await until(
      'a plan step in progress, drawn',
      async () =>
        (await plan
          .locator('.plan-count')
          .innerText()
          .catch(() => '')) === '2 of 4 done' || (await chat().locator('#send').isVisible()),
    );
    if ((await plan.locator('.plan-count').innerText()) === '2 of 4 done') await page.screenshot({ path: join(SHOTS, 'agent-plan-running.png') });
    await idle();
    const drawn = await chat()
      .locator('#thread')
      .evaluate(() => (globalThis as unknown as { __plan: { count: string; currentInView: boolean | null }[] }).__plan);
    const states = drawn.map((d) => d.count);
    for (const d of drawn) if (d.currentInView !== null) assert.ok(d.currentInView, `the step in progress is in view at ${d.count}`);
    assert.deepEqual(states.slice(0, 2), ['0 of 4 done', '1 of 4 done'], states.join(' → '));
    assert.equal(states.at(-1), '4 of 4 done');
    assert.equal(await plan.locator('.plan-item.done').count(), 4);
    assert.equal(await lastAnswer().locator('details.tool[data-call] b', { hasText: 'update_plan' }).count(), 0, 'no card repeats the plan');
    await plan.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'agent-plan-done.png') });
  });

  it('Plan mode: reads, writes a plan and stops; Approve plan switches to Agent and carries it out', async () => {
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('.empty').waitFor();
    await chat().locator('#mode').selectOption('plan');
    await chat().locator('#mode option[selected][value="plan"]').waitFor({ state: 'attached' });
    const edits = emu.requests.length;
    await ask('Read src/math.ts, then read src/greet.ts');
    await idle();
    const sent = emu.requests.slice(edits).filter((r) => r.path === '/v1/chat/completions');
    const offered = new Set(sent.flatMap((r) => ((r.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name)));
    assert.ok(
      offered.has('update_plan') && offered.has('read_file') && !offered.has('replace_in_file') && !offered.has('run_command'),
      [...offered].join(', '),
    );
    assert.match(await lastAnswer().locator('.who').innerText(), /· Plan$/);
    assert.equal(await lastAnswer().locator('.plan-item.pending').count(), 2);
    const approve = lastAnswer().locator('button', { hasText: 'Approve plan' });
    await approve.waitFor();
    await page.screenshot({ path: join(SHOTS, 'agent-plan-approve.png') });
    await approve.click();
    await chat().locator('#mode option[selected][value="agent"]').waitFor({ state: 'attached' });
    await chat().locator('.turn.assistant').nth(1).waitFor({ timeout: 30_000 });
    answersBefore = 1;
    await idle();
    assert.match(await chat().locator('.turn.user').last().innerText(), /Carry out this plan[\s\S]*1\. Read src\/math\.ts\n2\. read src\/greet\.ts/);
    assert.equal(await lastAnswer().locator('.plan-item.done').count(), 2);
    assert.equal(await lastAnswer().locator('button', { hasText: 'Approve plan' }).count(), 0);
  });

  it('a message sent while an answer runs waits queued (removed here); Fork copies the conversation; Start in Background asks first (cancelled here)', async () => {
    // The agents' own suite (agents.e2e) shows each at length; here each message of the view is driven once.
    emu.inject({ path: '/v1/chat', times: 2, fault: { kind: 'slowFirstByte', ms: 1500 } });
    await ask('Use read_file on src/math.ts');
    await chat().locator('#input').fill('A second thought');
    await chat().locator('#input').press('Enter');
    const queued = chat().locator('#queued .queued-row', { hasText: 'A second thought' });
    await queued.waitFor({ timeout: 10_000 });
    await queued.locator('button[aria-label="Remove"]').click();
    await queued.waitFor({ state: 'detached' });
    await idle();
    const title = await chat().locator('#title').innerText();
    await lastAnswer().locator('button', { hasText: 'Fork' }).click();
    await chat().locator('#title', { hasText: '(fork)' }).waitFor({ timeout: 10_000 });
    assert.equal(await chat().locator('#title').innerText(), `${title} (fork)`);
    await chat().locator('#input').fill('Tidy the README');
    await chat().locator('#background').click();
    const box = page.locator('.quick-input-widget input');
    await box.waitFor();
    assert.equal(await box.inputValue(), 'Tidy the README', 'the task is shown for the person to start');
    await page.keyboard.press('Escape');
    await box.waitFor({ state: 'hidden' });
  });

  const userSettingsFile = () => join(server.userDataDir, 'User', 'settings.json');

  /**
   * Writes the user settings as a person does: their settings.json opened from the palette, its
   * text replaced and saved (this code-server does not notice a file written behind its back).
   */
  async function saveUserSettings(settings: Record<string, unknown>): Promise<void> {
    // One line: the editor indents each new line it is given on top of the text's own indentation.
    const text = JSON.stringify(settings);
    await runPaletteCommand(page, 'Preferences: Open User Settings (JSON)');
    // VS Code 1.139 opens it over the window; 1.100 in a tab.
    const modal = page.locator('.monaco-modal-editor-block', { hasText: 'settings.json' });
    const tab = page.locator('.tab.active', { hasText: 'settings.json' }).first();
    await until('settings.json open', async () => (await modal.isVisible()) || (await tab.isVisible()), 30_000);
    const inModal = await modal.isVisible();
    const editor = (inModal ? modal : page.locator('.editor-group-container.active')).locator('.monaco-editor .view-lines').first();
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(text);
    // The brackets and quotes the editor closed by itself at the start are left after the text: taken out.
    await page.keyboard.press('Control+Shift+End');
    await page.keyboard.press('Delete');
    await page.keyboard.press('Control+S');
    await until('settings.json saved', () => readFileSync(userSettingsFile(), 'utf8').trim() === text, 15_000);
    if (inModal) {
      await modal.locator('.codicon-close, .codicon-chrome-close').last().click();
      await modal.waitFor({ state: 'hidden' });
    } else await runPaletteCommand(page, 'View: Close All Editors');
  }

  /** Sets user settings (null takes one out) and gives back the settings as they were. */
  async function editUserSettings(values: Record<string, unknown>): Promise<Record<string, unknown>> {
    const before = JSON.parse(readFileSync(userSettingsFile(), 'utf8')) as Record<string, unknown>;
    const settings = { ...before };
    for (const [k, v] of Object.entries(values))
      if (v === null) delete settings[k];
      else settings[k] = v;
    await saveUserSettings(settings);
    return before;
  }

  /** The chain the model menu names for the chat's model (the item "Fallback chain for …"), read once the menu opens. */
  async function chainInModelMenu(): Promise<string> {
    await runPaletteCommand(page, 'Model Gateway: Pick Chat Model');
    const item = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Fallback chain for' });
    await item.waitFor({ timeout: 30_000 });
    const chain = await item.locator('.label-description').innerText();
    await page.keyboard.press('Escape');
    await item.waitFor({ state: 'hidden' });
    return chain.trim();
  }

  it('an answer that stalls mid-way keeps its text and offers Continue with the next model of the chain, which goes on', async () => {
    // The person's chain, and a short wait for a silent stream, in their user settings.
    const settingsBefore = await editUserSettings({ 'modelGateway.fallbackModels': { 'gpt-4o-mini': ['gpt-4o'] }, 'modelGateway.streamIdleTimeoutSeconds': 2 });
    try {
      await until('the chain read from the user settings', async () => (await chainInModelMenu()) === 'gpt-4o', 30_000);
      await runPaletteCommand(page, 'Model Gateway: New Chat');
      await chat().locator('.empty').waitFor();
      // The chat's model sends its first words, then nothing.
      emu.inject({ path: '/v1/chat', model: 'gpt-4o-mini', times: 1, fault: { kind: 'stall', afterEvents: 3 } });
      await ask('Explain the fallback chain #words=80');
      await idle();
      const answer = lastAnswer();
      assert.equal(await answer.getAttribute('data-status'), 'error');
      const partial = await answerText();
      assert.ok(partial.trim().length > 0, 'the words that came are kept');
      assert.doesNotMatch(partial, /\(emulated\) read/, 'it stopped before its end');
      const card = answer.locator('.error-card');
      const button = card.locator('button[data-continue-with="gpt-4o"]');
      await button.waitFor();
      assert.equal((await button.innerText()).trim(), 'Continue with gpt-4o');
      await card.locator('button', { hasText: 'Retry' }).waitFor();
      await assertInView(button, 'the Continue with button');
      const overflow = await card.evaluate(
        (el) => (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth - (el as unknown as { clientWidth: number }).clientWidth,
      );
      assert.ok(overflow <= 1, `the error card fits the side bar (${overflow} px over)`);
      await page.screenshot({ path: join(SHOTS, 'chat-continue-with.png') });
      // Continue with: the chat's model becomes the next one, and it goes on from there.
      const from = emu.requestsTo('/v1/chat/completions').length;
      answersBefore = await chat().locator('.turn.assistant').count();
      await button.click();
      await chat().locator('.turn.assistant').nth(answersBefore).waitFor({ timeout: 30_000 });
      await idle();
      assert.equal(await lastAnswer().getAttribute('data-status'), 'done');
      assert.match(await chat().locator('.turn.user').last().innerText(), /Continue from where the last answer stopped\./);
      assert.match(await lastAnswer().locator('.who').innerText(), /^gpt-4o · /);
      assert.match(await answerText(), /gpt-4o\s+\(emulated\) read 3 messages/, 'the next model read the question and the partial answer');
      await chat().locator('#model option[selected][value="gpt-4o"]').waitFor({ state: 'attached' });
      const sent = emu.requestsTo('/v1/chat/completions').slice(from);
      assert.deepEqual(
        sent.map((r) => (r.body as { model: string }).model),
        ['gpt-4o'],
      );
      const messages = (sent[0].body as { messages: { role: string; content: unknown }[] }).messages;
      assert.ok(
        messages.some((m) => m.role === 'assistant' && JSON.stringify(m.content).includes(partial.trim().split(/\s+/)[0])),
        'the partial answer went with it',
      );
      await page.screenshot({ path: join(SHOTS, 'chat-continued.png') });
    } finally {
      emu.faults.clear();
      await saveUserSettings(settingsBefore);
      await chat().locator('#model').selectOption('gpt-4o-mini');
      await chat().locator('#model option[selected][value="gpt-4o-mini"]').waitFor({ state: 'attached' });
    }
    // The settings are back: the next tests see no chain.
    await until('the chain gone from the user settings', async () => /^none/.test(await chainInModelMenu()), 30_000);
  });

  it('drove every message the view can send, as the host logged them', function () {
    // A test above that failed stopped before driving its messages: that failure is reported
    // once, where it happened, not again here.
    if (failedAbove.length) {
      console.log(`    (not checked: ${failedAbove.length} test(s) above failed before driving their messages)`);
      this.skip();
    }
    const seen = receivedTypes(server.userDataDir);
    const missing = fromWebviewTypes().filter((t) => !seen.has(t));
    assert.deepEqual(missing, [], `message types no test drove: ${missing.join(', ')}`);
  });
});
