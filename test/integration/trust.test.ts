// @profile-dependent: which credentials a request carries (New-Api-User on new-api) when the URL changes.
import { strict as assert } from 'node:assert';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { config } from './config';
import { api, connectToEmulator, runAnswering } from './helpers';

/** Answers like a gateway (model list, account self) and records the headers of every request. */
async function recorder(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }], success: true }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const carrying = (seen: IncomingHttpHeaders[]) => seen.filter((h) => ['authorization', 'x-api-key', 'api-key', 'new-api-user'].some((k) => k in h));

/**
 * A stored key and token belong to the origin they were entered for: a user setting changed by a
 * settings sync, another extension or a mistake does not move them.
 */
describe('credentials are bound to the gateway they were entered for', function () {
  this.timeout(60_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const emulatorOrigin = new URL(config.emulatorUrl).origin;
  let other: Awaited<ReturnType<typeof recorder>>;

  before(async () => {
    other = await recorder();
    await connectToEmulator();
    assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
  });
  after(async () => {
    await other.close();
    await connectToEmulator();
    await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId);
  });

  it('records the origin each credential was entered for', async () => {
    const { testing } = await api();
    assert.equal(testing.services.credentials.boundOrigin('apiKey'), emulatorOrigin);
    assert.equal(testing.services.credentials.boundOrigin('accessToken'), emulatorOrigin);
  });

  it("a URL changed behind the person's back gets no key, no token, no New-Api-User, and says why", async () => {
    const { testing } = await api();
    await settings().update('baseUrl', other.url, vscode.ConfigurationTarget.Global);
    const state = await testing.status.refresh();
    assert.equal(state.kind, 'error');
    assert.match(state.kind === 'error' ? state.message : '', /was entered for http:\/\/127\.0\.0\.1:\d+, and the gateway URL now names/);
    await assert.rejects(
      testing.services.client().account.self(),
      (e: Error & { type?: string }) => e.name === 'MissingCredentialError' && e.type === 'credential_withheld',
    );
    await testing.accountTree.getChildren();
    assert.deepEqual(carrying(other.seen), [], 'no request to the new origin carried a credential');
    assert.deepEqual(testing.services.withheldCredentials(), ['apiKey', 'accessToken']);
    // The notification offers the way out.
    assert.ok(
      testing.services.notices.some((n) => /entered for/.test(n.message)),
      'the person was told',
    );
  });

  it('declining the question keeps them withheld; confirming sends them to the new origin', async () => {
    const { testing } = await api();
    assert.equal(await runAnswering('modelGateway.useCredentialsHere', false), false);
    await assert.rejects(testing.services.client().models.list(), /entered for/);
    assert.deepEqual(carrying(other.seen), []);
    assert.equal(await runAnswering('modelGateway.useCredentialsHere', true), true);
    const failure = await testing.services
      .client()
      .models.list()
      .then(
        () => undefined,
        (e: Error) => `${e.name}: ${e.message}`,
      );
    assert.ok(
      carrying(other.seen).length >= 1,
      `the person said the credentials belong there (the call ${failure ?? 'succeeded'}; ${other.seen.length} requests seen)`,
    );
    assert.equal(testing.services.credentials.boundOrigin('apiKey'), new URL(other.url).origin);
  });

  it('Set Gateway URL back to the first gateway asks whether the credentials go with it', async () => {
    const { testing } = await api();
    // The URL, then the question about the credentials entered for the other origin.
    await runAnswering('modelGateway.setBaseUrl', config.emulatorUrl, true);
    assert.equal(testing.services.credentials.boundOrigin('apiKey'), emulatorOrigin);
    assert.equal(testing.services.credentials.boundOrigin('accessToken'), emulatorOrigin);
    assert.equal((await testing.status.refresh()).kind, 'connected');
  });

  it("a command's caller cannot answer the question (no argument is taken)", async () => {
    const { testing } = await api();
    await settings().update('baseUrl', other.url, vscode.ConfigurationTarget.Global);
    const before = carrying(other.seen).length;
    // Another extension runs the command with "yes" as argument; the person dismisses the dialog.
    testing.services.prompts.answerNext(false);
    await vscode.commands.executeCommand('modelGateway.useCredentialsHere', true, { confirmed: true });
    await assert.rejects(testing.services.client().models.list(), /entered for/);
    assert.equal(carrying(other.seen).length, before);
  });

  it('plain http to another machine is confirmed before a URL is saved', async () => {
    const before = settings().inspect('baseUrl')?.globalValue;
    assert.equal(await runAnswering('modelGateway.setBaseUrl', 'http://gateway.example.net', false), undefined);
    assert.equal(settings().inspect('baseUrl')?.globalValue, before, 'declined: the URL is unchanged');
  });
});
