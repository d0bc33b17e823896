// @profile-dependent: Gemini's own format is new-api's (/v1beta); one-api answers 404 and the turn goes by chat completions.
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';

/**
 * A Gemini model in a real VS Code: the chat picks Gemini's own format from the gateway's
 * endpoint list (no setting), runs a tool round with the model's thought signature carried back,
 * shows the thoughts as thinking, and, on a gateway without /v1beta, goes on in chat completions.
 */
describe("Gemini's own format in the chat", function () {
  this.timeout(60_000);
  const mg = () => vscode.workspace.getConfiguration('modelGateway');
  const MEMORY = 'modelGateway.noGeminiRoute';
  const geminiCalls = async () => (await emulatorRequests()).filter((r) => r === 'POST /v1beta/models/gemini-3-pro-emu:streamGenerateContent').length;
  const lastTurn = async () => (await api()).testing.chat.current?.turns.at(-1) as AssistantTurn;

  before(async () => {
    await connectToEmulator();
    await mg().update('defaultModels.chat', 'gemini-3-pro-emu', vscode.ConfigurationTarget.Global);
    const { testing } = await api();
    await testing.chat.newConversation();
  });
  after(async () => {
    const { testing } = await api();
    await testing.services.context.globalState.update(MEMORY, undefined);
    await mg().update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
    await emulatorControl('profile', { profile: config.profile });
  });

  it('a tool round in the format the gateway lists for the model, the signature sent back; else chat completions, remembered', async () => {
    const { testing } = await api();
    const before = await geminiCalls();
    await testing.chat.send('Please read the file src/index.ts', [], []);
    const turn = await lastTurn();
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    if (config.profile === 'new-api') {
      assert.equal(turn.format, 'gemini', 'chosen from /api/pricing: supported_endpoint_types lists gemini');
      const call = turn.steps[0]?.toolCalls[0];
      assert.equal(call?.name, 'read_file');
      assert.ok(call?.thoughtSignature, 'the call keeps its signature');
      assert.ok(turn.steps[0]?.thinking, 'thoughts shown as thinking');
      assert.match(turn.steps.at(-1)?.text ?? '', /\S/);
      assert.equal(
        (await geminiCalls()) - before,
        turn.steps.length,
        'every step in the format (the second carried the signature, or it would have been refused)',
      );
    } else {
      // one-api lists no endpoint types: chat completions from the start, /v1beta never tried.
      assert.equal(turn.format, 'chat');
      assert.equal(await geminiCalls(), before);
    }

    // A gateway without /v1beta (the emulator switched to one-api's routes), the format chosen by hand.
    await emulatorControl('profile', { profile: 'one-api' });
    await mg().update('modelOverrides', { 'gemini-3-pro-emu': { api: 'gemini' } }, vscode.ConfigurationTarget.Global);
    try {
      await testing.chat.send('Hello again', [], []);
      const fallback = await lastTurn();
      assert.equal(fallback.status, 'done', JSON.stringify(fallback.error));
      assert.equal(fallback.format, 'chat', 'the turn went on in chat completions');
      assert.ok(testing.services.notices.some((n) => n.message.startsWith("This gateway has no /v1beta (Gemini's own format, HTTP 404): gemini-3-pro-emu")));
      assert.deepEqual(testing.services.context.globalState.get<string[]>(MEMORY), [config.emulatorUrl.replace(/\/+$/, '')]);
    } finally {
      await mg().update('modelOverrides', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
