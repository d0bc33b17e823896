// @vscode-specific: keyboard focus in and out of webviews and the themes' colours are the workbench's.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import type { AxeResults } from 'axe-core';
import { GatewayEmulator } from '../emulator/server';
import { until } from '../wait';
import { EXTENSION_ID, openModelGatewayContainer, ROOT, runPaletteCommand, testedVsCode, webviewFrame } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const ARTIFACTS = join(ROOT, 'test-results');
const SHOTS = join(ARTIFACTS, testedVsCode() === 'newest' ? 'screenshots-newest' : 'screenshots');
/** axe-core's browser build, run inside the webview the way its docs say (the script, then axe.run). */
const AXE_SOURCE = readFileSync(createRequire(__filename).resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string; help: string; nodes: string[] };

/**
 * Runs axe-core in the webview's document. Playwright's evaluate goes through the DevTools protocol,
 * so the webview's Content Security Policy (no inline script, no eval) stays as users have it.
 */
async function axe(frame: Frame): Promise<Violation[]> {
  if ((await frame.evaluate('typeof axe')) !== 'object') await frame.evaluate(AXE_SOURCE);
  const results = await frame.evaluate<AxeResults>(`axe.run(document, { resultTypes: ['violations'] })`);
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact ?? 'unknown',
    help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(' ')}${n.any[0]?.message ? ` (${n.any[0].message})` : ''}`),
  }));
}

/** Serious and critical violations fail; the others are printed, for the record. */
function assertNoSerious(what: string, violations: Violation[]): void {
  for (const v of violations)
    console.log(
      `    axe (${what}): ${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).join(', ')}${v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''}`,
    );
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.impact} ${v.id}: ${v.nodes.join(', ')}`),
    [],
    `axe: no serious or critical violation in ${what}`,
  );
}

