// @profile-dependent: the busy answers are each server's own (test/emulator/busy.ts).
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorControl } from './helpers';

/** The chat in a real VS Code: a busy model's question is answered by the next of the person's chain. */
describe('fallback chain in a real VS Code', function () {
  this.timeout(60_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const answered = async () => ((await emulatorControl('answered', { path: '/v1/chat/completions' })) as { requests: unknown[] }).requests.length;

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
    await settings().update('fallbackModels', { 'gpt-4o-mini': ['gpt-4o'] }, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await emulatorControl('faults', { clear: true });
    await settings().update('fallbackModels', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
  });

  it('503 no channel on the chosen model: the next one answers, the turn says so and is priced at the model that answered', async () => {
    const { testing } = await api();
    await emulatorControl('faults', { model: 'gpt-4o-mini', times: null, fault: { kind: 'busy', reason: 'no-channel' } });
    try {
      await testing.chat.newConversation();
      const before = await answered();
      await testing.chat.send('What does a fallback chain do?', [], []);
      const answer = testing.chat.current!.turns.at(-1) as AssistantTurn;
      assert.equal(answer.status, 'done', JSON.stringify(answer.error));
      assert.equal(answer.model, 'gpt-4o-mini', 'the chosen model stays the turn’s');
      assert.equal(answer.answeredBy, 'gpt-4o');
      assert.deepEqual(
        answer.fallbacks?.map((f) => [f.from, f.to, f.kind, f.status]),
        [['gpt-4o-mini', 'gpt-4o', 'no-channel', 503]],
      );
      assert.ok(answer.steps[0].text.length > 0);
      assert.deepEqual(Object.keys(answer.usageBy ?? {}).sort(), ['gpt-4o', 'gpt-4o-mini']);
      if (config.profile === 'one-api')
        // one-api publishes no prices: the cost is unknown (never $0) until the person sets one.
        assert.equal(answer.cost?.dollars, undefined);
      else assert.ok(answer.cost?.dollars !== undefined && answer.cost.dollars > 0, 'priced');
      // One request to the busy model (no retry of a 503 while a next model waits), one to the next.
      assert.equal((await answered()) - before, 2);

      // A second fallback within five minutes trips the breaker: the third question goes to the next model first.
      await testing.chat.send('And a second question?', [], []);
      const second = testing.chat.current!.turns.at(-1) as AssistantTurn;
      assert.equal(second.answeredBy, 'gpt-4o');
      const beforeThird = await answered();
      await testing.chat.send('A third one?', [], []);
      const third = testing.chat.current!.turns.at(-1) as AssistantTurn;
      assert.equal(third.status, 'done', JSON.stringify(third.error));
      assert.equal(third.fallbacks?.[0].kind, 'breaker');
      assert.equal(third.answeredBy, 'gpt-4o');
      assert.equal((await answered()) - beforeThird, 1, 'the tripped model was not asked first');
    } finally {
      await emulatorControl('faults', { clear: true });
    }
  });

  it('a refusal never falls back: a 400 ends as the error card with nothing sent to the next model', async () => {
    const { testing } = await api();
    await emulatorControl('faults', { model: 'gpt-4o', times: 1, fault: { kind: 'status', status: 400, message: 'Invalid parameter: messages' } });
    await emulatorControl('faults', { model: 'gpt-4o-mini', times: 1, fault: { kind: 'status', status: 400, message: 'Invalid parameter: messages' } });
    try {
      await testing.chat.newConversation();
      const before = await answered();
      await testing.chat.send('This one is refused', [], []);
      const answer = testing.chat.current!.turns.at(-1) as AssistantTurn;
      assert.equal(answer.status, 'error');
      assert.equal(answer.error?.status, 400);
      assert.equal(answer.fallbacks?.some((f) => f.kind !== 'breaker') ?? false, false);
      assert.equal((await answered()) - before, 1);
    } finally {
      await emulatorControl('faults', { clear: true });
    }
  });
});
