import { strict as assert } from 'node:assert';
import { credentialDecision, gatewayOrigin, isCleartextRemote, isLoopbackOrigin, withheldReason } from '../../src/shell/origins';
import { parseJsonc, userOnlySettingsIn } from '../../src/shell/settingsFiles';

describe('credentials and origins', () => {
  it('the origin of a gateway URL is its scheme, host and port; paths and /v1 do not matter', () => {
    assert.equal(gatewayOrigin('https://gw.example.com/v1'), 'https://gw.example.com');
    assert.equal(gatewayOrigin(' https://GW.example.com:443/api '), 'https://gw.example.com');
    assert.equal(gatewayOrigin('https://gw.example.com:8443'), 'https://gw.example.com:8443');
    assert.equal(gatewayOrigin('https://user:pass@gw.example.com'), 'https://gw.example.com');
    assert.equal(gatewayOrigin('gw.example.com'), undefined);
    assert.equal(gatewayOrigin('file:///etc/passwd'), undefined);
    // A look-alike host is another origin.
    assert.notEqual(gatewayOrigin('https://gw.example.com.evil.net'), gatewayOrigin('https://gw.example.com'));
  });

  it('loopback is this machine; plain http anywhere else is cleartext', () => {
    for (const o of ['http://127.0.0.1:8787', 'http://localhost:3000', 'http://[::1]:80', 'http://api.localhost', 'http://127.4.5.6'])
      assert.ok(isLoopbackOrigin(o), o);
    for (const o of ['http://10.0.0.2', 'http://127.0.0.1.nip.io', 'http://localhost.evil.net', 'http://gw.example.com']) assert.ok(!isLoopbackOrigin(o), o);
    assert.ok(isCleartextRemote('http://gw.example.com'));
    assert.ok(!isCleartextRemote('https://gw.example.com'));
    assert.ok(!isCleartextRemote('http://127.0.0.1:8787'));
  });

  it('a credential goes only to its origin; an unbound one binds to https or loopback, never to plain remote http', () => {
    const table: [string | undefined, string, string][] = [
      ['https://a.example', 'https://a.example', 'send'],
      ['https://a.example', 'https://b.example', 'withhold'],
      ['https://a.example', 'http://a.example', 'withhold'],
      ['https://a.example', 'https://a.example:444', 'withhold'],
      [undefined, 'https://a.example', 'bind'],
      [undefined, 'http://127.0.0.1:8787', 'bind'],
      [undefined, 'http://a.example', 'withhold'],
      ['http://a.example', 'http://a.example', 'send'],
    ];
    for (const [bound, origin, expected] of table) assert.equal(credentialDecision(bound, origin), expected, `${bound} -> ${origin}`);
  });

  it('the reason names both origins and the command that moves the credential', () => {
    const r = withheldReason('apiKey', 'https://a.example', 'https://b.example');
    assert.match(r, /API key was entered for https:\/\/a\.example, and the gateway URL now names https:\/\/b\.example/);
    assert.match(r, /Use My Credentials with This Gateway/);
    assert.match(withheldReason('accessToken', undefined, 'http://b.example'), /plain http .* system access token would cross the network unencrypted/);
  });
});

describe('a workspace settings file that names a gateway', () => {
  it('finds the user-only settings in the flat and nested forms, with comments and trailing commas', () => {
    const text = `{
      // team gateway
      "modelGateway.baseUrl": "https://evil.example/v1",
      "modelGateway": { "userId": "7", "extraHeaders": { "X": "1" }, },
      "editor.tabSize": 2,
    }`;
    assert.deepEqual(userOnlySettingsIn(text), {
      'modelGateway.baseUrl': 'https://evil.example/v1',
      'modelGateway.extraHeaders': { X: '1' },
      'modelGateway.userId': '7',
    });
  });

  it("reads a .code-workspace file's settings block", () => {
    assert.deepEqual(userOnlySettingsIn('{ "folders": [{ "path": "." }], "settings": { "modelGateway.baseUrl": "http://x" } }'), {
      'modelGateway.baseUrl': 'http://x',
    });
  });

  it('finds nothing in files without them, or that are not JSON', () => {
    assert.deepEqual(userOnlySettingsIn('{ "modelGateway.prices": {} }'), {});
    assert.deepEqual(userOnlySettingsIn('not json'), {});
    assert.deepEqual(userOnlySettingsIn('[]'), {});
    assert.deepEqual(userOnlySettingsIn(''), {});
  });
});

describe('settings files: JSON with comments', () => {
  it('drops comments and trailing commas, never inside strings', () => {
    assert.deepEqual(parseJsonc('{ /* a */ "a": "x // not a comment", // b\n "b": [1, 2, ], "c": "y,}", "d": "q\\"/*", }'), {
      a: 'x // not a comment',
      b: [1, 2],
      c: 'y,}',
      d: 'q"/*',
    });
    assert.deepEqual(parseJsonc('{"a": {"b": 1,\n\n   }\n,}'), { a: { b: 1 } });
    assert.equal(parseJsonc('{ "a": '), undefined);
    assert.equal(parseJsonc('/* unterminated'), undefined);
  });
});
