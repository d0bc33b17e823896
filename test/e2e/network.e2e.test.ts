import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { until } from '../wait';
import { issueCert, makeTestCa, startTlsFront, type TestCa, type TlsFront } from '../emulator/tls-front';
import { EXTENSION_ID, ROOT, openModelGatewayContainer } from '../vscode/harness';
import { type Workbench, demoCredentials, startWorkbench } from './workbench';

const SHOTS = join(ROOT, 'test-results', 'screenshots');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * A user behind a TLS-inspecting firewall, as they meet it: the gateway's certificate is signed by
 * the company's root (a CA made here), which the machine does not trust yet. The chat says which
 * CA and where to add it; once its file is in the user settings, Retry answers without a reload.
 */
describe('behind a TLS-inspecting firewall, end to end (code-server, headless Chromium)', function () {
  this.timeout(180_000);
  let wb: Workbench | undefined;
  let page: Page;
  let front: TlsFront | undefined;
  let ca: TestCa;
  let dir: string;
  const chat = (): FrameLocator => page.frameLocator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).frameLocator('iframe#active-frame');
  const lastAnswer = () => chat().locator('.turn.assistant').last();

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ca = await makeTestCa('Corp Inspection Root CA');
    const port = await freePort();
    front = await startTlsFront(port, await issueCert(ca));
    dir = mkdtempSync(join(tmpdir(), 'mg-e2e-ca-'));
    writeFileSync(join(dir, 'corp-root.pem'), ca.cert);
    const url = front.url;
    wb = await startWorkbench({
      emulator: { port },
      codeServer: (e) => ({ env: { ...demoCredentials(e), MODEL_GATEWAY_BASE_URL: url }, settings: { 'modelGateway.defaultModels.chat': 'gpt-4o-mini' } }),
    });
    page = wb.page;
    await openModelGatewayContainer(page, chat().locator('#input'));
  });

  after(async () => {
    await wb?.close();
    await front?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an untrusted issuer: the error card names the CA and opens the settings that fix it', async () => {
    const input = chat().locator('#input');
    await input.fill('Hello through the firewall');
    await input.press('Enter');
    const card = lastAnswer().locator('.error-card');
    await card.waitFor({ timeout: 30_000 });
    const text = await card.innerText();
    assert.match(text, /The certificate of 127\.0\.0\.1:\d+ is issued by "Corp Inspection Root CA", which this machine does not trust/);
    assert.match(text, /modelGateway\.tls\.caFiles/);
    assert.doesNotMatch(text, /fetch failed/);
    await card.locator('button', { hasText: 'Open Proxy and Certificate Settings' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'network-untrusted.png') });
    await card.locator('button', { hasText: 'Open Proxy and Certificate Settings' }).click();
    // The user's settings, filtered to the proxy and certificate settings.
    await page.locator('.settings-editor .setting-item-contents', { hasText: 'Ca Files' }).first().waitFor({ timeout: 30_000 });
    await page.locator('.settings-editor .setting-item-contents', { hasText: 'Proxy' }).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'network-settings.png') });
  });

  it('with the CA file in modelGateway.tls.caFiles, Retry answers at once (no reload)', async () => {
    const file = join(wb!.server.userDataDir, 'User', 'settings.json');
    const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...settings, 'modelGateway.tls.caFiles': [join(dir, 'corp-root.pem')] }, null, 2));
    // VS Code reads the file when it changes; Retry until it has (a few seconds at most).
    await until(
      'an answer through the trusted certificate',
      async () => {
        const retry = lastAnswer().locator('.error-card button', { hasText: 'Retry' });
        if (await retry.isVisible().catch(() => false)) await retry.click();
        await lastAnswer().and(chat().locator('.turn.assistant:not([data-status="streaming"])')).waitFor({ timeout: 30_000 });
        return (await lastAnswer().getAttribute('data-status')) === 'done';
      },
      30_000,
    );
    assert.match((await lastAnswer().locator('.markdown').allInnerTexts()).join('\n'), /gpt-4o-mini/);
  });
});