describe('accessibility of the chat and Usage views (axe-core, keyboard only)', function () {
  this.timeout(240_000);
  let emu: GatewayEmulator;
  let wb: Workbench | undefined;
  let page: Page;
  let workspace: string;

  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().frameLocator('iframe#active-frame');
  const chatFrame = (): Promise<Frame> => webviewFrame(page, '#input');
  const lastAnswer = () => chat().locator('.turn.assistant').last();

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    wb = await startWorkbench({
      emulator: { historyDays: 3 },
      codeServer: (e) => ({ env: demoCredentials(e, { accessToken: true }), settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    ({ emu, page, workspace } = wb);
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      await page.screenshot({ path: join(ARTIFACTS, `a11y-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
    emu.faults.clear();
    // A decision a failed test left waiting would hold the next test's questions back.
    if (this.currentTest?.state === 'failed')
      for (const reject of await chat().locator('#approval-bar button', { hasText: 'Reject' }).all()) await reject.click().catch(() => undefined);
  });

  after(async () => {
    await wb?.close();
  });

  it('axe finds nothing serious in the chat: empty, streaming, with an approval pending, with an error', async () => {
    const frame = await chatFrame();
    assertNoSerious('the empty chat', await axe(frame));

    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 40 } });
    const input = chat().locator('#input');
    await input.fill('A long answer please #words=400');
    await input.press('Enter');
    await chat().locator('#stop').waitFor({ state: 'visible' });
    await lastAnswer().locator('.markdown').first().waitFor();
    assertNoSerious('a streaming answer', await axe(frame));
    assert.ok(await chat().locator('#stop').isVisible(), 'still streaming while axe ran');
    await chat().locator('#stop').click();
    await chat().locator('#send').waitFor({ state: 'visible' });
    emu.faults.clear();

    await input.fill('Use replace_in_file on src/math.ts to replace "a + b" with "b + a"');
    await input.press('Enter');
    await chat().locator('#approval-bar button', { hasText: 'Reject' }).waitFor({ timeout: 60_000 });
    assertNoSerious('an edit waiting for approval', await axe(frame));
    await chat().locator('#approval-bar button', { hasText: 'Reject' }).click();
    await chat().locator('#send').waitFor({ state: 'visible', timeout: 60_000 });

    emu.inject({ path: '/v1/chat', fault: { kind: 'status', status: 429, retryAfter: '90' } });
    await input.fill('And now?');
    await input.press('Enter');
    await lastAnswer().locator('.error-card').waitFor({ timeout: 60_000 });
    assertNoSerious('an error card', await axe(frame));
  });

  it('keyboard alone sends, stops, moves between turns, accepts and rejects edits and opens the history; each end is announced once', async () => {
    const frame = await chatFrame();
    // In the webview's page (this project's test code has no DOM types: the browser code is a string).
    const focused = (): Promise<string> =>
      frame.evaluate(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return 'body';
        return el.id ? '#' + el.id : el.dataset.turn ? 'turn ' + el.dataset.turn + ' ' + (el.getAttribute('aria-label') || '') : el.tagName.toLowerCase() + ' ' + (el.textContent || '').trim();
      })()`);
    /** Presses Shift+Tab (or Tab) until the focused element matches, as a keyboard user would. */
    const tabTo = async (selector: string, back = true): Promise<void> => {
      const trail: string[] = [];
      for (let i = 0; i < 150; i++) {
        if (await frame.evaluate(`!!document.activeElement && document.activeElement.matches(${JSON.stringify(selector)})`)) return;
        trail.push((await focused()).slice(0, 40));
        await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
      }
      throw new Error(`the keyboard never reached ${selector}, through ${trail.join(' → ')}`);
    };
    const idle = async () => {
      await chat().locator('.turn.assistant').last().and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor({ timeout: 60_000 });
      await chat().locator('#send').waitFor({ state: 'visible' });
    };
    await chat().locator('#send').waitFor({ state: 'visible', timeout: 60_000 });
    // A conversation of its own (the scans' one stays in the history, to be opened by keyboard at the end).
    const scanned = await chat().locator('#thread > .turn').count();
    await runPaletteCommand(page, 'Model Gateway: New Chat');
    await chat().locator('#thread .empty').waitFor();
    // What the two announcement regions said, as a screen reader hears a live region change.
    await frame.evaluate(`(() => {
      window.said = [];
      for (const id of ['announce-polite', 'announce-assertive']) {
        const el = document.getElementById(id);
        new MutationObserver(() => { if (el.textContent) window.said.push(id.slice(9) + ': ' + el.textContent); }).observe(el, { childList: true, characterData: true, subtree: true });
      }
    })()`);
    const said = (): Promise<string[]> => frame.evaluate('window.said');
    // No live region holds the conversation: the tokens are never read one by one.
    assert.equal(
      await frame.evaluate(
        `Array.from(document.querySelectorAll('[aria-live], [role=log], [role=status], [role=alert]')).filter((el) => el.querySelector('.turn') || el.closest('.turn')).length`,
      ),
      0,
      'no live region around or inside the turns',
    );

    await chat().locator('#input').focus();
    emu.inject({ path: '/v1/chat', fault: { kind: 'delayEvents', ms: 30 } });
    await page.keyboard.type('A long answer please #words=400');
    await page.keyboard.press('Enter');
    await chat().locator('#stop').waitFor({ state: 'visible' });
    await until(
      'the first words',
      async () =>
        (
          await lastAnswer()
            .locator('.markdown')
            .first()
            .innerText()
            .catch(() => '')
        ).length > 40,
    );
    await page.keyboard.press('Escape');
    await lastAnswer().locator('.badge', { hasText: 'Stopped' }).waitFor();
    await idle();
    emu.faults.clear();
    assert.equal(await focused(), '#input', 'the keyboard is back in the input after Stop');

    await page.keyboard.type('Say hello in a few words');
    await page.keyboard.press('Enter');
    await idle();
    await until('the announcement', async () => (await said()).length >= 2);
    const answer = (await lastAnswer().locator('.markdown').first().innerText()).replace(/\s+/g, ' ').trim();
    assert.equal(await focused(), '#input', 'the keyboard is back in the input after the answer');
    const heard = await said();
    assert.equal(heard.length, 2, `one announcement per ended turn: ${JSON.stringify(heard)}`);
    assert.match(heard[0], /^polite: Stopped\. The partial answer is kept: /);
    assert.ok(heard[1].startsWith(`polite: Answer finished: ${answer.slice(0, 40)}`), `the finished answer is read: ${heard[1]}`);

    // Between turns: Alt+Up to the newest, PageUp / PageDown, Home / End, Escape back to the input.
    const turnIds = await Promise.all((await chat().locator('#thread > .turn').all()).map(async (t) => (await t.getAttribute('data-turn')) ?? ''));
    const n = turnIds.length;
    await page.keyboard.press('Alt+ArrowUp');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[n - 1]} Answer from gpt-4o-mini, ${n} of ${n}$`));
    await page.keyboard.press('PageUp');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[n - 2]} Your message, ${n - 1} of ${n}$`));
    await page.keyboard.press('PageUp');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[n - 3]} Answer from`));
    await page.keyboard.press('PageDown');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[n - 2]} `));
    await page.keyboard.press('Home');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[0]} Your message, 1 of ${n}$`));
    await page.keyboard.press('End');
    assert.match(await focused(), new RegExp(`^turn ${turnIds[n - 1]} `));
    await page.screenshot({ path: join(SHOTS, 'chat-keyboard-turn.png') });
    await page.keyboard.press('Escape');
    assert.equal(await focused(), '#input');

    // An edit: announced, reached with Shift+Tab, accepted with Enter.
    const original = readFileSync(join(workspace, 'src', 'math.ts'), 'utf8');
    await page.keyboard.type('Use replace_in_file on src/math.ts to replace "a + b" with "b + a"');
    await page.keyboard.press('Enter');
    await chat().locator('#approval-bar button', { hasText: 'Accept' }).waitFor({ timeout: 60_000 });
    await until('the approval announced', async () => (await said()).some((x) => x.includes('Waiting for your decision: edit src/math.ts')));
    assert.equal(await focused(), '#input', 'a waiting decision does not take the keyboard away');
    await tabTo('#approval-bar button[data-accept="true"]');
    await page.screenshot({ path: join(SHOTS, 'chat-keyboard-approval.png') });
    await page.keyboard.press('Enter');
    await idle();
    await until('the edit written', () => readFileSync(join(workspace, 'src', 'math.ts'), 'utf8') !== original);
    assert.match(readFileSync(join(workspace, 'src', 'math.ts'), 'utf8'), /b \+ a/);
    assert.equal(await focused(), '#input', 'back in the input once the turn ended');

    // Another, rejected with Space.
    await page.keyboard.type('Use create_file to make notes.md with the content "hello notes"');
    await page.keyboard.press('Enter');
    await chat().locator('#approval-bar button', { hasText: 'Reject' }).waitFor({ timeout: 60_000 });
    await tabTo('#approval-bar button[data-accept="false"]');
    await page.keyboard.press('Space');
    await idle();
    await lastAnswer()
      .locator('details.tool summary', { hasText: /create_file\s*notes\.md\s*rejected/ })
      .first()
      .waitFor({ timeout: 10_000 });
    assert.equal(existsSync(join(workspace, 'notes.md')), false);

    // An error: read at once (assertive), with its fixes, and only once.
    const before = (await said()).length;
    emu.inject({
      path: '/v1/chat',
      fault: {
        kind: 'status',
        status: 403,
        body: { error: { message: 'Insufficient balance: the user quota is used up.', type: 'permission_error', code: 'insufficient_user_quota' } },
      },
    });
    await page.keyboard.type('Will this work?');
    await page.keyboard.press('Enter');
    await idle();
    await until('the error announced', async () => (await said()).length > before);
    await page.waitForTimeout(500);
    const errors = (await said()).slice(before);
    assert.equal(errors.length, 1, `the error is read once: ${JSON.stringify(errors)}`);
    assert.match(errors[0], /^assertive: Error: .*top up the balance.* Fix: Top Up Balance/is);
    assert.equal(await focused(), '#input');

    // The history, by keyboard: Escape closes the list onto its button; Enter opens a conversation.
    await tabTo('#history');
    await page.keyboard.press('Enter');
    await chat().locator('#history-panel').waitFor({ state: 'visible' });
    assert.match(await focused(), /^button /, 'the list takes the keyboard');
    await page.keyboard.press('Escape');
    await chat().locator('#history-panel').waitFor({ state: 'hidden' });
    assert.equal(await focused(), '#history', 'Escape gives the keyboard back to the History button');
    await page.keyboard.press('Enter');
    await tabTo('#history-panel .history-row:not(.current) .history-open', false);
    await page.keyboard.press('Enter');
    await until("the scans' conversation opened", async () => (await chat().locator('#thread > .turn').count()) === scanned);
    assert.equal(await focused(), '#input', 'the opened conversation is ready for the next question');
  });

  it('axe finds nothing serious in the Usage view', async () => {
    await runPaletteCommand(page, 'Model Gateway: Show Usage and Spend');
    const view = await webviewFrame(page, 'main#app h1', 'Gateway usage');
    await view.locator('#chart svg').first().waitFor({ timeout: 30_000 });
    assertNoSerious('the Usage view', await axe(view));
  });

  for (const theme of ['Dark Modern', 'Dark High Contrast', 'Light High Contrast']) {
    it(`and in the ${theme} theme: the conversation (a stopped answer, edits, an error card) and the Usage view`, async () => {
      await runPaletteCommand(page, 'Preferences: Color Theme');
      const picker = page.locator('.quick-input-widget');
      await picker.locator('input').fill(theme);
      // The first row of a group also carries the group's name ("high contrast themes").
      await picker.locator('.monaco-list-row', { hasText: theme }).first().waitFor();
      await page.keyboard.press('Enter');
      await picker.waitFor({ state: 'hidden' });
      await until(
        `the ${theme} theme in the webview`,
        async () =>
          (await (
            await chatFrame()
          ).evaluate(
            `document.body.classList.contains('vscode-${theme.includes('High') ? (theme.startsWith('Dark') ? 'high-contrast' : 'high-contrast-light') : 'dark'}')`,
          )) === true,
      );
      // The Usage view is the active editor: its page follows the theme too.
      const view = await webviewFrame(page, 'main#app h1', 'Gateway usage');
      assertNoSerious(`the Usage view (${theme})`, await axe(view));
      await openModelGatewayContainer(page, chat().locator('#input'));
      assertNoSerious(`the chat (${theme})`, await axe(await chatFrame()));
      await page.screenshot({ path: join(SHOTS, `chat-theme-${theme.toLowerCase().replace(/ /g, '-')}.png`) });
    });
  }
});
