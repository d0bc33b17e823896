// @vscode-specific: the chat webview's answer cards and the model menu's quick picks (a multi-select one), which changed since 1.100.
import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import type { GatewayEmulator } from '../emulator/server';
import { until } from '../wait';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');

/** The chat's model and the next one of the person's chain (user settings). */
const BUSY = 'gpt-4o-mini';
const NEXT = 'gpt-4o';

/**
 * The fallback chain as a person meets it in the chat panel (issue 74): their chat model is busy,
 * the next model of their chain answers and the card says so; after two fallbacks the model menu
 * says the busy model is tried last, and the chain can be looked at (with prices) from the menu.
 * Continue with (an answer that stopped mid-way) is in chat.e2e.test.ts, which counts the view's
 * messages driven.
 */
describe('fallback chain in the chat panel (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let wb: Workbench | undefined;
  let emu: GatewayEmulator;
  let page: Page;

  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');
  const lastAnswer = () => chat().locator('.turn.assistant').last();
  const answerText = async () => (await lastAnswer().locator('.markdown').allInnerTexts()).join('\n');
  const fallbackLine = () => lastAnswer().locator('.fallback-line');
  let answersBefore = 0;

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

  /** The models the chat asked since `from` (the emulator's log of chat completions), in order. */
  const askedSince = (from: number) =>
    emu
      .requestsTo('/v1/chat/completions')
      .slice(from)
      .map((r) => (r.body as { model: string }).model);

  /** The open quick pick whose title starts with `title`. */
  const quickPick = (title: string | RegExp) => page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: title }) });
  /** A quick pick's row for exactly this label. */
  const row = (pick: Locator, label: string) =>
    pick
      .locator('.quick-input-list .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });

  /** How far a box's content runs past its width (0: it fits). */
  const overflowOf = (locator: Locator) =>
    locator.evaluate(
      (el) => (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth - (el as unknown as { clientWidth: number }).clientWidth,
    );

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      codeServer: (e) => ({
        env: demoCredentials(e, { accessToken: true }),
        // The person's chain, in their user settings (the only place a chain is read from).
        settings: { 'modelGateway.defaultModels.chat': BUSY, 'modelGateway.fallbackModels': { [BUSY]: [NEXT] } },
      }),
    });
    ({ emu, page } = wb);
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  afterEach(async function () {
    emu.faults.clear();
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `chat-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
    // Nothing left open for the next test: a quick pick (Escape closes only an open one).
    if (
      await page
        .locator('.quick-input-widget')
        .isVisible()
        .catch(() => false)
    )
      await page.keyboard.press('Escape');
  });

  after(async () => {
    // The user settings go with the workbench's own user data folder.
    await wb?.close();
  });

  it('a busy chat model (503 no channel): the next model of the chain answers and the card says which, why and who answered', async () => {
    emu.inject({ path: '/v1/chat', model: BUSY, times: null, fault: { kind: 'busy', reason: 'no-channel' } });
    // The next model's answer slowed, so it can be seen streaming.
    emu.inject({ path: '/v1/chat', model: NEXT, times: 1, fault: { kind: 'delayEvents', ms: 25 } });
    const from = emu.requestsTo('/v1/chat/completions').length;
    await ask('What does a fallback chain do? #words=150');
    const expected = `${BUSY} busy (503: no available channel) → answered by ${NEXT}`;
    // The line shows while the answer streams (the host posts the turn on the move).
    await fallbackLine().waitFor({ timeout: 30_000 });
    if (await chat().locator('#stop').isVisible()) {
      assert.equal((await fallbackLine().innerText()).trim(), expected, 'while streaming');
      await page.screenshot({ path: join(SHOTS, 'chat-fallback-streaming.png') });
    }
    await idle();
    assert.equal(await lastAnswer().getAttribute('data-status'), 'done');
    assert.equal((await fallbackLine().innerText()).trim(), expected);
    assert.match(await answerText(), new RegExp(`${NEXT}\\s+\\(emulated\\)`), "the next model's answer");
    assert.match(await lastAnswer().locator('.who').innerText(), new RegExp(`^${NEXT} · `), 'the header names the model that answered');
    assert.equal(await lastAnswer().locator('.error-card').count(), 0);
    // One request to the busy model (a 503 is not sent again while a next model waits), then the next.
    assert.deepEqual(askedSince(from), [BUSY, NEXT]);
    // The chat's model is still the person's choice.
    await chat().locator(`#model option[selected][value="${BUSY}"]`).waitFor({ state: 'attached' });
    await page.screenshot({ path: join(SHOTS, 'chat-fallback.png') });
    // Narrow, the line wraps inside the card: nothing runs past the side bar's edge.
    await page.setViewportSize({ width: 760, height: 900 });
    try {
      await until('the workbench laid out at 760 px', async () => Math.round((await page.locator('.monaco-workbench').boundingBox())?.width ?? 0) === 760);
      await fallbackLine().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, 'chat-fallback-narrow.png') });
      assert.ok((await overflowOf(fallbackLine())) <= 1, 'the fallback line fits the narrow panel');
      assert.ok((await overflowOf(chat().locator('#messages'))) <= 1, 'no sideways scrolling');
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
  });

  it('after two fallbacks in five minutes the model menu says the busy model is tried last; its chain is shown with prices', async () => {
    emu.inject({ path: '/v1/chat', model: BUSY, times: null, fault: { kind: 'busy', reason: 'no-channel' } });
    // The second fallback within five minutes (the first was the test above) trips the breaker.
    await ask('And a second question?');
    await idle();
    assert.equal((await fallbackLine().innerText()).trim(), `${BUSY} busy (503: no available channel) → answered by ${NEXT}`);

    await runPaletteCommand(page, 'Model Gateway: Pick Chat Model');
    const menu = quickPick('Chat model');
    await menu.waitFor();
    const busy = row(menu, BUSY);
    await busy.waitFor({ timeout: 30_000 });
    assert.match(await busy.locator('.label-description').innerText(), /busy: tried last until \d{1,2}:\d{2}/);
    assert.doesNotMatch(await row(menu, NEXT).innerText(), /busy/, 'the model that answered is not marked');
    const chainItem = menu.locator('.quick-input-list .monaco-list-row', { hasText: `Fallback chain for ${BUSY}…` });
    await chainItem.waitFor();
    assert.equal((await chainItem.locator('.label-description').innerText()).trim(), NEXT, 'the chain from the user settings');
    await page.screenshot({ path: join(SHOTS, 'fallback-model-menu.png') });

    // The chain picker: every other model with its price, the chain's own ticked.
    await chainItem.click();
    const picker = quickPick(`Fallback chain for ${BUSY}: ${NEXT}`);
    await picker.waitFor({ timeout: 30_000 });
    const next = row(picker, NEXT);
    await next.waitFor();
    assert.match(await next.locator('.label-description').innerText(), /\$[\d.]+ (in · \$[\d.]+ out per M tokens|a request)/, 'priced');
    assert.equal(await row(picker, BUSY).count(), 0, 'the busy model is not its own fallback');
    assert.equal(await next.getAttribute('aria-checked'), 'true', 'the chain’s model is ticked');
    await page.screenshot({ path: join(SHOTS, 'fallback-chain-picker.png') });
    const settingsBefore = readFileSync(join(wb!.server.userDataDir, 'User', 'settings.json'), 'utf8');
    await page.keyboard.press('Escape');
    await picker.waitFor({ state: 'hidden' });
    assert.equal(readFileSync(join(wb!.server.userDataDir, 'User', 'settings.json'), 'utf8'), settingsBefore, 'closed: the chain is unchanged');

    // The third question goes to the next model first: the tripped one is not asked.
    const from = emu.requestsTo('/v1/chat/completions').length;
    await ask('A third one?');
    await idle();
    assert.equal((await fallbackLine().innerText()).trim(), `${BUSY} busy twice in 5 min: tried last → answered by ${NEXT}`);
    assert.deepEqual(askedSince(from), [NEXT]);
  });
});
