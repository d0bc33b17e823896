// @profile-dependent: a turn's errors as each server types and words them.
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { config } from './config';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';

/** Every way a chat turn can fail ends as an error card with the question kept, and the panel free. */
describe('chat turn lifecycle in a real VS Code', function () {
  this.timeout(60_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  let storeDir = '';

  before(async () => {
    const { testing } = await api();
    await connectToEmulator();
    await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
    const base = testing.services.context.storageUri ?? testing.services.context.globalStorageUri;
    storeDir = join(base.fsPath, 'conversations');
  });

  after(async () => {
    await settings().update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
    await connectToEmulator();
  });

  const lastTurns = async () => {
    const { testing } = await api();
    const turns = testing.chat.current?.turns ?? [];
    return { user: turns.at(-2), answer: turns.at(-1) as AssistantTurn | undefined };
  };
  const storedText = () =>
    existsSync(storeDir)
      ? readdirSync(storeDir)
          .map((f) => readFileSync(join(storeDir, f), 'utf8'))
          .join('\n')
      : '';

  it('a 401 that echoes the key leaves it out of the error card, the stored conversation and the notices', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await emulatorControl('faults', {
      path: '/v1/chat/completions',
      fault: { kind: 'status', status: 401, message: `Incorrect API key provided: ${config.demoKey} (${config.demoKey.replace(/^sk-/, '')})` },
    });
    await testing.chat.send('Does my key work?', [], []);
    const { user, answer } = await lastTurns();
    assert.equal(user?.role === 'user' && user.text, 'Does my key work?');
    assert.equal(answer?.status, 'error');
    assert.equal(answer?.error?.kind, 'AuthenticationError');
    assert.match(answer?.error?.message ?? '', /Incorrect API key provided: «redacted»/);
    const bare = config.demoKey.replace(/^sk-/, '');
    for (const [where, text] of [
      ['the error card', JSON.stringify(answer)],
      ['the stored conversation', storedText()],
      ['the notices', JSON.stringify(testing.services.notices)],
    ] as const) {
      assert.ok(!text.includes(bare), `the key reached ${where}`);
    }
  });

  it('a base URL without a scheme ends the turn as an error card, not a turn left streaming', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await settings().update('baseUrl', 'gateway.example.com', vscode.ConfigurationTarget.Global);
    try {
      await testing.chat.send('Hello there', [], []);
      const { user, answer } = await lastTurns();
      assert.equal(user?.role === 'user' && user.text, 'Hello there');
      assert.equal(answer?.status, 'error');
      assert.match(answer?.error?.message ?? '', /not a valid URL/);
      const stored = JSON.parse(readFileSync(join(storeDir, `${testing.chat.current!.id}.json`), 'utf8')) as { turns: AssistantTurn[] };
      assert.equal(stored.turns.at(-1)?.status, 'error', 'on disk too');
    } finally {
      await connectToEmulator();
    }
  });

  it('a failing save ends the turn as an error, and the next question is answered', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    // The history folder becomes a file: every save fails.
    const aside = `${storeDir}.aside`;
    if (existsSync(storeDir)) renameSync(storeDir, aside);
    writeFileSync(storeDir, 'not a folder');
    try {
      await testing.chat.send('First question', [], []);
      const failed = await lastTurns();
      assert.equal(failed.user?.role === 'user' && failed.user.text, 'First question');
      assert.equal(failed.answer?.status, 'error');
    } finally {
      rmSync(storeDir, { force: true });
      if (existsSync(aside)) renameSync(aside, storeDir);
    }
    await testing.chat.send('Second question', [], []);
    const ok = await lastTurns();
    assert.equal(ok.user?.role === 'user' && ok.user.text, 'Second question');
    assert.equal(ok.answer?.status, 'done', `the panel was not left running: ${JSON.stringify(ok.answer?.error)}`);
  });

  it('Retry when the turn cannot start keeps the question and its answer', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await emulatorControl('faults', { path: '/v1/chat/completions', fault: { kind: 'status', status: 400, message: 'temporary refusal' } });
    await testing.chat.send('Keep me', [], []);
    assert.equal((await lastTurns()).answer?.status, 'error');
    const before = testing.chat.current!.turns.length;
    await testing.services.credentials.clear();
    try {
      await testing.chat.retry();
      assert.equal(testing.chat.current!.turns.length, before, 'nothing removed when the retry could not start');
      const kept = (await lastTurns()).user;
      assert.equal(kept?.role === 'user' && kept.text, 'Keep me');
    } finally {
      await connectToEmulator();
    }
    await testing.chat.retry();
    const after = await lastTurns();
    assert.equal(after.user?.role === 'user' && after.user.text, 'Keep me');
    assert.equal(after.answer?.status, 'done', JSON.stringify(after.answer?.error));
    assert.equal(testing.chat.current!.turns.length, before, 'the retried answer replaced the failed one');
  });

  it("new-api's own rate limit (429, no Retry-After, a window over the budget): an error card in our words and the gateway's, one request only", async function () {
    if (config.profile !== 'new-api') this.skip(); // reason: one-api has no model rate limiter
    const { testing } = await api();
    await testing.chat.newConversation();
    await emulatorControl('rate-limit', { minutes: 2, total: 1 });
    try {
      // Someone else's request (another window, a script) spent the window's one request.
      const spent = await fetch(`${config.emulatorUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${config.demoKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(spent.status, 200);
      const before = (await emulatorRequests()).filter((p) => p === 'POST /v1/chat/completions').length;
      await testing.chat.send('Am I limited?', [], []);
      const { user, answer } = await lastTurns();
      assert.equal(user?.role === 'user' && user.text, 'Am I limited?');
      assert.equal(answer?.status, 'error');
      assert.equal(answer?.error?.kind, 'RateLimitError');
      assert.equal(answer?.error?.retryAfterMs, 120_000, 'the wait the message names, for the countdown');
      assert.match(answer?.error?.message ?? '', /at most 1 requests in 2 min, failed ones included/);
      assert.match(answer?.error?.message ?? '', /您已达到总请求数限制：2分钟内最多请求1次/);
      const after = (await emulatorRequests()).filter((p) => p === 'POST /v1/chat/completions').length;
      assert.equal(after - before, 1, 'not retried: each early retry would count against the window');
    } finally {
      await emulatorControl('rate-limit', {});
    }
  });

  it('a wrong key with no model to pick still ends as an error card (AuthenticationError: Set API Key), the question kept', async () => {
    const { testing } = await api();
    await settings().update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
    await testing.services.credentials.setApiKey('sk-wrong-key-for-this-test-0000000000', testing.services.gatewayOrigin());
    try {
      await testing.chat.newConversation();
      await testing.chat.send('Hello, anyone there?', [], []);
      const { user, answer } = await lastTurns();
      assert.equal(user?.role === 'user' && user.text, 'Hello, anyone there?');
      assert.equal(answer?.status, 'error');
      assert.equal(answer?.error?.kind, 'AuthenticationError', answer?.error?.message);
    } finally {
      await connectToEmulator();
      await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
    }
  });

  it('a refused key is notified once however many parts meet it, and again after the credentials change', async () => {
    const { testing } = await api();
    const refusals = () => testing.services.notices.filter((n) => n.message.startsWith('Could not list the models') && /invalid/i.test(n.message)).length;
    const before = refusals();
    // Every model listing is refused meanwhile (background checks list models too); the model
    // picker never opens, so no command waits for a person.
    await emulatorControl('faults', {
      path: '/v1/models',
      times: 1000,
      fault: { kind: 'status', status: 401, message: 'invalid token: the key is not valid' },
    });
    try {
      await vscode.commands.executeCommand('modelGateway.models.setDefault');
      await vscode.commands.executeCommand('modelGateway.models.setDefault');
      assert.equal(refusals(), before + 1, 'the second one is not shown while the first is on screen');
      // Setting the key again (the likely fix) lets the error show once more if it is still there.
      await testing.services.credentials.setApiKey(config.demoKey, testing.services.gatewayOrigin());
      await vscode.commands.executeCommand('modelGateway.models.setDefault');
      assert.equal(refusals(), before + 2);
    } finally {
      await emulatorControl('reset');
    }
  });
});
