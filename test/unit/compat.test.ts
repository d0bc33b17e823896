import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyUsage, newId, type AssistantTurn, type UserTurn } from '../../src/common/conversation';
import { runTurn, type ToolRunner } from '../../src/runtime/core/engine';
import { GatewayClient } from '../../src/gateway';
import { TOOL_DEFINITIONS, WorkspaceTools } from '../../src/tools/workspaceTools';
import { GatewayEmulator } from '../emulator/server';
import { DEMO_KEY } from './helpers';

/**
 * What users of other extensions keep hitting with gateways: upstreams that refuse
 * stream_options and send no usage, and thinking models that want their reasoning back.
 */
describe('compatibility with real upstreams behind a gateway', () => {
  let emu: GatewayEmulator;
  before(async () => {
    // Its own emulator: the stream_options memory is per gateway address.
    emu = await GatewayEmulator.start();
  });
  after(() => emu.close());

  const root = mkdtempSync(join(tmpdir(), 'mg-compat-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  const tools = WorkspaceTools.forFolders([{ name: 'p', path: root }], [], { approver: { approve: () => Promise.resolve({ accepted: true }) } });
  const runner: ToolRunner = { definitions: TOOL_DEFINITIONS, run: (name, args, signal) => tools.run(name, args, signal) };
  const user = (text: string): UserTurn => ({ id: newId('u'), role: 'user', text, images: [], context: [], at: Date.now() });
  const assistant = (model: string): AssistantTurn => ({
    id: newId('a'),
    role: 'assistant',
    model,
    format: 'chat',
    steps: [],
    status: 'streaming',
    usage: emptyUsage(),
    at: Date.now(),
  });

  it('a 400 naming stream_options is retried once without it, and the gateway is remembered', async () => {
    const refused: string[] = [];
    const client = new GatewayClient({ baseUrl: emu.url, apiKey: DEMO_KEY, onStreamOptionsRefused: (url) => refused.push(url) });
    const body = { model: 'legacy-upstream-emu', messages: [{ role: 'user' as const, content: 'Hello' }] };
    const first = await client.chat.completions.stream(body).finalCompletion();
    assert.match(first.choices[0].message.content ?? '', /Hello/);
    const sent = emu.requestsTo('/v1/chat/completions').map((r) => 'stream_options' in (r.body as object));
    assert.deepEqual(sent, [true, false], 'asked once with it, then once without');
    assert.deepEqual(refused, [client.baseUrl]);
    await client.chat.completions.stream(body).finalCompletion();
    assert.equal('stream_options' in (emu.requestsTo('/v1/chat/completions').at(-1)!.body as object), false, 'not asked again');
    assert.equal(emu.requestsTo('/v1/chat/completions').length, 3);
    assert.deepEqual(refused, [client.baseUrl], 'said once');
  });

  it('a reply streamed without usage gets an estimate, marked as such', async () => {
    const client = new GatewayClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
    const turn = assistant('legacy-upstream-emu');
    await runTurn({
      client,
      model: 'legacy-upstream-emu',
      format: 'chat',
      system: 'Be brief.',
      history: [user('Say something #words=40')],
      turn,
      maxSteps: 2,
      cacheTtl: '5m',
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.usage.estimated, true);
    assert.ok(turn.usage.input > 0 && turn.usage.output >= 30, JSON.stringify(turn.usage));
  });

  it("a thinking model: its reasoning is kept as the step's thinking and sent back with the tool round", async () => {
    const client = new GatewayClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
    const turn = assistant('deepseek-reasoner-emu');
    await runTurn({
      client,
      model: 'deepseek-reasoner-emu',
      format: 'chat',
      system: 'Use tools.',
      history: [user('Please read the file src/a.ts')],
      turn,
      tools: runner,
      maxSteps: 4,
      cacheTtl: '5m',
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.equal(turn.steps.length, 2);
    assert.match(turn.steps[0].thinking ?? '', /Thinking it through/);
    const followUp = emu.requestsTo('/v1/chat/completions').at(-1)!.body as {
      messages: { role: string; reasoning_content?: string; tool_calls?: unknown[] }[];
    };
    const round = followUp.messages.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.equal(round?.reasoning_content, turn.steps[0].thinking);
    assert.ok(turn.usage.input > 0);
  });
});
