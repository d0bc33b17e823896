import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/chat/conversation';
import { api, connectToEmulator, emulatorRequests } from './helpers';

/**
 * A long agent session on models with a 32,000-token window (the emulator refuses anything
 * longer, with the real error shapes): the chat fits every request into the window, in both
 * wire formats, so the session runs to its end.
 */
describe('long sessions fit the context window', function () {
  this.timeout(180_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const big = () => join(vscode.workspace.workspaceFolders![0].uri.fsPath, 'big-notes.txt');

  before(async () => {
    await connectToEmulator();
    await settings().update('chat.maxToolSteps', 45, vscode.ConfigurationTarget.Global);
    // About 15,000 tokens: two reads of it no longer fit in the window.
    writeFileSync(big(), Array.from({ length: 1500 }, (_, i) => `line ${i + 1}: notes about the gateway, the cache and the budget`).join('\n'));
  });

  after(async () => {
    for (const k of ['chat.maxToolSteps', 'defaultModels.chat']) await settings().update(k, undefined, vscode.ConfigurationTarget.Global);
    rmSync(big(), { force: true });
  });

  for (const model of ['small-context-emu', 'claude-small-context-emu']) {
    it(`runs a 40-step tool session on ${model} (${model.startsWith('claude') ? 'messages' : 'chat completions'}) without a context error`, async () => {
      const { testing } = await api();
      await settings().update('defaultModels.chat', model, vscode.ConfigurationTarget.Global);
      await testing.chat.newConversation();
      const path = model.startsWith('claude') ? '/v1/messages' : '/v1/chat/completions';
      const before = (await emulatorRequests()).filter((r) => r.endsWith(path)).length;
      await testing.chat.send('Read the file big-notes.txt again and again #steps=40', [], []);
      const answer = testing.chat.current?.turns.at(-1) as AssistantTurn;
      assert.equal(answer.error?.message, undefined, 'no error');
      assert.equal(answer.status, 'done');
      const calls = answer.steps.flatMap((s) => s.toolCalls);
      assert.ok(calls.length >= 40, `${calls.length} tool calls`);
      assert.ok(calls.every((c) => c.status === 'done'));
      const sent = (await emulatorRequests()).filter((r) => r.endsWith(path)).length - before;
      assert.ok(sent >= 41, `${sent} requests reached the model`);
      // What is stored is whole: every read kept its full result.
      assert.ok(calls.every((c) => (c.result ?? '').length > 20_000), 'the stored results are not shortened');
    });
  }
});
