import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { rootCertificates } from 'node:tls';
import { promisify } from 'node:util';
import { GatewayClient, ProxyError, TlsError, bypassesProxy, proxyFor, proxyFromEnv, type NetworkOptions } from '../../src/gateway';
import { issueCert, makeTestCa, startProxy, startTlsFront, type TestCa, type TestProxy, type TlsFront } from '../emulator/tls-front';
import { DEMO_KEY, useEmulator } from './helpers';

const ROOT = resolve(__dirname, '..', '..');

describe('network: which requests go through a proxy', () => {
  it('reads HTTPS_PROXY / HTTP_PROXY / NO_PROXY, lower case first', () => {
    const p = proxyFromEnv({
      HTTPS_PROXY: 'http://upper:1',
      https_proxy: 'http://lower:2',
      HTTP_PROXY: 'http://plain:3',
      NO_PROXY: 'a.com, .b.com  c.com:8443',
    });
    assert.equal(p?.https, 'http://lower:2');
    assert.equal(p?.http, 'http://plain:3');
    assert.equal(p?.source, 'https_proxy');
    assert.deepEqual(p?.noProxy, ['a.com', '.b.com', 'c.com:8443']);
    assert.equal(proxyFromEnv({ PATH: '/bin' }), undefined);
    // Only HTTP_PROXY: https targets go direct (curl's rule), http targets through it.
    const httpOnly = proxyFromEnv({ HTTP_PROXY: 'proxy:3128' });
    assert.equal(httpOnly?.https, 'proxy:3128', 'an http proxy is used for https when no https one is set (undici and most tools)');
  });

  it('NO_PROXY entries: exact host, subdomains, leading dot, port, star; loopback direct unless <-loopback>', () => {
    const u = (s: string) => new URL(s);
    assert.equal(bypassesProxy(u('https://gw.example.com'), ['example.com']), true);
    assert.equal(bypassesProxy(u('https://example.com'), ['example.com']), true);
    assert.equal(bypassesProxy(u('https://notexample.com'), ['example.com']), false);
    assert.equal(bypassesProxy(u('https://example.com'), ['.example.com']), false, 'a leading dot means subdomains only');
    assert.equal(bypassesProxy(u('https://a.example.com'), ['*.example.com']), true);
    assert.equal(bypassesProxy(u('https://gw.corp:8443'), ['gw.corp:8443']), true);
    assert.equal(bypassesProxy(u('https://gw.corp'), ['gw.corp:8443']), false, 'another port is proxied');
    assert.equal(bypassesProxy(u('https://anything'), ['*']), true);
    assert.equal(bypassesProxy(u('http://127.0.0.1:3000'), []), true);
    assert.equal(bypassesProxy(u('http://localhost:3000'), []), true);
    assert.equal(bypassesProxy(u('http://[::1]:3000'), []), true);
    assert.equal(bypassesProxy(u('http://127.0.0.1:3000'), ['<-loopback>']), false);
    const proxy = { https: 'http://p:1', http: 'http://p:2', source: 'http.proxy', noProxy: ['<-loopback>'] };
    assert.equal(proxyFor('https://127.0.0.1:1/v1', proxy), 'http://p:1');
    assert.equal(proxyFor('http://127.0.0.1:1/v1', proxy), 'http://p:2');
  });
});

