// @profile-dependent: the headers each request carries (New-Api-User on new-api).
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorControl } from './helpers';

interface SeenRequest {
  headers: Record<string, string>;
  body: { tools?: unknown[]; max_tokens?: number; messages?: unknown[] };
}
const lastChat = async () => (await emulatorControl('last-request', { path: '/v1/chat/completions' })) as SeenRequest;

/** Settings that adapt the extension to a particular gateway and its models. */
describe('per-gateway settings in a real VS Code', function () {
  this.timeout(60_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    for (const k of ['defaultModels.chat', 'extraHeaders', 'modelOverrides']) await settings().update(k, undefined, vscode.ConfigurationTarget.Global);
  });

  it(`runs against the emulator's ${config.profile} profile`, () => {
    assert.ok(['new-api', 'one-api'].includes(config.profile));
  });

  it('extra headers go with every request; credential headers in the setting are ignored', async () => {
    const { testing } = await api();
    await settings().update('extraHeaders', { 'X-Proxy-Route': 'team-a', Authorization: 'Bearer planted-by-a-setting' }, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    await testing.chat.send('Hello with headers', [], []);
    const seen = await lastChat();
    assert.equal(seen.headers['x-proxy-route'], 'team-a');
    assert.equal(seen.headers.authorization, '(set)');
    const answer = testing.chat.current?.turns.at(-1) as AssistantTurn;
    assert.equal(answer.status, 'done', 'the real key was used, not the planted one');
  });

  it('a model marked without tool calling gets no tools; its output limit is sent as max_tokens', async () => {
    const { testing } = await api();
    await settings().update('modelOverrides', { 'gpt-4o-*': { toolCalling: false, maxOutputTokens: 64 } }, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    await testing.chat.send('Please read the file src/index.ts', [], []);
    const seen = await lastChat();
    assert.equal(seen.body.tools, undefined);
    assert.equal(seen.body.max_tokens, 64);
  });

  it('a model marked without image input refuses images before sending', async () => {
    const { testing } = await api();
    await settings().update('modelOverrides', { 'gpt-4o-mini': { imageInput: false } }, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const before = testing.chat.current?.turns.length ?? 0;
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');
    await testing.chat.send('What is in this picture?', [{ name: 'p.png', mediaType: 'image/png', data: png, detail: 'auto' }], []);
    assert.equal(testing.chat.current?.turns.length ?? 0, before, 'nothing was sent or stored');
  });
});
