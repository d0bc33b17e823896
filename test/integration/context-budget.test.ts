import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, Conversation, UserTurn } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';

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
    // A test of the window, not of spend: the per-turn cost limit is off.
    await settings().update('chat.maxCostPerTurnDollars', 0, vscode.ConfigurationTarget.Global);
    // About 15,000 tokens: two reads of it no longer fit in the window.
    writeFileSync(big(), Array.from({ length: 1500 }, (_, i) => `line ${i + 1}: notes about the gateway, the cache and the budget`).join('\n'));
  });

  after(async () => {
    for (const k of ['chat.maxToolSteps', 'chat.maxCostPerTurnDollars', 'defaultModels.chat'])
      await settings().update(k, undefined, vscode.ConfigurationTarget.Global);
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
      assert.ok(
        calls.every((c) => (c.result ?? '').length > 20_000),
        'the stored results are not shortened',
      );
    });
  }

  it("Condense by hand: the model's summary is kept with the conversation and sent in place of the older turns, which stay whole", async () => {
    const { testing } = await api();
    await settings().update('defaultModels.chat', 'claude-small-context-emu', vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    assert.match((await testing.chat.condenseNow()) ?? '', /nothing to condense/i);
    await testing.chat.send('First question: what does the gateway keep? #words=300', [], []);
    await testing.chat.send('Second question: and where are the keys stored?', [], []);
    const firstAnswer = (testing.chat.current!.turns[1] as AssistantTurn).steps[0].text;
    assert.equal(await testing.chat.condenseNow(), undefined, 'condensed');
    const conversation = testing.chat.current as Conversation;
    assert.equal(conversation.condensations?.length, 1);
    const c = conversation.condensations[0];
    assert.equal(c.manual, true);
    assert.equal(c.throughTurnId, conversation.turns[1].id, 'all but the newest exchange');
    assert.match(c.summary, /## Requests\n- First question: what does the gateway keep\?/);
    assert.match((await testing.chat.condenseNow()) ?? '', /already condensed/);
    await testing.chat.send('Third question: summarise where we are', [], []);
    const body = JSON.stringify(((await emulatorControl('last-request', { path: '/v1/messages' })) as { body: unknown }).body);
    assert.ok(body.includes('was condensed to fit the context window'), 'the summary is sent');
    assert.ok(!body.includes(firstAnswer.slice(0, 80)), 'the condensed answer is not');
    assert.ok(body.includes('Second question: and where are the keys stored?'), 'the newest exchange is sent as it was');
    assert.equal(testing.chat.current?.turns.length, 6, 'every turn is kept');
    assert.equal((testing.chat.current.turns[1] as AssistantTurn).steps[0].text, firstAnswer);
  });

  it('a question too large for the window alone is not sent: no turn, no request', async () => {
    const { testing } = await api();
    await settings().update('defaultModels.chat', 'small-context-emu', vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const before = (await emulatorRequests()).length;
    const huge = Array.from({ length: 4_000 }, (_, i) => `row ${i}: a long attached log line with many words in it`).join('\n');
    await testing.chat.send('What is in this log?', [], [{ label: 'build.log', text: huge }]);
    assert.equal(testing.chat.current?.id, undefined, 'no conversation was started');
    // A price-list refresh (GET) may come with the estimate; the question itself is a POST.
    assert.deepEqual(
      (await emulatorRequests()).slice(before).filter((p) => p.startsWith('POST ')),
      [],
      'nothing went over the wire',
    );
    await testing.chat.send('What is in this log?', [], [{ label: 'build.log', text: huge.slice(0, 2_000) }]);
    assert.equal((testing.chat.current?.turns[0] as UserTurn | undefined)?.text, 'What is in this log?', 'a smaller one goes');
  });
});