describe('network: proxies and certificates against real servers', function () {
  this.timeout(60_000);
  const ctx = useEmulator();
  let ca: TestCa;
  let front: TlsFront;
  let expiredFront: TlsFront;
  let otherHostFront: TlsFront;
  let open: TestProxy;
  let guarded: TestProxy;
  const clients: GatewayClient[] = [];

  before(async () => {
    ca = await makeTestCa();
    const port = Number(new URL(ctx.emu.url).port);
    front = await startTlsFront(port, await issueCert(ca));
    expiredFront = await startTlsFront(port, await issueCert(ca, { expired: true }));
    otherHostFront = await startTlsFront(port, await issueCert(ca, { dns: ['gateway.other.example'], ips: [] }));
    open = await startProxy();
    guarded = await startProxy({ user: 'alice', password: 's3cret-proxy' });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all([front, expiredFront, otherHostFront, open, guarded].map((s) => s?.close()));
  });

  const client = (baseUrl: string, network?: NetworkOptions) => {
    const c = new GatewayClient({ baseUrl, apiKey: DEMO_KEY, maxRetries: 1, retryBaseMs: 1, network });
    clients.push(c);
    return c;
  };
  const withCa = (): string[] => [...rootCertificates, ca.cert];
  const failure = async (p: Promise<unknown>): Promise<Error> => {
    try {
      await p;
    } catch (err) {
      return err as Error;
    }
    assert.fail('the call succeeded');
  };

  it('an issuer this machine does not trust: TlsError naming the issuer and the setting that fixes it', async () => {
    const err = await failure(client(front.url).models.list());
    assert.ok(err instanceof TlsError, `${err.name}: ${err.message}`);
    assert.equal(err.reason, 'untrusted');
    assert.match(err.message, /certificate of 127\.0\.0\.1:\d+ is issued by "Model Gateway Test Root CA"/);
    assert.match(err.message, /modelGateway\.tls\.caFiles/);
    assert.doesNotMatch(err.message, /fetch failed/);
  });

  it('trusts the CA once it is given, and still trusts the public roots', async () => {
    const list = await client(front.url, { ca: withCa() }).models.list();
    assert.ok(list.length > 0);
  });

  it('an expired certificate and another host name are told apart', async () => {
    const expired = await failure(client(expiredFront.url, { ca: withCa() }).models.list());
    assert.ok(expired instanceof TlsError && expired.reason === 'expired', expired.message);
    assert.match(expired.message, /expired \(valid to .+\): the gateway's operator must renew it/);
    const other = await failure(client(otherHostFront.url, { ca: withCa() }).models.list());
    assert.ok(other instanceof TlsError && other.reason === 'hostname', other.message);
    assert.match(other.message, /is for gateway\.other\.example, not 127\.0\.0\.1/);
  });

  it('rejectUnauthorized:false (http.proxyStrictSSL off) connects without the CA', async () => {
    const list = await client(front.url, { rejectUnauthorized: false }).models.list();
    assert.ok(list.length > 0);
  });

  it('CONNECT through a proxy to the TLS gateway; the proxy sees only the tunnel', async () => {
    open.log.length = 0;
    const c = client(front.url, { ca: withCa(), proxy: { https: open.url, http: open.url, source: 'http.proxy', noProxy: ['<-loopback>'] } });
    const done = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello through the proxy' }] });
    assert.ok(done.choices[0]?.message.content);
    assert.deepEqual(
      open.log.map((l) => `${l.method} ${l.target}`),
      [`CONNECT 127.0.0.1:${front.port}`],
    );
  });

  it('loopback goes direct by default, and http.noProxy bypasses the proxy', async () => {
    open.log.length = 0;
    await client(front.url, { ca: withCa(), proxy: { https: open.url, source: 'http.proxy', noProxy: [] } }).models.list();
    await client(front.url, { ca: withCa(), proxy: { https: open.url, source: 'http.proxy', noProxy: ['<-loopback>', '127.0.0.1'] } }).models.list();
    assert.deepEqual(open.log, []);
  });

  it('a proxy asking for credentials: ProxyError 407 with the fix, not retried; credentials from the URL or the setting work', async () => {
    guarded.log.length = 0;
    const proxy = { https: guarded.url, http: guarded.url, source: 'http.proxy', noProxy: ['<-loopback>'] };
    const err = await failure(client(front.url, { ca: withCa(), proxy }).models.list());
    assert.ok(err instanceof ProxyError, `${err.name}: ${err.message}`);
    assert.equal(err.proxyStatus, 407);
    assert.match(err.message, /The proxy at http:\/\/127\.0\.0\.1:\d+ \(from http\.proxy\) asks for credentials \(HTTP 407\): set http\.proxyAuthorization/);
    assert.equal(guarded.log.length, 1, 'a 407 is not retried');

    const inUrl = guarded.url.replace('http://', 'http://alice:s3cret-proxy@');
    await client(front.url, { ca: withCa(), proxy: { ...proxy, https: inUrl } }).models.list();
    const token = `Basic ${Buffer.from('alice:s3cret-proxy').toString('base64')}`;
    await client(front.url, { ca: withCa(), proxy: { ...proxy, authorization: token } }).models.list();
    const wrong = await failure(client(front.url, { ca: withCa(), proxy: { ...proxy, authorization: 'Basic d3Jvbmc6d3Jvbmc=' } }).models.list());
    assert.ok(wrong instanceof ProxyError);
    assert.match(wrong.message, /refused the credentials given/);
    assert.doesNotMatch(`${wrong.message} ${err.message}`, /s3cret|d3Jvbmc/, 'no credential in a message');
  });

  it('a proxy that cannot reach the gateway and a proxy host that does not resolve are named', async () => {
    const closed = await startTlsFront(1, await issueCert(ca));
    const url = closed.url;
    await closed.close();
    const proxy = { https: open.url, source: 'HTTPS_PROXY', noProxy: ['<-loopback>'] };
    const unreachable = await failure(client(url, { ca: withCa(), proxy }).models.list());
    assert.ok(unreachable instanceof ProxyError, unreachable.message);
    assert.match(unreachable.message, /\(from HTTPS_PROXY\) could not open a connection to 127\.0\.0\.1:\d+ \(HTTP 500/);
    const nowhere = await failure(client(front.url, { ca: withCa(), proxy: { ...proxy, https: 'http://no-such-proxy.invalid:3128' } }).models.list());
    assert.ok(nowhere instanceof ProxyError, nowhere.message);
    assert.match(nowhere.message, /cannot be reached: its host name no-such-proxy\.invalid does not resolve/);
  });

  it('a TLS failure through the proxy names the issuer the proxy path presents', async () => {
    const err = await failure(client(front.url, { proxy: { https: open.url, source: 'http.proxy', noProxy: ['<-loopback>'] } }).models.list());
    assert.ok(err instanceof TlsError, err.message);
    assert.match(err.message, /\(through the proxy at http:\/\/127\.0\.0\.1:\d+\) is issued by "Model Gateway Test Root CA"/);
  });

  it("NODE_EXTRA_CA_CERTS set when Node starts is trusted (Node's own reading, no option needed)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-ca-'));
    try {
      const caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, ca.cert);
      const script = `const { GatewayClient } = require(${JSON.stringify(join(ROOT, 'src', 'gateway'))});
        new GatewayClient({ baseUrl: process.argv[1], apiKey: ${JSON.stringify(DEMO_KEY)}, maxRetries: 0 }).models.list()
          .then((l) => { console.log('ok', l.length); process.exit(0); }, (e) => { console.log(e.name, e.message); process.exit(0); });`;
      const run = (env: NodeJS.ProcessEnv) =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script, front.url], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 });
      const trusted = await run({ NODE_EXTRA_CA_CERTS: caFile });
      assert.match(trusted.stdout, /^ok \d+/);
      const untrusted = await run({ NODE_EXTRA_CA_CERTS: '' });
      assert.match(untrusted.stdout, /^TlsError .*Model Gateway Test Root CA/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
