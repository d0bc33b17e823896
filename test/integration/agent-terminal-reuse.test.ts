// @vscode-specific: terminals and their shell integration, which VS Code reworked between 1.100 and 1.139.
import { strict as assert } from 'node:assert';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, until } from './helpers';

/**
 * Commands one after another take the terminal the last one left, in the sandbox and outside it:
 * a working day of commands does not pile terminals up (the soak bench counts them, and grew by
 * one a command when each sandboxed run opened a terminal of its own and never gave it back).
 */
describe('agent: terminals are reused from one command to the next', function () {
  this.timeout(120_000);
  const agent = () => vscode.workspace.getConfiguration('modelGateway.agent');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const ours = () => vscode.window.terminals.filter((t) => t.name.startsWith('Model Gateway agent')).map((t) => t.name);
  const RUNS = 4;

  before(async () => {
    await connectToEmulator();
    writeFileSync(join(root(), 'reuse.sh'), '#!/bin/sh\necho "reuse ran"\n');
    chmodSync(join(root(), 'reuse.sh'), 0o755);
    writeFileSync(join(root(), 'reuse-slow.sh'), '#!/bin/sh\necho "slow started"\nsleep 60\n');
    chmodSync(join(root(), 'reuse-slow.sh'), 0o755);
    // Outside the sandbox it runs unasked only when allowed.
    await agent().update('allowedCommands', ['./reuse.sh'], vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    for (const f of ['reuse.sh', 'reuse-slow.sh']) rmSync(join(root(), f), { force: true });
    for (const k of ['allowedCommands', 'sandbox.enabled']) await agent().update(k, undefined, vscode.ConfigurationTarget.Global);
  });

  /** Runs the command `RUNS` times, each in its own turn, and says the terminals after each run. */
  async function runs(placement: string): Promise<{ all: number[]; ours: string[][] }> {
    const { testing } = await api();
    const all: number[] = [];
    const names: string[][] = [];
    for (let i = 0; i < RUNS; i++) {
      await testing.chat.newConversation();
      await testing.chat.send('Run `./reuse.sh` please', [], []);
      const call = calls(testing.chat.current?.turns.at(-1) as AssistantTurn).find((c) => c.name === 'run_command')!;
      assert.equal(call.status, 'done', call.result);
      assert.equal(call.placement?.label, placement, call.result);
      assert.match(call.result ?? '', /reuse ran/);
      all.push(vscode.window.terminals.length);
      names.push(ours());
    }
    return { all, ours: names };
  }

  for (const sandboxed of [true, false])
    it(`${sandboxed ? 'in the sandbox' : 'outside it'}: ${RUNS} commands leave the terminals the first one left`, async () => {
      await agent().update('sandbox.enabled', sandboxed, vscode.ConfigurationTarget.Global);
      const r = await runs(sandboxed ? 'ran in the sandbox' : 'ran without a sandbox (allowed by your list)');
      assert.deepEqual(
        r.all,
        r.all.map(() => r.all[0]),
        `terminals after each command: ${r.all.join(', ')} (ours: ${JSON.stringify(r.ours)})`,
      );
      assert.deepEqual(r.ours.at(-1), r.ours[0]);
    });

  it('in the sandbox: a stopped command gives its terminal back; closing the terminal stops the command in it and the next takes a new one', async () => {
    const { testing } = await api();
    await agent().update('sandbox.enabled', true, vscode.ConfigurationTarget.Global);
    const sandboxTerminals = () => vscode.window.terminals.filter((t) => t.name === 'Model Gateway agent (sandbox)');
    const lastCall = () => calls(testing.chat.current?.turns.at(-1) as AssistantTurn).find((c) => c.name === 'run_command');
    const running = () => until('the command runs', () => lastCall()?.status === 'running', 20_000);
    await testing.chat.newConversation();
    await testing.chat.send('Run `./reuse.sh` please', [], []);
    assert.equal(sandboxTerminals().length, 1);

    await testing.chat.newConversation();
    const stopped = testing.chat.send('Run `./reuse-slow.sh` please', [], []);
    await running();
    await new Promise((r) => setTimeout(r, 1000));
    testing.chat.stop();
    await stopped;
    assert.match(lastCall()?.result ?? '', /stopped by the person/);
    assert.equal(sandboxTerminals().length, 1, 'the stopped command ran in the terminal there was, which stays');

    await testing.chat.newConversation();
    const closed = testing.chat.send('Run `./reuse-slow.sh` please', [], []);
    await running();
    await new Promise((r) => setTimeout(r, 1000));
    const closedAt = Date.now();
    sandboxTerminals()[0].dispose();
    await closed;
    assert.ok(Date.now() - closedAt < 10_000, 'closing the terminal stopped the command');
    await until('the closed terminal is gone', () => sandboxTerminals().length === 0, 5000);

    await testing.chat.newConversation();
    await testing.chat.send('Run `./reuse.sh` please', [], []);
    assert.equal(lastCall()?.status, 'done', lastCall()?.result);
    assert.equal(sandboxTerminals().length, 1, 'a new terminal for the next command');
  });
});
