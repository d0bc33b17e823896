import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorRequests, everythingServerPath, runAnswering, until } from './helpers';

/**
 * What an MCP server asks of the client, with the reference "everything" server over stdio: its
 * sampling tool (the person's model, through the gateway, after a yes) and its elicitation tool
 * (a form the person fills in).
 */
describe('MCP servers asking for the model and the person', function () {
  this.timeout(120_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const everything = everythingServerPath();
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const posts = async () => (await emulatorRequests()).filter((r) => r.startsWith('POST /v1/')).length;

  /** Sends a question; `decide` answers each sampling approval (undefined: leave it). Returns the turn and the approvals seen. */
  async function ask(
    text: string,
    decide: (a: {
      callId: string;
      args?: string;
      price?: string;
      reason?: string;
      always?: string;
      action?: string;
      path: string;
    }) => 'allow' | 'always' | 'reject',
  ): Promise<{ turn: AssistantTurn; asked: { args?: string; price?: string; reason?: string; always?: string; action?: string; path: string }[] }> {
    const { testing } = await api();
    await testing.chat.newConversation();
    const asked: { args?: string; price?: string; reason?: string; action?: string; path: string }[] = [];
    const sent = testing.chat.send(text, [], []);
    let done = false;
    void sent.finally(() => (done = true));
    while (!done) {
      for (const a of testing.chat.pendingApprovals()) {
        if (a.kind !== 'sampling') {
          testing.chat.decide(a.callId, true);
          continue;
        }
        asked.push(a);
        const d = decide(a);
        testing.chat.decide(a.callId, d !== 'reject', d === 'always');
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await sent;
    return { turn: testing.chat.current?.turns.at(-1) as AssistantTurn, asked };
  }
  const samplingCall = (t: AssistantTurn) => calls(t).find((c) => c.name === 'sampler__trigger-sampling-request');

  before(async () => {
    await connectToEmulator();
    assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
    const { testing } = await api();
    await settings().update('mcp.servers', { sampler: { command: process.execPath, args: [everything, 'stdio'] } }, vscode.ConfigurationTarget.Global);
    // The server's tools run unasked: what asks below is its request for the model, nothing else.
    await settings().update('agent.autoApprove', { mcp: ['sampler'] }, vscode.ConfigurationTarget.Global);
    await until('the server runs', () => testing.mcp.get('sampler')?.state.kind === 'running', 30_000);
    const tools = testing.agent.definitions().map((d) => d.name);
    assert.ok(
      tools.includes('sampler__trigger-sampling-request') && tools.includes('sampler__trigger-elicitation-request'),
      `the server offers its sampling and elicitation tools only to a client that has both (${tools.join(', ')})`,
    );
  });

  after(async () => {
    const { testing } = await api();
    await testing.mcp.sampling.setAlwaysAllowed(testing.mcp.samplingServer(testing.mcp.get('sampler')!), false);
    await settings().update('mcp.servers', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('agent.autoApprove', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('mcp.sampling.dailyCapDollars', undefined, vscode.ConfigurationTarget.Global);
    testing.services.prompts.discardAnswers();
  });

  it("a sampling request waits in the chat's bar (server, model, messages, price); after Allow the gateway answers it and its cost is counted for the server", async () => {
    const { testing } = await api();
    const spentBefore = testing.mcp.sampling.spentToday('sampler');
    const { turn, asked } = await ask('Use the trigger sampling request tool with the prompt "Name a colour"', () => 'allow');
    assert.equal(asked.length, 1, "asked once, though the server's tools run unasked");
    const a = asked[0];
    assert.equal(a.path, 'sampler');
    assert.ok(a.action, 'the model is named');
    assert.match(
      a.args ?? '',
      /^System: You are a helpful test server\.\n\nUser: Resource trigger-sampling-request context: Name a colour\n\n\(at most 100 tokens, temperature 0\.7\)$/,
    );
    assert.match(a.price ?? '', /^at most \$\d/);
    assert.match(a.reason ?? '', /paid from your balance/);
    const call = samplingCall(turn);
    assert.equal(call?.status, 'done', call?.result);
    assert.match(call?.result ?? '', /LLM sampling result/);
    assert.match(call?.result ?? '', new RegExp(`"model": "${a.action}"`));
    assert.match(call?.result ?? '', /"stopReason": "(endTurn|maxTokens)"/);
    assert.ok(testing.mcp.sampling.spentToday('sampler') > spentBefore, 'its cost is in the ledger');
    const report = await testing.usage.reload();
    const series = report?.series.find((s) => s.name === 'MCP: sampler');
    assert.ok(series && series.dollars.at(-1)! > 0, `the Usage view has the server's series (${report?.series.map((s) => s.name).join(', ')})`);
  });

  it('a declined request sends nothing to the gateway, and the server hears that the person declined', async () => {
    const { testing } = await api();
    const spent = testing.mcp.sampling.spentToday('sampler');
    const before = await posts();
    const { turn } = await ask('Use the trigger sampling request tool with the prompt "Spend my money"', () => 'reject');
    const call = samplingCall(turn);
    assert.match(call?.result ?? '', /declined the sampling request/);
    // The turn's own two requests (the tool call, then the answer), and no third.
    assert.equal((await posts()) - before, 2);
    assert.equal(testing.mcp.sampling.spentToday('sampler'), spent);
  });

  it('outside a chat turn the request is a modal only the person answers', async () => {
    const { testing } = await api();
    const server = testing.mcp.get('sampler')!;
    testing.services.prompts.answerNext('Allow');
    const allowed = await server.call('trigger-sampling-request', { prompt: 'Hello', maxTokens: 5 });
    assert.match(allowed.content.map((c) => c.text ?? '').join(''), /LLM sampling result/);
    const before = await posts();
    testing.services.prompts.answerNext(undefined);
    const dismissed = await server.call('trigger-sampling-request', { prompt: 'Hello', maxTokens: 5 });
    assert.equal(dismissed.isError, true);
    assert.match(dismissed.content.map((c) => c.text ?? '').join(''), /declined/);
    assert.equal(await posts(), before, 'nothing went to the gateway');
  });

  it('Always allow lets the next request run unasked, until the daily cap could be passed', async () => {
    const { testing } = await api();
    const first = await ask('Use the trigger sampling request tool with the prompt "One"', () => 'always');
    assert.equal(first.asked.length, 1);
    assert.match(first.asked[0].always ?? '', /"sampler" ask your model \(up to \$1\.00 a day\)/);
    const second = await ask('Use the trigger sampling request tool with the prompt "Two"', () => 'reject');
    assert.equal(second.asked.length, 0, 'allowed: not asked');
    assert.match(samplingCall(second.turn)?.result ?? '', /LLM sampling result/);
    // A cap below what was spent today: the next request asks again, and says why.
    await settings().update('mcp.sampling.dailyCapDollars', testing.mcp.sampling.spentToday('sampler') / 2, vscode.ConfigurationTarget.Global);
    const third = await ask('Use the trigger sampling request tool with the prompt "Three"', () => 'reject');
    assert.equal(third.asked.length, 1);
    assert.match(third.asked[0].reason ?? '', /today's cap for "sampler" .* could be passed/);
    // A cloned repository's settings file cannot raise it (VS Code's API refuses to write it there; a file does not ask).
    const file = join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'settings.json');
    const earlier = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      JSON.stringify({
        ...(earlier?.trim() ? (JSON.parse(earlier) as object) : {}),
        'modelGateway.mcp.sampling.dailyCapDollars': 1000,
        'modelGateway.mcp.samplingProbe': 1,
      }),
    );
    try {
      await until('the workspace settings read', () => settings().inspect('mcp.samplingProbe')?.workspaceValue === 1);
      assert.equal(testing.mcp.sampling.capDollars(), testing.mcp.sampling.spentToday('sampler') / 2);
      const fourth = await ask('Use the trigger sampling request tool with the prompt "Four"', () => 'reject');
      assert.equal(fourth.asked.length, 1, 'still asks');
    } finally {
      if (earlier === undefined) rmSync(file, { force: true });
      else writeFileSync(file, earlier);
    }
  });

  it("elicitation: the form's answers go back as the schema says; Decline and Escape are told apart", async () => {
    const { testing } = await api();
    const server = testing.mcp.get('sampler')!;
    const text = (r: { content: { text?: string }[] }) => r.content.map((c) => c.text ?? '').join('\n');
    // The everything server's 13 fields, in order: the name, agree (yes), a first line left empty,
    // email, no homepage, birthdate, integer, no number, then the five kinds of choice.
    testing.services.prompts.answerNext(
      'Answer…',
      'Ada Lovelace',
      'Yes',
      '',
      'ada@example.com',
      '',
      '1815-12-10',
      '7',
      '',
      'Rachel',
      'Piano|Violin',
      'Wonder Woman',
      'Salmon',
      'Dogs',
    );
    const answered = text(await server.call('trigger-elicitation-request', {}));
    assert.equal(testing.services.prompts.pendingAnswers(), 0, 'one question per field');
    assert.match(answered, /User provided the requested information/);
    const raw = JSON.parse(answered.slice(answered.indexOf('Raw result:') + 'Raw result:'.length)) as { action: string; content: Record<string, unknown> };
    assert.deepEqual(raw, {
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        email: 'ada@example.com',
        birthdate: '1815-12-10',
        integer: 7,
        untitledSingleSelectEnum: 'Rachel',
        untitledMultipleSelectEnum: ['Piano', 'Violin'],
        titledSingleSelectEnum: 'hero-3',
        titledMultipleSelectEnum: ['fish-2'],
        legacyTitledEnum: 'pet-2',
      },
    });
    testing.services.prompts.answerNext('Decline');
    assert.match(text(await server.call('trigger-elicitation-request', {})), /User declined/);
    testing.services.prompts.answerNext('Answer…', 'Ada', undefined);
    assert.match(text(await server.call('trigger-elicitation-request', {})), /User cancelled/, 'Escape at a field cancels the whole form');
  });

  it("a tool's structured content is checked against its output schema (the SDK's validator, on zod in the shipped bundle)", async () => {
    const { testing } = await api();
    const r = await testing.mcp.get('sampler')!.call('get-structured-content', { location: 'Chicago' });
    assert.equal(r.isError, false);
    assert.equal(typeof (r.structured as { temperature?: unknown }).temperature, 'number');
  });

  it("elicitation never sends one of Model Gateway's credentials, even typed into the form", async () => {
    const { testing } = await api();
    testing.services.prompts.answerNext('Answer…', config.demoKey);
    const r = await testing.mcp.get('sampler')!.call('trigger-elicitation-request', {});
    testing.services.prompts.discardAnswers();
    const said = r.content.map((c) => c.text ?? '').join('\n');
    assert.equal(r.isError, true, said);
    assert.match(said, /never given to an MCP server/);
    assert.ok(!said.includes(config.demoKey), 'the key did not reach the server');
  });
});
