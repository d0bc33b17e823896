import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { api, until } from './helpers';

/**
 * A remote MCP server behind OAuth 2.1 (the SDK's own authorization server and bearer-auth
 * middleware, `test/fixtures/oauth-mcp-server.mjs`): discovery, dynamic client registration,
 * PKCE and the browser step, driven by the test acting as the browser.
 */
describe('MCP servers behind OAuth', function () {
  this.timeout(90_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  let child: ChildProcess | undefined;
  let base = '';
  const browsed: string[] = [];
  type Seen = { registrations: number; tokens: number; calls: string[] };
  const seen = async () => (await (await fetch(`${base}/__seen`)).json()) as Seen;
  let open: ((url: string) => Thenable<boolean> | Promise<boolean>) | undefined;

  before(async () => {
    const fixture = join(resolve(__dirname, '..', '..'), 'test', 'fixtures', 'oauth-mcp-server.mjs');
    child = spawn(process.execPath, [fixture, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    child.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    await until('the OAuth MCP server listens', () => /listening on port (\d+)/.test(said), 30_000);
    base = `http://127.0.0.1:${/listening on port (\d+)/.exec(said)![1]}`;
    const { testing } = await api();
    open = testing.mcp.openBrowser;
    // The browser: opens the authorization page, which (its one test user approving) redirects to the callback.
    testing.mcp.openBrowser = async (url) => {
      browsed.push(url);
      return (await fetch(url)).ok;
    };
  });

  after(async () => {
    const { testing } = await api();
    await testing.mcp.signOut('secured');
    if (open) testing.mcp.openBrowser = open;
    await settings().update('mcp.servers', undefined, vscode.ConfigurationTarget.Global);
    child?.kill();
  });

  it('waits for the person to sign in (no browser opens by itself); Sign In registers, opens the page with PKCE, and its tool is called', async () => {
    const { testing } = await api();
    await settings().update('mcp.servers', { secured: { type: 'http', url: `${base}/mcp` } }, vscode.ConfigurationTarget.Global);
    await until(
      'the server waits for a sign-in',
      () => {
        const state = testing.mcp.get('secured')?.state;
        if (state?.kind === 'failed') throw new Error(`it failed: ${state.message}`);
        return state?.kind === 'needs-sign-in';
      },
      30_000,
    );
    assert.deepEqual(browsed, [], 'nothing opened without the person');
    const signedIn = await testing.mcp.signIn('secured');
    const st = testing.mcp.get('secured')!.state;
    assert.equal(signedIn, true, `signed in (${st.kind === 'failed' ? st.message : st.kind})`);
    assert.equal(browsed.length, 1);
    const page = new URL(browsed[0]);
    assert.equal(`${page.origin}${page.pathname}`, `${base}/authorize`);
    assert.equal(page.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(page.searchParams.get('code_challenge') && page.searchParams.get('state'));
    // A loopback port of this machine as the browser reaches it (code-server forwards it under /proxy/<port>/).
    assert.match(page.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/(proxy\/\d+\/)?callback$/);
    assert.equal(page.searchParams.get('resource'), `${base}/mcp`);
    const r = await testing.mcp.get('secured')!.call('whoami', {});
    assert.match(r.content.map((c) => c.text ?? '').join(''), /signed in as the demo user/);
    const s = await seen();
    assert.equal(s.registrations, 1, 'registered once (dynamic client registration)');
    assert.equal(s.tokens, 1);
    assert.equal(testing.mcp.isSignedIn('secured'), true);
  });

  it('the sign-in survives a reload: read back from secret storage, no browser, no new registration', async () => {
    const { testing } = await api();
    const before = await seen();
    testing.mcp.forgetLoadedSignIns();
    await testing.mcp.get('secured')!.restart();
    assert.equal(testing.mcp.get('secured')!.state.kind, 'running');
    assert.equal(browsed.length, 1);
    const after = await seen();
    assert.deepEqual([after.registrations, after.tokens], [before.registrations, before.tokens]);
    assert.match((await testing.mcp.get('secured')!.call('whoami', {})).content.map((c) => c.text ?? '').join(''), /demo user/);
  });

  it("a callback that does not carry the sign-in's state is refused: no tokens from another page", async () => {
    const { testing } = await api();
    await testing.mcp.signOut('secured');
    const tokensBefore = (await seen()).tokens;
    // A page (not the authorization server) sends the browser to the callback with its own code.
    testing.mcp.openBrowser = async (url) => {
      browsed.push(url);
      const callback = new URL(new URL(url).searchParams.get('redirect_uri')!);
      callback.search = new URLSearchParams({ code: 'forged-code', state: 'not-the-one' }).toString();
      return (await fetch(callback)).status === 400;
    };
    assert.equal(await testing.mcp.signIn('secured'), false);
    assert.equal((await seen()).tokens, tokensBefore, 'no token was asked for with the forged code');
    assert.equal(testing.mcp.isSignedIn('secured'), false);
    testing.mcp.openBrowser = async (url) => {
      browsed.push(url);
      return (await fetch(url)).ok;
    };
  });

  it('Sign Out forgets the tokens and the registration: the next start waits for a sign-in again', async () => {
    const { testing } = await api();
    assert.equal(await testing.mcp.signIn('secured'), true);
    await testing.mcp.signOut('secured');
    assert.equal(testing.mcp.get('secured')!.state.kind, 'stopped');
    const opened = browsed.length;
    await testing.mcp.get('secured')!.start();
    assert.equal(testing.mcp.get('secured')!.state.kind, 'needs-sign-in');
    assert.equal(browsed.length, opened);
  });
});
