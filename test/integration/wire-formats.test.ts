import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';

/**
 * Models the user set to the Responses format, on a gateway that has no /v1/responses (one-api):
 * the turn goes on in chat completions, the person is told once, and the gateway is remembered so
 * later turns go straight to chat completions.
 */
describe('wire formats: a gateway without /v1/responses', function () {
  this.timeout(60_000);
  const mg = () => vscode.workspace.getConfiguration('modelGateway');
  const MEMORY = 'modelGateway.noResponsesRoute';
  const responsesCalls = async () => (await emulatorRequests()).filter((r) => r === 'POST /v1/responses').length;
  const lastTurn = async () => (await api()).testing.chat.current?.turns.at(-1) as AssistantTurn;

  before(async () => {
    await connectToEmulator();
    await emulatorControl('profile', { profile: 'one-api' });
    // Whichever model the chat has now (an earlier suite may have picked another): all in the Responses format.
    await mg().update('modelOverrides', { '*': { api: 'responses' } }, vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    const { testing } = await api();
    await testing.services.context.globalState.update(MEMORY, undefined);
    await mg().update('modelOverrides', undefined, vscode.ConfigurationTarget.Global);
    await emulatorControl('profile', { profile: config.profile });
  });

  it('falls back with a notice, and remembers the gateway', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const before = await responsesCalls();
    await testing.chat.send('Hello over the Responses format', [], []);
    const first = await lastTurn();
    assert.equal(first.status, 'done', JSON.stringify(first.error));
    assert.equal(first.format, 'chat', 'the turn went on in chat completions');
    assert.match(first.steps[0]?.text ?? '', /\S/);
    assert.equal(await responsesCalls(), before + 1, 'one try at /v1/responses');
    assert.ok(
      testing.services.notices.some((n) => n.message.startsWith(`This gateway has no /v1/responses (HTTP 404): ${first.model} goes by chat completions`)),
    );
    assert.deepEqual(testing.services.context.globalState.get<string[]>(MEMORY), [config.emulatorUrl.replace(/\/+$/, '')]);

    await testing.chat.send('And again', [], []);
    assert.equal((await lastTurn()).format, 'chat');
    assert.equal(await responsesCalls(), before + 1, 'remembered: not asked again');
  });
});
