import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { RecordedRequest } from '../emulator/server';
import { GatewayEmulator } from '../emulator/server';
import { png } from '../emulator/media';
import { pngSize } from '../../src/assets/core/png';
import { until } from '../wait';
import { ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const SHOTS = join(ROOT, 'test-results', 'screenshots-newest');
/** VS Code's chat without a GitHub sign-in: its model picker then offers the providers' models. */
const CHAT_SETTINGS = { 'chat.allowAnonymousAccess': true, 'workbench.secondarySideBar.defaultVisibility': 'visible' };

type Json = Record<string, unknown>;
const bodyOf = (r: RecordedRequest) => r.body as Json;
const posts = (emu: GatewayEmulator, path: string) => emu.requests.filter((r) => r.method === 'POST' && r.path === path);

/** The chat's input, model picker, answers and buttons, as a person finds them in the Chat view. */
function chatView(page: Page) {
  const input = page.locator('.interactive-input-part');
  return {
    picker: input.locator('.action-label.model-picker-split'),
    pickerRows: page.locator('.action-widget .monaco-list-row'),
    latestAnswer: page.locator('.interactive-item-container.interactive-response.chat-most-recent-response'),
    stop: input.locator('.action-label.codicon-stop-circle'),
    async focusInput(): Promise<void> {
      const editor = input.locator('.monaco-editor').first();
      await until(
        'the chat input focused',
        async () => {
          await editor.click({ force: true });
          return (await editor.getAttribute('class'))?.split(/\s+/).includes('focused') || undefined;
        },
        15_000,
      );
    },
    async ask(question: string): Promise<void> {
      const editor = input.locator('.monaco-editor').first();
      await this.focusInput();
      await page.keyboard.type(question);
      await until(
        'the question in the input',
        async () => ((await editor.innerText()).replace(/\s+/g, ' ').includes(question.slice(0, 20)) ? true : undefined),
        10_000,
      );
      await page.keyboard.press('Enter');
    },
    async pick(model: string): Promise<void> {
      const others = this.pickerRows.filter({ hasText: 'Other Models' }).first();
      const row = this.pickerRows.filter({ has: page.locator('span.title', { hasText: new RegExp(`^${model.replace(/[.]/g, '\\.')}$`) }) }).first();
      // Tried again while the view settles (a new chat lays the view out anew and can close the list).
      await until(
        `${model} picked`,
        async () => {
          if ((await this.picker.innerText()).trim() === model) return true;
          await page.keyboard.press('Escape');
          await this.picker.click();
          await others.waitFor({ timeout: 5_000 });
          await page.waitForTimeout(300);
          // Past the first models, VS Code folds the rest under "Other Models" (a toggle: opened only when folded).
          if ((await row.count()) === 0) await others.click({ timeout: 3_000 });
          await row.click({ timeout: 3_000 }).catch(() => undefined);
          return undefined;
        },
        40_000,
      );
    },
    /** The answer written out (VS Code shows streamed text word by word) and the toasts cleared, for a screenshot. */
    async done(): Promise<void> {
      await this.stop.waitFor({ state: 'hidden', timeout: 30_000 });
      await page.waitForTimeout(1_000);
      await runPaletteCommand(page, 'Notifications: Clear All Notifications');
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
      await page.waitForTimeout(500);
    },
    async newChat(): Promise<void> {
      await page.keyboard.press('Escape');
      await page.locator('.part.auxiliarybar .title-actions .action-label[aria-label^="New Chat"]').first().click();
      await this.latestAnswer.waitFor({ state: 'detached', timeout: 10_000 });
    },
  };
}

/**
 * VS Code's own chat (code-server 1.139.1, Copilot Chat built in, no GitHub sign-in) as a client of
 * our language-model provider, driven through its UI: the picker, questions, agent-mode tools,
 * pasted images, Stop, and setting the gateway up from the Language Models editor.
 */
describe("VS Code's own chat with the gateway's models (code-server 1.139, headless Chromium)", function () {
  this.timeout(240_000);
  let wb: Workbench | undefined;
  let page: Page;
  let chat: ReturnType<typeof chatView>;

  before(async function () {
    // The oldest VS Code we support (1.100) has no language-model provider API and no chat of its
    // own to drive: nothing of this applies there (the integration suite checks that nothing is
    // registered and nothing fails on it).
    if (testedVsCode() !== 'newest') {
      console.log('    (skipped on the oldest VS Code: no language-model provider API, no chat of its own)');
      this.skip();
    }
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({ codeServer: (e) => ({ env: demoCredentials(e), settings: CHAT_SETTINGS }) });
    page = wb.page;
    chat = chatView(page);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page
        ?.screenshot({ path: join(ROOT, 'test-results', `vscode-chat-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) })
        .catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it('a fresh window: the model picker lists the gateway models, with nothing opened first', async () => {
    await chat.picker.waitFor({ timeout: 60_000 });
    // Not VS Code's "Auto" (nothing else to offer) but one of ours, picked by default.
    await until(
      'a gateway model in the picker',
      async () => ((await chat.picker.innerText()).trim().endsWith('-emu') || (await chat.picker.innerText()).includes('gpt-') ? true : undefined),
      60_000,
    );
    await chat.picker.click();
    await page.locator('.action-widget').getByText('Other Models').click();
    const rows = await chat.pickerRows.allInnerTexts();
    for (const model of ['claude-haiku-emu', 'gpt-4o', 'gpt-4o-mini'])
      assert.ok(
        rows.some((r) => r.startsWith(model) && r.includes('Model Gateway')),
        `${model} offered: ${rows.join(' | ')}`,
      );
    assert.ok(!rows.some((r) => /embedding|rerank|whisper|tts/.test(r)), 'only chat models');
    await page.screenshot({ path: join(SHOTS, 'vscode-chat-picker.png') });
    await page.keyboard.press('Escape');
  });

  it("a question in VS Code's chat is streamed from the gateway, its instructions sent as the system prompt", async () => {
    const emu = wb!.emu;
    await chat.pick('gpt-4o');
    const before = posts(emu, '/v1/chat/completions').length;
    await chat.ask('Say hello in one short sentence.');
    await until('the answer', async () => ((await chat.latestAnswer.innerText().catch(() => '')).includes('gpt-4o (emulated)') ? true : undefined), 60_000);
    const text = await chat.latestAnswer.innerText();
    assert.match(text, /What you asked: “Say hello in one short sentence\.”/, 'the emulator answered the request the person typed');
    const sent = posts(emu, '/v1/chat/completions').slice(before);
    assert.equal(sent.length, 1, 'one request for one question');
    const messages = bodyOf(sent[0]).messages as Json[];
    assert.equal(messages[0].role, 'system', "VS Code's instructions are the system message");
    assert.match(String(messages[0].content), /programming assistant/);
    assert.ok(
      messages.slice(1).every((m) => !String(JSON.stringify(m.content)).includes('programming assistant')),
      'and are not repeated as something the person said',
    );
    assert.equal(bodyOf(sent[0]).stream, true);
    await chat.done();
    await page.screenshot({ path: join(SHOTS, 'vscode-chat-answer.png') });
  });

  for (const [model, path] of [
    ['claude-haiku-emu', '/v1/messages'],
    ['gpt-4o', '/v1/chat/completions'],
    // A reasoning model refuses a tool round without its reasoning (deepseek's rule, kept by the emulator).
    ['deepseek-reasoner-emu', '/v1/chat/completions'],
  ] as const) {
    it(`agent mode: one tool round trip through ${model} (${path})`, async () => {
      const emu = wb!.emu;
      await chat.newChat();
      await chat.pick(model);
      const before = posts(emu, path).length;
      await chat.ask('Use read_file on src/greet.ts and tell me what it exports.');
      await until(
        'the answer from the tool result',
        async () => ((await chat.latestAnswer.innerText().catch(() => '')).includes('read_file returned: export function greet') ? true : undefined),
        60_000,
      );
      const [first, second] = posts(emu, path).slice(before);
      assert.ok(first && second, 'a request for the call and one with its result');
      const tools = bodyOf(first).tools as Json[];
      assert.ok(tools.length > 10, "VS Code's agent offers its tools through our provider");
      const messages = bodyOf(second).messages as Json[];
      if (path === '/v1/messages') {
        const call = (messages.at(-2)?.content as Json[]).find((b) => b.type === 'tool_use')!;
        assert.equal(call.name, 'read_file');
        assert.match(String((call.input as Json).filePath), /^\/.*\/src\/greet\.ts$/, 'VS Code asked for an absolute path; the call carries one');
        const result = (messages.at(-1)?.content as Json[]).find((b) => b.type === 'tool_result')!;
        assert.equal(result.tool_use_id, call.id, 'the result answers that call');
        assert.match(JSON.stringify(result.content), /export function greet/);
      } else {
        const calls = messages.at(-2)?.tool_calls as Json[];
        assert.equal((calls[0].function as Json).name, 'read_file');
        assert.equal(messages.at(-1)?.role, 'tool');
        assert.equal(messages.at(-1)?.tool_call_id, calls[0].id, 'the result answers that call');
        assert.match(String(messages.at(-1)?.content), /export function greet/);
        if (model === 'deepseek-reasoner-emu')
          assert.ok(
            typeof messages.at(-2)?.reasoning_content === 'string' && (messages.at(-2)?.reasoning_content as string).length > 0,
            'the reasoning went back with the call',
          );
      }
      await chat.done();
      if (model === 'claude-haiku-emu') await page.screenshot({ path: join(SHOTS, 'vscode-chat-tool.png') });
    });
  }

  it("an image pasted into VS Code's chat reaches the model", async () => {
    const emu = wb!.emu;
    await chat.newChat();
    await chat.pick('claude-haiku-emu');
    await chat.focusInput();
    const image = png(64, 48, 7);
    // The image on the clipboard as a screenshot tool puts it there, then Ctrl+V.
    await page.evaluate(async (data) => {
      interface ClipboardGlobals {
        navigator: { clipboard: { write(items: unknown[]): Promise<void> } };
        ClipboardItem: new (items: Record<string, Blob>) => unknown;
      }
      const g = globalThis as unknown as ClipboardGlobals;
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      await g.navigator.clipboard.write([new g.ClipboardItem({ 'image/png': new Blob([bytes], { type: 'image/png' }) })]);
    }, image.toString('base64'));
    await page.keyboard.press('Control+V');
    await page.locator('.interactive-input-part .chat-attached-context').getByText('Pasted Image').waitFor({ timeout: 10_000 });
    const before = posts(emu, '/v1/messages').length;
    await chat.ask('What is in this picture?');
    await until(
      'the answer',
      async () => ((await chat.latestAnswer.innerText().catch(() => '')).includes('I looked at the image you attached') ? true : undefined),
      60_000,
    );
    const sent = posts(emu, '/v1/messages').slice(before);
    const last = (bodyOf(sent[0]).messages as Json[]).at(-1)!;
    const block = (last.content as Json[]).find((b) => b.type === 'image');
    assert.ok(block, 'an image block in the question');
    assert.equal((block.source as Json).media_type, 'image/png');
    // VS Code re-encodes what it takes from the clipboard: the same picture, not the same bytes.
    assert.deepEqual(pngSize(Buffer.from(String((block.source as Json).data), 'base64')), { width: 64, height: 48 }, 'the picture the person pasted');
  });

  it("Stop in VS Code's chat ends the request at the gateway and keeps what was streamed", async () => {
    const emu = wb!.emu;
    await chat.newChat();
    await chat.pick('claude-haiku-emu');
    emu.faults.add({ path: '/v1/messages', times: 1, fault: { kind: 'delayEvents', ms: 250 } });
    const before = posts(emu, '/v1/messages').length;
    await chat.ask('Explain closures at length #words=400');
    await until('text streaming in', async () => ((await chat.latestAnswer.innerText().catch(() => '')).includes('What you asked') ? true : undefined), 60_000);
    await page.screenshot({ path: join(SHOTS, 'vscode-chat-streaming.png') });
    await chat.stop.click();
    const request = await until(
      'the gateway sees the connection closed',
      () => {
        const r = posts(emu, '/v1/messages').slice(before)[0];
        return r?.aborted ? r : undefined;
      },
      15_000,
    );
    assert.ok(request.aborted);
    await chat.stop.waitFor({ state: 'hidden', timeout: 10_000 });
    const kept = await chat.latestAnswer.innerText();
    assert.match(kept, /The short answer is[\s\S]*What you asked/, 'the streamed part stays');
    assert.ok(!kept.includes('(emulated) read'), 'and the rest never came');
    assert.equal(posts(emu, '/v1/messages').length, before + 1, 'nothing sent again');
    await page.screenshot({ path: join(SHOTS, 'vscode-chat-stopped.png') });
  });

  it("the chat's utility requests: the person picks a gateway model, written to their user settings", async () => {
    await runPaletteCommand(page, "Model Gateway: Choose the Model for VS Code Chat's Utility Requests");
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await rows.filter({ hasText: 'gpt-4o-mini' }).first().waitFor({ timeout: 30_000 });
    const order = await page.locator('.quick-input-widget .monaco-list-row .label-name').allInnerTexts();
    assert.ok(order.indexOf('gpt-4o-mini') < order.indexOf('gpt-4o'), `cheapest first: ${order.join(', ')}`);
    await rows.filter({ hasText: 'gpt-4o-mini' }).first().click();
    const settingsFile = join(wb!.server.userDataDir, 'User', 'settings.json');
    const written = await until(
      'the user settings written',
      () => {
        const text = readFileSync(settingsFile, 'utf8');
        return text.includes('"chat.utilitySmallModel"') ? text : undefined;
      },
      15_000,
    );
    assert.match(written, /"chat\.utilityModel": "model-gateway\/gpt-4o-mini"/);
    assert.match(written, /"chat\.utilitySmallModel": "model-gateway\/gpt-4o-mini"/);
    // VS Code's chat stops asking for them.
    await page.getByText('Set BYOK utility models').waitFor({ state: 'hidden', timeout: 15_000 });
  });
});

describe("VS Code's Language Models editor sets the gateway up (code-server 1.139, headless Chromium)", function () {
  this.timeout(240_000);
  let wb: Workbench | undefined;

  before(async function () {
    // As above: VS Code 1.100 has neither the provider API nor this editor.
    if (testedVsCode() !== 'newest') {
      console.log('    (skipped on the oldest VS Code: no Language Models editor)');
      this.skip();
    }
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({ codeServer: () => ({ settings: CHAT_SETTINGS }) });
  });

  after(async () => {
    await wb?.close();
  });

  it('with no gateway set, Add Models → Model Gateway asks for the URL and key, then lists the models with prices', async () => {
    const page = wb!.page;
    const chat = chatView(page);
    await chat.picker.waitFor({ timeout: 60_000 });
    // No gateway yet, so Model Gateway's walkthrough opened on this first start. The person closes
    // it: it moves on, and takes the focus, as its steps complete while the URL and key are typed.
    await page.locator('.part.editor').filter({ hasText: 'Get started with Model Gateway' }).first().waitFor({ timeout: 30_000 });
    await runPaletteCommand(page, 'View: Close All Editors');
    await page
      .locator('.part.editor')
      .filter({ hasText: 'Get started with Model Gateway' })
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => undefined);
    await chat.picker.click();
    await page.locator('.action-widget').getByText('Manage Models...').click();
    await page.getByText('Add Models').first().click();
    await page.locator('.action-widget, .context-view').getByText('Model Gateway', { exact: true }).click();
    const box = page.locator('.quick-input-widget');
    await box.getByText('Model Gateway: Gateway URL').waitFor({ timeout: 15_000 });
    await page.keyboard.type(wb!.emu.url);
    await page.keyboard.press('Enter');
    await box.getByText('Model Gateway: API Key').waitFor({ timeout: 15_000 });
    await page.keyboard.type(GatewayEmulator.demoKey);
    await page.keyboard.press('Enter');
    const row = page.locator('.monaco-list-row', { hasText: 'claude-sonnet-emu' }).first();
    await row.waitFor({ timeout: 30_000 });
    // The Pricing column: dollars from the gateway's price list (the cell shows its start).
    assert.match(await row.innerText(), /\$6 in/);
    // Its hover says it whole.
    await row.locator('.model-cost-grid').hover();
    await page.getByText('Pricing: $6 in · $24 out per M tokens').waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, 'vscode-chat-models-editor.png') });
    await page.keyboard.press('Escape');
    // And the chat's picker has them now.
    await until(
      'a gateway model in the picker',
      async () => ((await chat.picker.innerText()).includes('emu') || (await chat.picker.innerText()).includes('gpt-') ? true : undefined),
      30_000,
    );
  });
});
