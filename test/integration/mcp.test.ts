// @vscode-specific: other extensions' tools come from vscode.lm.tools, which the two VS Codes fill differently.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl, startEverythingOverHttp, until } from './helpers';

/**
 * Real MCP servers from npm (the reference "everything" server over stdio and streamable HTTP,
 * the filesystem server) driven by the chat through the extension's MCP client.
 */
describe('MCP servers in the chat', function () {
  this.timeout(120_000);
  const mcp = () => vscode.workspace.getConfiguration('modelGateway.mcp');
  const agent = () => vscode.workspace.getConfiguration('modelGateway.agent');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  // The suite runs from the repository's out/integration/ (the installed extension has no node_modules).
  const repo = () => resolve(__dirname, '..', '..');
  const server = (name: string) => join(repo(), 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const lastTurn = async () => (await api()).testing.chat.current?.turns.at(-1) as AssistantTurn;
  let stopHttp: (() => void) | undefined;
  let httpPort = 0;

  /** Sends a question and answers every approval with yes; the turn's tool calls. */
  async function askApproving(text: string): Promise<{ turn: AssistantTurn; approvals: string[] }> {
    const { testing } = await api();
    const approvals: string[] = [];
    const sent = testing.chat.send(text, [], []);
    let done = false;
    void sent.finally(() => (done = true));
    while (!done) {
      for (const a of testing.chat.pendingApprovals()) {
        approvals.push(`${a.kind}:${a.action ?? a.path}`);
        testing.chat.decide(a.callId, true);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await sent;
    return { turn: await lastTurn(), approvals };
  }

  before(async () => {
    await connectToEmulator();
    const started = await startEverythingOverHttp();
    httpPort = started.port;
    stopHttp = started.stop;
    writeFileSync(join(root(), 'mcp-notes.md'), '# Notes for the filesystem server\n');
  });

  after(async () => {
    stopHttp?.();
    await mcp().update('servers', undefined, vscode.ConfigurationTarget.Global);
    await agent().update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
    rmSync(join(root(), 'mcp-notes.md'), { force: true });
    rmSync(join(root(), '.vscode', 'mcp.json'), { force: true });
    rmSync(join(root(), 'repo-server-ran.marker'), { force: true });
  });

  it("starts the user's servers (stdio and streamable HTTP) and lists their tools", async () => {
    const { testing } = await api();
    await mcp().update(
      'servers',
      {
        everything: { command: process.execPath, args: [server('server-everything'), 'stdio'] },
        web: { type: 'http', url: `http://127.0.0.1:${httpPort}/mcp` },
        files: { command: process.execPath, args: [server('server-filesystem'), '${workspaceFolder}'] },
      },
      vscode.ConfigurationTarget.Global,
    );
    for (const name of ['everything', 'web', 'files']) await until(`${name} runs`, () => testing.mcp.get(name)?.state.kind === 'running', 30_000);
    const names = testing.agent.definitions().map((d) => d.name);
    for (const n of ['everything__echo', 'everything__get-sum', 'web__echo', 'files__read_text_file', 'files__list_directory'])
      assert.ok(names.includes(n), `${n} is offered (${names.join(', ')})`);
    const echo = testing.agent.definitions().find((d) => d.name === 'everything__echo')!;
    assert.equal(echo.parameters.type, 'object');
    assert.ok('message' in echo.parameters.properties);
    assert.match(echo.description, /MCP server "everything", tool "echo"/);
    assert.ok(
      names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)),
      'every name is valid for both wire formats',
    );
  });

  it("offers the servers' prompts (arguments asked) and resources (read as attachments)", async () => {
    const { testing } = await api();
    assert.ok(testing.mcp.promptItems('').some((p) => p.path === 'everything/simple-prompt'));
    assert.deepEqual(testing.mcp.promptItems('args'), [
      { path: 'everything/args-prompt', name: 'everything/args-prompt' },
      { path: 'web/args-prompt', name: 'web/args-prompt' },
    ]);
    testing.services.prompts.answerNext('Lisbon', 'Portugal');
    assert.equal(await testing.mcp.usePrompt('everything/args-prompt'), "What's weather in Lisbon, Portugal?");
    testing.services.prompts.answerNext(undefined);
    assert.equal(await testing.mcp.usePrompt('everything/args-prompt'), undefined, 'cancelled at the first question');
    const doc = testing.mcp.resourceItems('architecture').find((r) => r.path.startsWith('mcp:everything:'));
    assert.ok(doc, 'a resource of the stdio server matches');
    const attached = await testing.mcp.readResource(doc.path);
    assert.equal(attached?.label, doc.name);
    assert.ok((attached?.text.length ?? 0) > 100, 'its text');
    await assert.rejects(testing.mcp.readResource('mcp:nobody:x'), /not available/);
  });

  it('offers resource templates after the resources; attaching one asks for its arguments, then reads what they address', async () => {
    const { testing } = await api();
    const item = testing.mcp.resourceItems('dynamic text').find((r) => r.path.startsWith('mcp:everything:'));
    assert.ok(
      item,
      `the template is offered (${testing.mcp
        .resourceItems('dynamic')
        .map((r) => r.name)
        .join(', ')})`,
    );
    assert.equal(item.path, 'mcp:everything:demo://resource/dynamic/text/{resourceId}');
    assert.equal(item.name, 'everything: Dynamic Text Resource (asks for resourceId)');
    testing.services.prompts.answerNext('7');
    const attached = await testing.mcp.readResource(item.path);
    assert.equal(attached?.label, 'everything: Dynamic Text Resource (demo://resource/dynamic/text/7)');
    assert.match(attached?.text ?? '', /\b7\b/, 'the resource made for the argument');
    testing.services.prompts.answerNext(undefined);
    assert.equal(await testing.mcp.readResource(item.path), undefined, 'no argument, nothing attached');
  });

  it('a call asks with server, tool and arguments; after Allow its result is in the answer', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const sent = testing.chat.send('Use the echo tool to say "hello over stdio"', [], []);
    await until('the call waits for approval', () => testing.chat.pendingApprovals().length > 0, 20_000);
    const asked = testing.chat.pendingApprovals().find((a) => a.kind === 'tool')!;
    assert.ok(asked, 'a tool call waits');
    assert.equal(asked.action, 'everything › echo');
    assert.equal(asked.path, 'MCP server everything');
    assert.deepEqual(JSON.parse(asked.args ?? '{}'), { message: 'hello over stdio' });
    assert.equal(asked.always, 'everything/echo');
    // The second server's echo (over HTTP) asks next, once the first is decided.
    testing.chat.decide(asked.callId, true);
    await until("the HTTP server's call asks", () => testing.chat.pendingApprovals().find((a) => a.action === 'web › echo'), 20_000);
    testing.chat.decide(testing.chat.pendingApprovals()[0].callId, true);
    await sent;
    const turn = await lastTurn();
    const call = calls(turn).find((c) => c.name === 'everything__echo');
    assert.equal(call?.status, 'done', call?.result);
    assert.match(call?.result ?? '', /Echo: hello over stdio/);
    assert.match(turn.steps.at(-1)?.text ?? '', /`everything__echo` returned: Echo: hello over stdio/);
    const overHttp = calls(turn).find((c) => c.name === 'web__echo');
    assert.match(overHttp?.result ?? '', /Echo: hello over stdio/, 'the same tool over streamable HTTP');
  });

  it('an image result goes to a model that reads images (and into the card), not to one that does not', async () => {
    const { testing } = await api();
    // The PNG's base64 in the last request of the turn's wire format (its text never holds it).
    const sentImages = async (t: AssistantTurn) => {
      const path = t.format === 'chat' ? '/v1/chat/completions' : t.format === 'responses' ? '/v1/responses' : '/v1/messages';
      const seen = (await emulatorControl('last-request', { path })) as { body?: unknown };
      return JSON.stringify(seen.body ?? {}).match(/iVBORw0KGgo/g)?.length ?? 0;
    };
    await testing.chat.newConversation();
    const { turn } = await askApproving('Use the get tiny image tool of everything');
    const call = calls(turn).find((c) => c.name === 'everything__get-tiny-image');
    assert.equal(call?.status, 'done', call?.result);
    assert.equal(call?.images?.length, 1, 'kept for the card');
    assert.equal(call?.images?.[0].mediaType, 'image/png');
    assert.equal(await sentImages(turn), 1, `the answer was asked with the image (${turn.model}, ${turn.format})`);
    // The same model said to take no images: the result's text names it, the image stays home.
    await vscode.workspace
      .getConfiguration('modelGateway')
      .update('modelOverrides', { [turn.model]: { imageInput: false } }, vscode.ConfigurationTarget.Global);
    try {
      await testing.chat.newConversation();
      const again = await askApproving('Use the get tiny image tool of everything');
      assert.match(
        calls(again.turn).find((c) => c.name === 'everything__get-tiny-image')?.result ?? '',
        /\[image image\/png, \d+ KB: shown in the tool card, and given to a model that reads images\]/,
      );
      assert.equal(await sentImages(again.turn), 0);
    } finally {
      await vscode.workspace.getConfiguration('modelGateway').update('modelOverrides', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('a tool allowed in the settings runs unasked; the filesystem server reads a workspace file', async () => {
    const { testing } = await api();
    await agent().update('autoApprove', { mcp: ['files'] }, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const { turn, approvals } = await askApproving('Use the read_text_file tool on mcp-notes.md');
    const call = calls(turn).find((c) => c.name === 'files__read_text_file');
    assert.equal(call?.status, 'done', call?.result);
    assert.match(call?.result ?? '', /Notes for the filesystem server/);
    assert.ok(!approvals.some((a) => a.startsWith('tool:files')), `no approval for the allowed server (${approvals.join(', ')})`);
  });

  it('a server killed mid-session is restarted; the chat is told which tools went away', async () => {
    const { testing } = await api();
    const notices: string[] = [];
    const sub = testing.agent.onNotice((n) => notices.push(n));
    try {
      const pid = testing.mcp.get('everything')!.pid;
      assert.ok(pid, 'the stdio server has a process');
      process.kill(pid, 'SIGKILL');
      await until(
        'the loss is said',
        () => notices.some((n) => /"everything" stopped: its tools \([^)]*echo[^)]*\) are unavailable until it runs again; it is restarted in \d+ s/.test(n)),
        10_000,
      );
      assert.ok(!testing.agent.definitions().some((d) => d.name === 'everything__echo'), 'its tools are not offered while it is down');
      await until('it runs again', () => testing.mcp.get('everything')?.state.kind === 'running', 20_000);
      assert.notEqual(testing.mcp.get('everything')!.pid, pid);
      await agent().update('autoApprove', { mcp: ['everything'] }, vscode.ConfigurationTarget.Global);
      await testing.chat.newConversation();
      const { turn } = await askApproving('Use the echo tool to say "back again"');
      assert.match(calls(turn).find((c) => c.name === 'everything__echo')?.result ?? '', /Echo: back again/);
    } finally {
      sub.dispose();
    }
  });

  it('a workspace server starts only after the person confirms its exact command line', async () => {
    const { testing } = await api();
    mkdirSync(join(root(), '.vscode'), { recursive: true });
    const marker = join(root(), 'repo-server-ran.marker');
    // The "server" records that it ran, then serves: what a repository's command could do.
    const line = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); process.argv.splice(1, 1); import(${JSON.stringify(server('server-everything'))})`;
    writeFileSync(join(root(), '.vscode', 'mcp.json'), JSON.stringify({ servers: { repo: { command: process.execPath, args: ['-e', line, 'x', 'stdio'] } } }));
    await until('the workspace server is known', () => testing.mcp.get('repo'), 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(testing.mcp.get('repo')!.state.kind, 'needs-confirmation');
    assert.equal(existsSync(marker), false, 'nothing from the repository ran');
    assert.ok(!testing.agent.definitions().some((d) => d.name.startsWith('repo__')));
    assert.deepEqual(testing.mcp.waitingServers(), ['repo'], 'said to wait (the panel line, the notification)');

    testing.services.prompts.answerNext(false);
    assert.equal(await testing.mcp.startByPerson('repo'), false);
    assert.equal(existsSync(marker), false, 'declined: still nothing ran');
    assert.deepEqual(testing.mcp.waitingServers(), [], 'declined: no longer said to wait');

    testing.services.prompts.answerNext(true);
    assert.equal(await testing.mcp.startByPerson('repo'), true);
    assert.ok(existsSync(marker));
    assert.ok(testing.agent.definitions().some((d) => d.name === 'repo__echo'));
  });
});

describe("other extensions' tools in the chat", function () {
  this.timeout(60_000);
  before(() => connectToEmulator());

  it('a tool another extension registered with vscode.lm is offered and called after approval', async function () {
    const { testing } = await api();
    if (!Array.isArray((vscode.lm as { tools?: unknown }).tools)) this.skip(); // this VS Code has no vscode.lm.tools (feature-detected)
    await until('the other extension registered its tool', () => testing.agent.choices().some((c) => c.name === 'vscode__integration_weather'), 20_000);
    assert.ok(!testing.agent.choices().some((c) => /^vscode__modelGateway/.test(c.name)), 'our own tools are not offered back to us');
    // Another extension's tool is off until the person turns it on (the tools picker): never in a request before.
    assert.equal(testing.agent.choices().find((c) => c.name === 'vscode__integration_weather')?.on, false);
    assert.ok(!testing.agent.definitions().some((d) => d.name === 'vscode__integration_weather'));
    await testing.agent.setToolChoices({ vscode__integration_weather: true }, 'workspace');
    after(() => testing.agent.setToolChoices({ vscode__integration_weather: false }, 'workspace'));
    assert.ok(testing.agent.definitions().some((d) => d.name === 'vscode__integration_weather'));
    // VS Code's own tools that do our tools' jobs are never listed (those this VS Code registers).
    const builtIn = vscode.lm.tools.map((t) => t.name).filter((n) => /^copilot_(readFile|findFiles|findTextInFiles)$|^run_in_terminal$/.test(n));
    for (const n of builtIn) assert.ok(!testing.agent.choices().some((c) => c.name === `vscode__${n}`), n);
    await testing.chat.newConversation();
    const sent = testing.chat.send('Use the integration_weather tool for "Lisbon"', [], []);
    await until('the call asks', () => testing.chat.pendingApprovals().find((a) => a.action === 'vscode › integration_weather'), 20_000);
    testing.chat.decide(testing.chat.pendingApprovals()[0].callId, true);
    await sent;
    const turn = testing.chat.current?.turns.at(-1) as AssistantTurn;
    const call = turn.steps.flatMap((s) => s.toolCalls).find((c) => c.name === 'vscode__integration_weather');
    assert.equal(call?.status, 'done', call?.result);
    assert.match(call?.result ?? '', /Sunny in Lisbon, 21 °C \(from the other extension\)/);
  });
});
