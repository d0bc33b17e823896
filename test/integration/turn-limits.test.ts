import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { api, connectToEmulator } from './helpers';

/** A turn that reaches its limit of requests or dollars asks the person whether to go on (on gpt-4o: the usage suite reads today's gpt-4o-mini calls). */
describe('per-turn limits in the chat', function () {
  this.timeout(90_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const notes = () => join(vscode.workspace.workspaceFolders![0].uri.fsPath, 'limit-notes.txt');
  const calls = (t: AssistantTurn) => t.steps.flatMap((s) => s.toolCalls);

  before(async () => {
    await connectToEmulator();
    writeFileSync(notes(), 'notes about the limits\n');
    await settings().update('defaultModels.chat', 'gpt-4o', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    rmSync(notes(), { force: true });
    for (const k of ['defaultModels.chat', 'chat.maxToolSteps', 'chat.maxCostPerTurnDollars', 'prices'])
      await settings().update(k, undefined, vscode.ConfigurationTarget.Global);
  });

  it('at its request limit the turn asks: Stop ends it there, Continue grants as many again', async () => {
    const { testing } = await api();
    await settings().update('chat.maxToolSteps', 2, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    testing.services.prompts.answerNext(false);
    await testing.chat.send('Read the file limit-notes.txt again and again #steps=5', [], []);
    const stopped = testing.chat.current?.turns.at(-1) as AssistantTurn;
    assert.equal(stopped.status, 'done');
    assert.equal(stopped.stepLimitReached, true);
    assert.match(calls(stopped).at(-1)?.result ?? '', /limit of 2 steps/);

    testing.services.prompts.answerNext(true, true);
    await testing.chat.send('Read the file limit-notes.txt again and again #steps=5', [], []);
    const went = testing.chat.current?.turns.at(-1) as AssistantTurn;
    assert.equal(went.status, 'done', went.error?.message);
    assert.equal(went.stepLimitReached, undefined);
    assert.ok(calls(went).length >= 5 && calls(went).every((c) => c.status === 'done'), `${calls(went).length} calls, all run`);
  });

  it('at its cost limit (the model priced in the settings) the turn asks, and stops when told', async () => {
    const { testing } = await api();
    await settings().update('chat.maxToolSteps', 50, vscode.ConfigurationTarget.Global);
    // Cache reads at the full price too: the gateway's automatic prompt cache must not keep the turn under the limit.
    await settings().update('prices', { 'gpt-4o': { input: 1000, output: 1000, cacheRead: 1000 } }, vscode.ConfigurationTarget.Global);
    await settings().update('chat.maxCostPerTurnDollars', 2, vscode.ConfigurationTarget.Global);
    testing.services.prices.reset();
    await testing.chat.newConversation();
    testing.services.prompts.answerNext(false);
    await testing.chat.send('Read the file limit-notes.txt again and again #steps=8', [], []);
    const turn = testing.chat.current?.turns.at(-1) as AssistantTurn;
    assert.equal(turn.stepLimitReached, true);
    assert.match(calls(turn).at(-1)?.result ?? '', /limit of \$2\.00 \(it has cost \$\d+\.\d\d\)/);
    assert.ok(calls(turn).length < 8, 'stopped before the model was done');
  });
});
