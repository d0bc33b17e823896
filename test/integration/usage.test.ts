// @profile-dependent: usage, logs and prices come from each server's own routes and records.
import { strict as assert } from 'node:assert';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import type { UsageReport } from '../../src/usage/core/report';
import { config } from './config';
import { api, connectToEmulator, runAnswering, until } from './helpers';

const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

/** Sum of the CSV's dollar column. */
function csvDollars(text: string): { rows: number; dollars: number } {
  const lines = text.trim().split(/\r?\n/);
  assert.equal(lines[0], 'date,model,requests,dollars');
  return { rows: lines.length - 1, dollars: lines.slice(1).reduce((n, l) => n + Number(l.split(',').at(-1)), 0) };
}

describe('spend and usage in a real VS Code', () => {
  before(async () => {
    await connectToEmulator();
    assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
    await vscode.workspace.getConfiguration('modelGateway').update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('modelGateway').update('defaultModels.chat', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("prices a chat answer the way the gateway bills it, and the Usage view's figures add up to what the balance lost", async () => {
    const { testing } = await api();
    const client = testing.services.client();
    const before = await vscode.commands.executeCommand<UsageReport | undefined>('modelGateway.usage.open');
    assert.ok(before && before.mode === 'full', 'the view opens with the access token: the whole picture');
    const balanceBefore = (await client.account.self()).balanceDollars;

    await testing.chat.newConversation();
    await testing.chat.send('Say hello in a few words', [], []);
    let answer = testing.chat.current!.turns.at(-1) as AssistantTurn;
    assert.equal(answer.status, 'done');
    if (config.profile === 'one-api') {
      // one-api publishes no prices: the cost is unknown (never $0) until the user sets a price.
      assert.deepEqual({ dollars: answer.cost?.dollars, source: answer.cost?.source }, { dollars: undefined, source: 'unknown' });
      // one-api bills cache reads in full: the user's price says so (cacheRead equal to input).
      await vscode.workspace
        .getConfiguration('modelGateway')
        .update('prices', { 'gpt-4o-mini': { input: 0.3, output: 1.2, cacheRead: 0.3 } }, vscode.ConfigurationTarget.Global);
      await testing.chat.send('And once more', [], []);
      answer = testing.chat.current!.turns.at(-1) as AssistantTurn;
      await vscode.workspace.getConfiguration('modelGateway').update('prices', undefined, vscode.ConfigurationTarget.Global);
    }
    // gpt-4o-mini: $0.30 per million input tokens, $1.20 output (new-api's /api/pricing, or the
    // setting); the prompt tokens the gateway reports as cached cost a tenth on new-api (its cache ratio).
    const cachedPrice = config.profile === 'one-api' ? 0.3 : 0.03;
    const expected = ((answer.usage.input - answer.usage.cacheRead) * 0.3 + answer.usage.cacheRead * cachedPrice + answer.usage.output * 1.2) / 1e6;
    assert.ok(answer.cost?.dollars !== undefined && Math.abs(answer.cost.dollars - expected) < 1e-9, JSON.stringify(answer.cost));
    assert.equal(answer.cost.source, config.profile === 'one-api' ? 'settings' : 'gateway');
    await client.imagegen.v3.generate({ prompt: 'a paper boat', rendering_speed: 'TURBO' });

    const after = await vscode.commands.executeCommand<UsageReport | undefined>('modelGateway.usage.open');
    assert.ok(after);
    const lost = balanceBefore - (await client.account.self()).balanceDollars;
    assert.ok(lost > 0, 'the calls cost money');
    assert.ok(
      Math.abs(after.todayDollars - before.todayDollars - lost) < 1e-6,
      `today grew by ${after.todayDollars - before.todayDollars}, the balance lost ${lost}`,
    );
    assert.ok(after.series.some((s) => s.name === 'gpt-4o-mini' || s.name === 'Other'));
    // What the chat estimated is what the gateway billed for that call (to one quota unit): the
    // call found in the gateway's log by its tokens (the newest first; not the view's dearest ten,
    // where media calls of other tests can leave it out).
    const log = await client.account.usage.logs({ start: 0, end: 2 ** 31 - 1 }, { maxRows: 200 });
    const billed = log.items.find((c) => c.model === 'gpt-4o-mini' && c.promptTokens === answer.usage.input && c.completionTokens === answer.usage.output);
    assert.ok(billed, `the answer's call is in the gateway's log: ${JSON.stringify(log.items.slice(0, 5))} vs ${JSON.stringify(answer.usage)}`);
    assert.ok(Math.abs(answer.cost.dollars - billed.dollars) < 1e-5, `${answer.cost.dollars} estimated, ${billed.dollars} billed`);

    const target = vscode.Uri.file(join(folder(), 'usage-integration.csv'));
    try {
      const written = await testing.usage.exportCsv(target);
      assert.equal(written?.fsPath, target.fsPath);
      const csv = csvDollars(readFileSync(target.fsPath, 'utf8'));
      assert.equal(csv.rows, after.rows.length);
      assert.ok(Math.abs(csv.dollars - after.totalDollars) < 1e-4, `CSV ${csv.dollars} vs shown ${after.totalDollars}`);
    } finally {
      rmSync(target.fsPath, { force: true });
    }
  });

  it('marks the cost of an answer whose usage the gateway did not send as an estimate', async () => {
    const { testing } = await api();
    const settings = vscode.workspace.getConfiguration('modelGateway');
    // legacy-upstream-emu streams no usage, and the gateway has no price for it: the user sets one.
    await settings.update('defaultModels.chat', 'legacy-upstream-emu', vscode.ConfigurationTarget.Global);
    await settings.update('prices', { 'legacy-upstream-emu': { input: 1, output: 2 } }, vscode.ConfigurationTarget.Global);
    try {
      await testing.chat.newConversation();
      await testing.chat.send('Say hello in a few words', [], []);
      const answer = testing.chat.current!.turns.at(-1) as AssistantTurn;
      assert.equal(answer.model, 'legacy-upstream-emu');
      assert.equal(answer.usage.estimated, true);
      assert.deepEqual({ estimated: answer.cost?.estimated, source: answer.cost?.source }, { estimated: true, source: 'settings' });
      assert.ok(Math.abs(answer.cost!.dollars! - (answer.usage.input + answer.usage.output * 2) / 1e6) < 1e-12);
    } finally {
      await settings.update('prices', undefined, vscode.ConfigurationTarget.Global);
      await settings.update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
    }
  });

  it("shows today's spend in the status bar, warns once when the balance runs low, and with only an API key says the view has the key's totals", async () => {
    const { testing } = await api();
    const state = await testing.status.refresh();
    assert.ok(state.kind === 'connected' && state.today && state.today.dollars > 0, JSON.stringify(state));
    await vscode.workspace.getConfiguration('modelGateway').update('usage.showTodayInStatusBar', false, vscode.ConfigurationTarget.Global);
    try {
      const hidden = await testing.status.refresh();
      assert.ok(hidden.kind === 'connected' && hidden.today === undefined, 'the setting hides it');
    } finally {
      await vscode.workspace.getConfiguration('modelGateway').update('usage.showTodayInStatusBar', undefined, vscode.ConfigurationTarget.Global);
    }
    // Under the low-balance level: one warning (once a day), offering the Usage view.
    await vscode.workspace.getConfiguration('modelGateway').update('lowBalanceWarningDollars', 1_000_000, vscode.ConfigurationTarget.Global);
    try {
      // The setting change itself refreshes the status bar in the background: count this warning's
      // notices, whichever refresh gave it, rather than those after a moment that may be too late.
      const lowWarnings = () =>
        testing.services.notices.filter(
          (n) => n.level === 'warning' && /The gateway balance is \$[\d.]+, under your warning level of \$1000000\.00/.test(n.message),
        );
      await testing.status.refresh();
      await until('the low-balance warning', () => lowWarnings().length > 0);
      await testing.status.refresh();
      await testing.status.refresh();
      assert.equal(lowWarnings().length, 1, JSON.stringify(lowWarnings()));
    } finally {
      await vscode.workspace.getConfiguration('modelGateway').update('lowBalanceWarningDollars', undefined, vscode.ConfigurationTarget.Global);
    }
    await testing.services.credentials.setAccessToken('', undefined);
    try {
      const keyOnly = await testing.usage.reload();
      assert.ok(keyOnly);
      assert.equal(keyOnly.key?.unlimited, true, 'the demo key has no limit');
      assert.ok((keyOnly.key?.usedDollars ?? 0) > 0);
      if (config.profile === 'new-api') {
        // new-api keeps a log per key: the key's own spend per day and calls, no access token needed.
        assert.equal(keyOnly.mode, 'full');
        assert.equal(keyOnly.scope, 'key');
        assert.equal(keyOnly.keyName, 'demo');
        assert.ok((keyOnly.recentCalls?.length ?? 0) > 0 && keyOnly.totalDollars > 0);
        assert.match(keyOnly.source, /This API key's calls/);
      } else {
        assert.equal(keyOnly.mode, 'key-only', 'one-api: the billing routes only');
        assert.match(keyOnly.source, /Set the system access token/);
      }
    } finally {
      assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
    }
  });
});
