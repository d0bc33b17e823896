import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, until } from './helpers';

/**
 * run_command in the sandbox, in a real extension host (bubblewrap on this machine; CI installs
 * it): what runs unasked, where it may write, what it cannot read, and which settings a cloned
 * repository cannot use to widen it.
 */
describe('agent: commands in the sandbox', function () {
  this.timeout(120_000);
  const sandbox = () => vscode.workspace.getConfiguration('modelGateway.agent.sandbox');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const lastCall = async () => calls((await api()).testing.chat.current?.turns.at(-1) as AssistantTurn).find((c) => c.name === 'run_command')!;
  const created = ['sandboxed.sh', 'sandbox-ran.marker', '.env.sandbox-test', 'reach.sh'];
  let site: ReturnType<typeof createServer>;
  const reached: string[] = [];

  before(async () => {
    await connectToEmulator();
    const script = (name: string, body: string) => {
      writeFileSync(join(root(), name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(root(), name), 0o755);
    };
    script(
      'sandboxed.sh',
      'echo "in $(pwd)"\ntouch sandbox-ran.marker\necho "secret: [$(cat .env.sandbox-test)]"\necho planted >> "$HOME/.model-gateway-sandbox-test"; echo "home write: $?"',
    );
    writeFileSync(join(root(), '.env.sandbox-test'), 'TOKEN=from-the-workspace-env\n');
    site = createServer((req, res) => {
      reached.push(req.url ?? '');
      res.end('pong\n');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    script('reach.sh', `curl -fsS http://127.0.0.1:${(site.address() as AddressInfo).port}/leak`);
  });

  after(async () => {
    for (const f of created) rmSync(join(root(), f), { force: true });
    for (const target of [vscode.ConfigurationTarget.Global, vscode.ConfigurationTarget.Workspace])
      for (const k of ['enabled', 'runUnasked', 'allowedHosts']) await sandbox().update(k, undefined, target);
    site.close();
  });

  it('a command runs in it without a question: it writes the workspace, reads secret files as empty, and cannot write the home', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    let asked = false;
    const watch = setInterval(() => (asked ||= testing.chat.pendingApprovals().length > 0), 10);
    await testing.chat.send('Run `./sandboxed.sh` please', [], []);
    clearInterval(watch);
    assert.equal(asked, false, 'no question');
    const call = await lastCall();
    assert.equal(call.status, 'done', call.result);
    assert.deepEqual(call.placement, { sandboxed: true, label: 'ran in the sandbox' });
    assert.ok(existsSync(join(root(), 'sandbox-ran.marker')), 'the workspace is writable');
    assert.match(call.result ?? '', /secret: \[\]/, 'the workspace secret file reads empty');
    assert.doesNotMatch(call.result ?? '', /from-the-workspace-env/);
    assert.match(call.result ?? '', /home write: [1-9]/);
    assert.equal(existsSync(join(process.env.HOME ?? '/root', '.model-gateway-sandbox-test')), false, 'nothing written in the home');
    assert.ok(
      vscode.window.terminals.some((t) => t.name === 'Model Gateway agent (sandbox)'),
      'it ran in a terminal the person can see',
    );
    assert.deepEqual((await api()).testing.agent.unasked(), { paused: false, parts: ['reads', 'commands in the sandbox'] });
  });

  it("from the attacker's side: a repository's settings cannot turn it off, run unasked, or open hosts", async () => {
    const { testing } = await api();
    // The person wants every command asked; the cloned repository says otherwise.
    await sandbox().update('runUnasked', false, vscode.ConfigurationTarget.Global);
    await sandbox().update('enabled', false, vscode.ConfigurationTarget.Workspace);
    await sandbox().update('runUnasked', true, vscode.ConfigurationTarget.Workspace);
    await sandbox().update('allowedHosts', ['127.0.0.1'], vscode.ConfigurationTarget.Workspace);
    await testing.chat.newConversation();
    const sent = testing.chat.send('Run `./reach.sh` please', [], []);
    await until('asked, as the person wants', () => testing.chat.pendingApprovals().length > 0, 20_000);
    const [first] = testing.chat.pendingApprovals();
    assert.equal(first.place, 'sandbox', 'still in the sandbox');
    assert.equal(first.network, undefined);
    testing.chat.decide(first.callId, true);
    // It fails without the network, and asks for exactly the host it wanted: No.
    const second = await until('asked for the network', () => testing.chat.pendingApprovals().find((a) => a.network), 20_000);
    assert.deepEqual(second.network, ['127.0.0.1']);
    testing.chat.decide(second.callId, false);
    await sent;
    const call = await lastCall();
    assert.equal(call.status, 'error');
    assert.match(call.result ?? '', /the person did not open it/);
    assert.deepEqual(reached, [], 'the repository’s allowedHosts opened nothing');
  });
});
