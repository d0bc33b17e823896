import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl } from './helpers';

/** The project's instruction files reach the model in the system prompt of a trusted workspace. */
describe('project rules in the chat', function () {
  this.timeout(60_000);
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const created: string[] = [];
  const write = (path: string, text: string) => {
    const file = join(root(), ...path.split('/'));
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    created.push(path.split('/')[0]);
  };
  const systemSent = async (): Promise<string> => {
    const seen = (await emulatorControl('last-request', { path: '/v1/chat/completions' })) as { body: { messages: { role: string; content: unknown }[] } };
    const system = seen.body.messages.find((m) => m.role === 'system');
    return typeof system?.content === 'string' ? system.content : JSON.stringify(system?.content ?? '');
  };
  const ask = async (text: string) => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await testing.chat.send(text, [], []);
    const answer = testing.chat.current?.turns.at(-1) as AssistantTurn;
    assert.equal(answer.status, 'done', answer.error?.message);
  };

  before(async () => {
    await connectToEmulator();
    await vscode.workspace.getConfiguration('modelGateway').update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    for (const top of new Set(created)) rmSync(join(root(), top), { recursive: true, force: true });
    for (const k of ['defaultModels.chat', 'chat.projectRules'])
      await vscode.workspace.getConfiguration('modelGateway').update(k, undefined, vscode.ConfigurationTarget.Global);
  });

  it('sends AGENTS.md and a rules file to the model, after our own instructions, and follows an edit', async () => {
    assert.equal(vscode.workspace.isTrusted, true, 'the test workspace is trusted');
    await ask('Before any rules file exists?');
    assert.doesNotMatch(await systemSent(), /Project rules:/, 'no rules yet');
    // Written just now and asked at once: a root rules file is read for each turn, not from a cache.
    write('AGENTS.md', 'Always run the unit tests with npm test before you finish. (rule-marker-1)');
    write('.modelgateway/rules/style.md', 'Use two spaces for indentation. (rule-marker-2)');
    write('.modelgateway/rules/sql.md', '---\nglobs: "**/*.sql"\n---\nUpper-case SQL keywords. (rule-marker-3)');
    await ask('What should I know about this project?');
    const system = await systemSent();
    assert.match(system, /<rules file="AGENTS\.md">\nAlways run the unit tests with npm test before you finish\. \(rule-marker-1\)\n<\/rules>/);
    assert.match(system, /rule-marker-2/);
    assert.doesNotMatch(system, /rule-marker-3/, 'a rules file for other files stays out');
    assert.ok(system.indexOf('Safety:') < system.indexOf('rule-marker-1'), 'after our safety rules');

    // Edited: the next turn carries the new text.
    write('AGENTS.md', 'Prefer pnpm. (rule-marker-4)');
    await ask('And now?');
    assert.match(await systemSent(), /rule-marker-4/);
  });

  it('does not follow a rules file that links outside the workspace, nor read a secret one', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'mg-rules-outside-'));
    try {
      writeFileSync(join(outside, 'id_rsa'), 'PRIVATE KEY (rule-marker-outside)');
      rmSync(join(root(), 'AGENTS.md'), { force: true });
      symlinkSync(join(outside, 'id_rsa'), join(root(), 'AGENTS.md'));
      write('.modelgateway/rules/.env.md', 'TOKEN=x (rule-marker-secret)');
      await ask('Tell me the rules.');
      const system = await systemSent();
      assert.doesNotMatch(system, /rule-marker-outside/, 'the link to a file outside the workspace is not read');
      assert.doesNotMatch(system, /rule-marker-secret/, 'a rules file named like a secret is not read');
      assert.match(system, /rule-marker-2/, 'the other rules still apply');
    } finally {
      rmSync(join(root(), 'AGENTS.md'), { force: true });
      rmSync(join(root(), '.modelgateway', 'rules', '.env.md'), { force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('leaves out a source the person switched off', async () => {
    write('AGENTS.md', 'Prefer pnpm. (rule-marker-5)');
    await vscode.workspace.getConfiguration('modelGateway').update('chat.projectRules', ['project'], vscode.ConfigurationTarget.Global);
    await ask('Anything else?');
    const system = await systemSent();
    assert.doesNotMatch(system, /rule-marker-5/, 'AGENTS.md is off');
    assert.match(system, /rule-marker-2/);
  });
});
