// @vscode-specific: the extension host's proxy support (VS Code's own proxy agent) differs between the two.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { issueCert, makeTestCa, startProxy, startTlsFront, type TestCa, type TestProxy, type TlsFront } from '../emulator/tls-front';
import { config } from './config';
import { api, connectToEmulator, startEverythingOverHttp, until } from './helpers';

/**
 * The networks users are behind, in the real extension host: a gateway behind TLS signed by a CA
 * made here (a company's inspecting root), reached directly or through a real proxy (npm `proxy`,
 * CONNECT, Basic auth), configured the way a user does: VS Code's `http.*` user settings, the
 * proxy environment variables, `modelGateway.tls.caFiles`, `NODE_EXTRA_CA_CERTS`.
 */
describe('proxies and certificates, from VS Code settings', function () {
  this.timeout(90_000);
  const http = () => vscode.workspace.getConfiguration('http');
  const mg = () => vscode.workspace.getConfiguration('modelGateway');
  const user = vscode.ConfigurationTarget.Global;
  let ca: TestCa;
  let front: TlsFront;
  let open: TestProxy;
  let guarded: TestProxy;
  let dir: string;
  let caFile: string;
  const ENV_KEYS = ['HTTPS_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS'] as const;
  const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

  const resetNetworkSettings = async () => {
    for (const k of ['proxy', 'proxyAuthorization', 'noProxy', 'proxyStrictSSL']) await http().update(k, undefined, user);
    await mg().update('tls.caFiles', undefined, user);
  };
  const listModels = async () => (await api()).testing.services.client().models.list();
  const failure = async (): Promise<Error> => {
    try {
      await listModels();
    } catch (err) {
      return err as Error;
    }
    assert.fail('the call succeeded');
  };

  before(async () => {
    ca = await makeTestCa();
    front = await startTlsFront(Number(new URL(config.emulatorUrl).port), await issueCert(ca));
    open = await startProxy();
    guarded = await startProxy({ user: 'bob', password: 'proxy-pass-42' });
    dir = mkdtempSync(join(tmpdir(), 'mg-network-'));
    caFile = join(dir, 'company-root.pem');
    writeFileSync(caFile, ca.cert);
    const { testing } = await api();
    await resetNetworkSettings();
    await mg().update('baseUrl', front.url, user);
    await testing.services.credentials.setApiKey(config.demoKey, new URL(front.url).origin);
    // The access token too, when an earlier suite set one (the status bar reads the balance with it).
    if (testing.services.credentials.getAccessToken())
      await testing.services.credentials.setAccessToken(config.demoAccessToken, new URL(front.url).origin, { keepUserId: true });
  });
  after(async () => {
    for (const k of ENV_KEYS) {
      if (savedEnv[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
    await resetNetworkSettings();
    await connectToEmulator();
    const { testing } = await api();
    if (testing.services.credentials.getAccessToken())
      await testing.services.credentials.setAccessToken(config.demoAccessToken, new URL(config.emulatorUrl).origin, { keepUserId: true });
    await Promise.all([front?.close(), open?.close(), guarded?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    open.log.length = 0;
    guarded.log.length = 0;
  });

  it('an untrusted issuer: the status bar names the CA and the setting; modelGateway.tls.caFiles fixes it without a reload', async () => {
    const { testing } = await api();
    const state = await testing.status.refresh();
    assert.equal(state.kind, 'error');
    assert.match(
      state.kind === 'error' ? state.message : '',
      /is issued by "Model Gateway Test Root CA", which this machine does not trust.*modelGateway\.tls\.caFiles/,
    );
    assert.equal((await failure()).name, 'TlsError');
    await mg().update('tls.caFiles', [caFile], user);
    assert.ok((await listModels()).length > 0);
    assert.equal((await testing.status.refresh()).kind, 'connected');
  });

  it("a workspace's settings can't add a CA, set a proxy or turn certificate checks off", async function () {
    if (!vscode.workspace.workspaceFolders?.length) this.skip(); // reason: needs a workspace to write workspace settings into
    await mg().update('tls.caFiles', undefined, user);
    for (const [section, key, value] of [
      ['http', 'proxy', open.url],
      ['http', 'noProxy', ['<-loopback>']],
      ['http', 'proxyStrictSSL', false],
      ['modelGateway', 'tls.caFiles', [caFile]],
    ] as const) {
      // VS Code itself refuses some of these at workspace level; what it accepts, we ignore.
      await vscode.workspace
        .getConfiguration(section)
        .update(key, value, vscode.ConfigurationTarget.Workspace)
        .then(
          () => undefined,
          () => undefined,
        );
    }
    try {
      assert.equal((await failure()).name, 'TlsError', 'still untrusted: the workspace CA and strictSSL:false were ignored');
      assert.deepEqual(open.log, [], 'the workspace proxy was not used');
    } finally {
      for (const [section, key] of [
        ['http', 'proxy'],
        ['http', 'noProxy'],
        ['http', 'proxyStrictSSL'],
        ['modelGateway', 'tls.caFiles'],
      ] as const) {
        await vscode.workspace
          .getConfiguration(section)
          .update(key, undefined, vscode.ConfigurationTarget.Workspace)
          .then(
            () => undefined,
            () => undefined,
          );
      }
      await mg().update('tls.caFiles', [caFile], user);
    }
  });

  it('http.proxy in the user settings: the chat goes through a CONNECT tunnel; the proxy log shows it', async () => {
    const { testing } = await api();
    await http().update('proxy', open.url, user);
    await http().update('noProxy', ['<-loopback>'], user);
    const answer = await testing.services
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello via the company proxy' }] });
    assert.ok(answer.choices[0]?.message.content);
    assert.ok(
      open.log.some((l) => l.method === 'CONNECT' && l.target === `127.0.0.1:${front.port}`),
      JSON.stringify(open.log),
    );
    await testing.status.refresh();
    assert.match(testing.status.tooltip, /Through the proxy at http:\/\/127\.0\.0\.1:\d+ \(from http\.proxy\)/);
  });

  it('http.noProxy bypasses it', async () => {
    await http().update('proxy', open.url, user);
    await http().update('noProxy', ['<-loopback>', '127.0.0.1'], user);
    assert.ok((await listModels()).length > 0);
    assert.deepEqual(open.log, []);
  });

  it('a proxy asking for credentials: the typed error says to set http.proxyAuthorization; setting it works', async () => {
    const { testing } = await api();
    await http().update('proxy', guarded.url, user);
    await http().update('noProxy', ['<-loopback>'], user);
    const err = await failure();
    assert.equal(err.name, 'ProxyError');
    assert.match(err.message, /asks for credentials \(HTTP 407\): set http\.proxyAuthorization/);
    const state = await testing.status.refresh();
    assert.match(state.kind === 'error' ? state.message : '', /HTTP 407/);
    await http().update('proxyAuthorization', `Basic ${Buffer.from('bob:proxy-pass-42').toString('base64')}`, user);
    assert.ok((await listModels()).length > 0);
    assert.ok(
      guarded.log.some((l) => l.method === 'CONNECT' && l.status === undefined),
      'the tunnel was let through with the credentials',
    );
    assert.ok(!testing.services.notices.some((n) => /proxy-pass-42|Ym9iOnByb3h5/.test(n.message)), 'no proxy credential in any notice');
  });

  it('HTTPS_PROXY / NO_PROXY from the environment when http.proxy is unset', async () => {
    await resetNetworkSettings();
    process.env.HTTPS_PROXY = open.url;
    process.env.NO_PROXY = '<-loopback>';
    // The environment is read when the settings change (a new window reads it at start).
    await mg().update('tls.caFiles', [caFile], user);
    assert.ok((await listModels()).length > 0);
    assert.ok(
      open.log.some((l) => l.method === 'CONNECT'),
      'went through the environment proxy',
    );
    const { testing } = await api();
    assert.ok(testing.services.network().notes.some((n) => /from HTTPS_PROXY/.test(n)));
    delete process.env.HTTPS_PROXY;
    delete process.env.NO_PROXY;
  });

  it('NODE_EXTRA_CA_CERTS is trusted beside the OS store', async () => {
    await resetNetworkSettings();
    assert.equal((await failure()).name, 'TlsError');
    process.env.NODE_EXTRA_CA_CERTS = caFile;
    await http().update('systemCertificates', true, user);
    try {
      assert.ok((await listModels()).length > 0);
    } finally {
      delete process.env.NODE_EXTRA_CA_CERTS;
      await http().update('systemCertificates', undefined, user);
    }
  });

  it('an MCP server over HTTPS signed by the company CA goes through the proxy, as the gateway does, and connects again when the settings change', async () => {
    const { testing } = await api();
    const server = await startEverythingOverHttp();
    const mcpFront = await startTlsFront(server.port, await issueCert(ca));
    try {
      await resetNetworkSettings();
      await http().update('proxy', open.url, user);
      await http().update('noProxy', ['<-loopback>'], user);
      await mg().update('mcp.servers', { secure: { type: 'http', url: `${mcpFront.url}/mcp` } }, user);
      await until('refused without the CA', () => testing.mcp.get('secure')?.state.kind === 'failed', 30_000);
      const failed = testing.mcp.get('secure')!.state;
      assert.match(failed.kind === 'failed' ? failed.message : '', /certificate/i);
      await mg().update('tls.caFiles', [caFile], user);
      await until('running with the CA', () => testing.mcp.get('secure')?.state.kind === 'running', 30_000);
      assert.ok(
        open.log.some((l) => l.method === 'CONNECT' && l.target === `127.0.0.1:${mcpFront.port}`),
        `through the proxy: ${JSON.stringify(open.log)}`,
      );
      const echoed = await testing.mcp.get('secure')!.call('echo', { message: 'through the tunnel' });
      assert.match(echoed.content.map((c) => c.text ?? '').join(''), /Echo: through the tunnel/);
    } finally {
      await mg().update('mcp.servers', undefined, user);
      await mcpFront.close();
      server.stop();
    }
  });

  it('http.proxyStrictSSL off connects without the CA and the status bar warns', async () => {
    const { testing } = await api();
    await resetNetworkSettings();
    await http().update('proxyStrictSSL', false, user);
    assert.ok((await listModels()).length > 0);
    await testing.status.refresh();
    assert.match(testing.status.tooltip, /Certificate checks are off \(http\.proxyStrictSSL is false\)/);
    await http().update('proxyStrictSSL', undefined, user);
  });
});
