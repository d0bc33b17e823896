// @vscode-specific: terminals and their shell integration, which VS Code reworked between 1.100 and 1.139.
import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, until } from './helpers';

/**
 * The run_command tool in a real extension host: the policy, the approval in the chat's bar, the
 * run in a VS Code terminal, Stop. The commands are shell scripts in the workspace, so the test
 * depends on no program being on the terminal's PATH.
 */
describe('agent: commands in the terminal, without a sandbox', function () {
  this.timeout(120_000);
  const agent = () => vscode.workspace.getConfiguration('modelGateway.agent');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const script = (name: string, body: string) => {
    const p = join(root(), name);
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
  };
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const lastTurn = async () => (await api()).testing.chat.current?.turns.at(-1) as AssistantTurn;

  before(async () => {
    await connectToEmulator();
    // The approvals where no sandbox works (macOS, Windows, a container without namespaces): the
    // sandbox is off for this suite; agent-sandbox.test.ts has it on.
    await vscode.workspace.getConfiguration('modelGateway.agent.sandbox').update('enabled', false, vscode.ConfigurationTarget.Global);
    script('check.sh', 'echo "checking in $(pwd)"\necho "3 passing"\ntouch check-ran.marker\nexit 0');
    script('fail.sh', 'echo "1 failing" >&2\nexit 2');
    script('long.sh', 'echo "long started"\nsleep 60\ntouch long-finished.marker');
  });

  after(async () => {
    for (const f of ['check.sh', 'fail.sh', 'long.sh', 'check-ran.marker', 'long-finished.marker']) rmSync(join(root(), f), { force: true });
    for (const k of ['allowedCommands', 'deniedCommands', 'autoApprove', 'commandTimeoutSeconds', 'sandbox.enabled'])
      await agent().update(k, undefined, vscode.ConfigurationTarget.Global);
    const { testing } = await api();
    await testing.agent.setPaused(false);
  });

  beforeEach(() => rmSync(join(root(), 'check-ran.marker'), { force: true }));

  it('asks with the exact line and folder; run after Run in a terminal, with the output and exit code in the result and the answer', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const sent = testing.chat.send('Run `./check.sh` please', [], []);
    await until('the command waits for approval', () => testing.chat.pendingApprovals().length > 0, 20_000);
    const [asked] = testing.chat.pendingApprovals();
    assert.equal(asked.kind, 'command');
    assert.equal(asked.action, './check.sh');
    assert.equal(asked.path, 'workspace root');
    assert.match(asked.reason ?? '', /not in the allowed commands/);
    assert.equal(asked.always, './check.sh', 'a plain command can be always allowed');
    assert.equal(existsSync(join(root(), 'check-ran.marker')), false, 'nothing ran before the yes');
    assert.equal(calls(await lastTurn()).at(-1)?.status, 'awaiting-approval');
    testing.chat.decide(asked.callId, true);
    await sent;
    const turn = await lastTurn();
    const call = calls(turn).find((c) => c.name === 'run_command')!;
    assert.equal(call.status, 'done', call.result);
    assert.match(call.result ?? '', /^\$ \.\/check\.sh\n\(in the workspace root; exit code 0; [\d.]+ s\)\n/);
    assert.match(call.result ?? '', new RegExp(`checking in ${root().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(call.result ?? '', /3 passing/);
    assert.ok(existsSync(join(root(), 'check-ran.marker')), 'the script ran');
    assert.ok(
      vscode.window.terminals.some((t) => t.name === 'Model Gateway agent'),
      'it ran in a terminal the person can see',
    );
    // Both VS Codes have the shell-integration API; bash here activates it, so output and exit code come from it.
    assert.equal(testing.agent.terminals.lastRun?.via, 'shell-integration');
    // Reported with the run (npm run bench -- agent measures the process path): approval to first output, a new terminal included.
    const metrics = ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {});
    if (testing.agent.terminals.lastRun?.firstOutputMs !== undefined) metrics.terminalFirstOutputMs = testing.agent.terminals.lastRun.firstOutputMs;
    assert.match(turn.steps.at(-1)?.text ?? '', /`\.\/check\.sh` succeeded \(exit code 0\): “3 passing”/);
  });

  it('Reject runs nothing, and the model is told so', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const sent = testing.chat.send('Run `./check.sh` please', [], []);
    await until('the command waits for approval', () => testing.chat.pendingApprovals().length > 0, 20_000);
    testing.chat.decide(testing.chat.pendingApprovals()[0].callId, false);
    await sent;
    const call = calls(await lastTurn()).find((c) => c.name === 'run_command')!;
    assert.equal(call.status, 'rejected');
    assert.match(call.result ?? '', /rejected running `\.\/check\.sh`; it was not run/);
    assert.equal(existsSync(join(root(), 'check-ran.marker')), false);
  });

  it('a failing command comes back with its exit code and error output', async () => {
    const { testing } = await api();
    await agent().update('allowedCommands', ['./fail.sh'], vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    await testing.chat.send('Run `./fail.sh` please', [], []);
    const call = calls(await lastTurn()).find((c) => c.name === 'run_command')!;
    assert.equal(call.status, 'error');
    assert.match(call.result ?? '', /exit code 2/);
    assert.match(call.result ?? '', /1 failing/);
  });

  it('an allowed command runs unasked; "Always allow" adds a line to the user list; pausing makes it ask again', async () => {
    const { testing } = await api();
    await agent().update('allowedCommands', [], vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const first = testing.chat.send('Run `./check.sh` please', [], []);
    await until('asked the first time', () => testing.chat.pendingApprovals().length > 0, 20_000);
    testing.chat.decide(testing.chat.pendingApprovals()[0].callId, true, true);
    await first;
    await until('always allowed in the user settings', () => (agent().inspect<string[]>('allowedCommands')?.globalValue ?? []).includes('./check.sh'), 5000);
    assert.deepEqual(testing.agent.unasked(), { paused: false, parts: ['reads', '1 allowed command'] });

    rmSync(join(root(), 'check-ran.marker'), { force: true });
    let asked = false;
    const watch = setInterval(() => (asked ||= testing.chat.pendingApprovals().length > 0), 10);
    await testing.chat.send('Run `./check.sh` please', [], []);
    clearInterval(watch);
    assert.equal(asked, false, 'no approval was asked for');
    assert.equal(calls(await lastTurn()).find((c) => c.name === 'run_command')?.status, 'done');
    assert.ok(existsSync(join(root(), 'check-ran.marker')));

    await testing.agent.setPaused(true);
    assert.deepEqual(testing.agent.unasked(), { paused: true, parts: [] });
    const paused = testing.chat.send('Run `./check.sh` please', [], []);
    await until('asked while paused', () => testing.chat.pendingApprovals().length > 0, 20_000);
    assert.match(testing.chat.pendingApprovals()[0].reason ?? '', /paused/);
    testing.chat.decide(testing.chat.pendingApprovals()[0].callId, false);
    await paused;
    await testing.agent.setPaused(false);
  });

  it("from the attacker's side: an allowed command asks when an argument reaches outside the workspace or at a secret file", async () => {
    const { testing } = await api();
    await agent().update('allowedCommands', ['cat'], vscode.ConfigurationTarget.Global);
    for (const [line, why] of [
      ['cat /etc/hostname', /"\/etc\/hostname" names a path outside the workspace/],
      ['cat ../../x.txt', /climbs out of the workspace/],
      ['cat .env', /may hold secrets/],
    ] as const) {
      await testing.chat.newConversation();
      const sent = testing.chat.send(`Run \`${line}\` please`, [], []);
      await until(`asked for ${line}`, () => testing.chat.pendingApprovals().length > 0, 20_000);
      const asked = testing.chat.pendingApprovals()[0];
      assert.equal(asked.action, line);
      assert.match(asked.reason ?? '', why);
      assert.equal(asked.always, undefined, 'no "Always allow" for such a line');
      testing.chat.decide(asked.callId, false);
      await sent;
    }
    await agent().update('allowedCommands', [], vscode.ConfigurationTarget.Global);
  });

  it('a denied command is refused without asking, even allowed; a workspace can add to the deny list but not allow', async () => {
    const { testing } = await api();
    await agent().update('allowedCommands', ['./check.sh', 'sudo'], vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    await testing.chat.send('Run `sudo ./check.sh` please', [], []);
    let call = calls(await lastTurn()).find((c) => c.name === 'run_command')!;
    assert.equal(call.status, 'error');
    assert.match(call.result ?? '', /^Refused, not run: "sudo" is on the list of commands never run/);

    await agent().update('deniedCommands', ['./check.sh'], vscode.ConfigurationTarget.Workspace);
    try {
      await testing.chat.send('Run `./check.sh` please', [], []);
      call = calls(await lastTurn()).find((c) => c.name === 'run_command')!;
      assert.match(call.result ?? '', /^Refused, not run/);
      assert.equal(existsSync(join(root(), 'check-ran.marker')), false);
      // The workspace's entry adds to the defaults; it does not replace them.
      await testing.chat.send('Run `git push origin main` please', [], []);
      assert.match(calls(await lastTurn()).find((c) => c.name === 'run_command')?.result ?? '', /"git push" is on the list/);
    } finally {
      await agent().update('deniedCommands', undefined, vscode.ConfigurationTarget.Workspace);
    }
    // The allow list is a user setting only: VS Code does not even take a workspace value.
    await assert.rejects(Promise.resolve(agent().update('allowedCommands', ['./long.sh'], vscode.ConfigurationTarget.Workspace)));
  });

  it('Stop ends a long command (its terminal goes; nothing after it runs), and so does the timeout', async () => {
    const { testing } = await api();
    await agent().update('allowedCommands', ['./long.sh'], vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const sent = testing.chat.send('Run `./long.sh` please', [], []);
    await until('the command runs', async () => calls(await lastTurn()).some((c) => c.name === 'run_command' && c.status === 'running'), 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    const stoppedAt = Date.now();
    testing.chat.stop();
    await sent;
    assert.ok(Date.now() - stoppedAt < 10_000, 'stopped within seconds');
    const turn = await lastTurn();
    assert.equal(turn.status, 'stopped');
    assert.match(calls(turn).find((c) => c.name === 'run_command')?.result ?? '', /stopped by the person/);

    await agent().update('commandTimeoutSeconds', 5, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    await testing.chat.send('Run `./long.sh` please', [], []);
    const timed = calls(await lastTurn()).find((c) => c.name === 'run_command')!;
    assert.match(timed.result ?? '', /stopped after the 5 s timeout/);
    assert.match(timed.result ?? '', /long started/);
    assert.equal(existsSync(join(root(), 'long-finished.marker')), false);
  });
});
