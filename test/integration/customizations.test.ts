import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl, emulatorRequests } from './helpers';

/**
 * The workspace's custom agents, prompt files and skills, as a repository brings them: an agent
 * appears in the mode picker and narrows the tools to those it names; a prompt file is a `/`
 * command that sets its mode; a skill's name and description are in the prompt, its body reaches
 * the model only once `read_skill` read it, and read_skill reads nothing outside the skill's folder.
 */
describe('custom agents, prompt files and skills (.github/agents, .github/prompts, skills)', function () {
  this.timeout(120_000);
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const made = ['.github', '.claude', '.agents'];
  const files: Record<string, string> = {
    '.github/agents/reviewer.agent.md':
      "---\nname: Reviewer\ndescription: 'Reviews code: reads and navigates, never edits'\ntools: ['codebase', 'usages', 'problems']\nmodel: gpt-4o\n---\nYou are a strict reviewer. REVIEWER-INSTRUCTIONS-MARKER. Never propose edits.\n",
    '.github/chatmodes/legacy.chatmode.md':
      '---\ndescription: An older chat mode file\nmodel: GPT-4o (copilot)\ntools:\n  - readFile\n---\nLEGACY-MODE-MARKER\n',
    '.github/prompts/explain-module.prompt.md':
      '---\ndescription: Explain a module to a newcomer\nagent: ask\n---\nExplain what the module in the open file does, for someone new to this code.\n',
    '.github/skills/release-notes/SKILL.md':
      '---\nname: release-notes\ndescription: Writes release notes from the changes since the last tag\n---\nSKILL-BODY-MARKER: list the changes by kind, newest first; use template.md.\n',
    '.github/skills/release-notes/template.md': '## Changes\nTEMPLATE-MARKER\n',
    '.github/skills/release-notes/.env': 'TOKEN=sk-live-skill-secret\n',
    '.claude/skills/broken/SKILL.md': '---\nname: [unclosed\n---\nbody\n',
  };
  const lastBody = async (): Promise<string> => {
    const path = (await emulatorRequests())
      .reverse()
      .find((l) => / \/v1\/(chat\/completions|messages|responses)$/.test(l))!
      .split(' ')[1];
    return JSON.stringify(((await emulatorControl('last-request', { path })) as { body: unknown }).body);
  };
  const toolNames = (body: string): string[] =>
    ((JSON.parse(body) as { tools?: { name?: string; function?: { name: string } }[] }).tools ?? []).map((t) => t.function?.name ?? t.name ?? '').sort();

  before(async () => {
    await connectToEmulator();
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(join(root(), rel, '..'), { recursive: true });
      writeFileSync(join(root(), rel), text);
    }
    const { testing } = await api();
    // Read at once here; the next test checks that a change is noticed on its own (the file watcher).
    await testing.customizations.refresh();
    assert.equal(testing.customizations.agents.length, 2);
    assert.equal(testing.customizations.skills.length, 1, 'the broken SKILL.md is left out');
  });

  after(async () => {
    for (const d of made) rmSync(join(root(), d), { recursive: true, force: true });
    await (await api()).testing.chat.setMode('agent');
  });

  it('an .agent.md agent (and a .chatmode.md one) appears in the mode picker; picked, its instructions go in and only the tools it names are offered', async () => {
    const { testing } = await api();
    assert.deepEqual(
      testing.customizations.modes().map((m) => `${m.id}: ${m.name}`),
      ['custom:legacy: legacy', 'custom:reviewer: Reviewer'],
    );
    await testing.chat.setMode('custom:reviewer');
    assert.equal(testing.chat.mode, 'custom:reviewer');
    await testing.chat.newConversation();
    await testing.chat.send('Look over src/index.ts', [], []);
    const body = await lastBody();
    assert.match(body, /REVIEWER-INSTRUCTIONS-MARKER/);
    const offered = toolNames(body);
    for (const t of ['read_file', 'search_text', 'find_files', 'find_references', 'find_definition', 'get_problems', 'update_plan', 'read_skill'])
      assert.ok(offered.includes(t), `offers ${t}: ${offered.join(', ')}`);
    for (const t of offered) assert.ok(!/^(replace_in_file|create_file|run_command|run_task|rename_symbol)$/.test(t), `the reviewer is not offered ${t}`);
    assert.equal((testing.chat.current?.turns.at(-1) as AssistantTurn).mode, 'custom:reviewer');
    assert.equal((JSON.parse(body) as { model: string }).model, 'gpt-4o', 'the model the agent names, which the gateway lists');

    await testing.chat.setMode('custom:legacy');
    await testing.chat.newConversation();
    await testing.chat.send('What is in src/index.ts?', [], []);
    const legacy = await lastBody();
    assert.match(legacy, /LEGACY-MODE-MARKER/);
    assert.deepEqual(toolNames(legacy), ['read_file', 'read_skill', 'update_plan']);
    assert.notEqual((JSON.parse(legacy) as { model: string }).model, 'GPT-4o (copilot)', "a model the gateway does not list is not sent: the picker's stays");
    await testing.chat.setMode('agent');
  });

  it('a mode whose file is gone falls back to Agent: the next question is an Agent one', async () => {
    const { testing } = await api();
    await testing.chat.setMode('custom:reviewer');
    rmSync(join(root(), '.github/agents/reviewer.agent.md'));
    await testing.chat.newConversation();
    await testing.chat.send('What is in src/index.ts?', [], []);
    assert.equal((testing.chat.current?.turns.at(-1) as AssistantTurn).mode, undefined, 'an Agent-mode answer');
    assert.doesNotMatch(await lastBody(), /REVIEWER-INSTRUCTIONS-MARKER/);
    assert.ok(toolNames(await lastBody()).includes('replace_in_file'));
    assert.equal(testing.chat.mode, 'agent');
    writeFileSync(join(root(), '.github/agents/reviewer.agent.md'), files['.github/agents/reviewer.agent.md']);
    await testing.customizations.refresh();
    assert.equal(testing.customizations.agents.length, 2);
  });

  it('a .prompt.md file is a / command beside MCP prompts; used, it fills the input and switches to the mode it names', async () => {
    const { testing } = await api();
    await testing.chat.setMode('agent');
    assert.deepEqual(testing.customizations.promptItems('expl'), [
      { path: 'prompt-file:explain-module', name: 'explain-module — Explain a module to a newcomer' },
    ]);
    await testing.chat.usePrompt('prompt-file:explain-module');
    assert.equal(testing.chat.mode, 'ask');
    await testing.chat.setMode('agent');
  });

  it("a skill's name and description are in the prompt; its body reaches the model only after read_skill", async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await testing.chat.send('Hello', [], []);
    const first = await lastBody();
    assert.match(first, /release-notes: Writes release notes from the changes since the last tag/);
    assert.doesNotMatch(first, /SKILL-BODY-MARKER/);
    await testing.chat.send('Write the notes; use the release-notes skill', [], []);
    const turn = testing.chat.current?.turns.at(-1) as AssistantTurn;
    const call = turn.steps.flatMap((s) => s.toolCalls).find((c) => c.name === 'read_skill');
    assert.ok(call, 'read_skill was called');
    assert.match(call.result ?? '', /SKILL-BODY-MARKER/);
    assert.match(await lastBody(), /SKILL-BODY-MARKER/, 'the body went out after the read');
  });

  it('files another program writes into folders that did not exist are seen within 2 s (an agent, a prompt, a skill, a chat mode)', async () => {
    const { testing } = await api();
    const c = testing.customizations;
    // A git checkout or a script: another process, a folder that did not exist, no editor involved.
    const script = [
      "const fs = require('fs'); const path = require('path'); const root = process.argv[1];",
      "const put = (rel, text) => { fs.mkdirSync(path.join(root, rel, '..'), { recursive: true }); fs.writeFileSync(path.join(root, rel), text); };",
      "put('.agents/skills/outside-skill/SKILL.md', '---\\ndescription: Made by a script\\n---\\nbody\\n');",
      "put('.github/prompts/outside.prompt.md', '---\\ndescription: From a checkout\\n---\\nDo it.\\n');",
      "put('.github/chatmodes/outside.chatmode.md', '---\\ndescription: Old style\\n---\\nOUTSIDE\\n');",
    ].join('\n');
    const saw = async (what: string, test: () => boolean) => {
      const started = Date.now();
      while (!test()) {
        assert.ok(Date.now() - started < 2000, `${what} was not seen within 2 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return Date.now() - started;
    };
    rmSync(join(root(), '.agents'), { recursive: true, force: true });
    const { execFileSync } = await import('node:child_process');
    execFileSync(process.execPath, ['-e', script, root()], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    await saw('the skill in .agents/skills', () => c.skills.some((s) => s.name === 'outside-skill'));
    await saw('the prompt file', () => c.promptItems('outside').length === 1);
    await saw('the chat mode', () => c.modes().some((m) => m.id === 'custom:outside'));
    // Removed by another program: gone as quickly.
    rmSync(join(root(), '.agents'), { recursive: true, force: true });
    rmSync(join(root(), '.github/prompts/outside.prompt.md'));
    rmSync(join(root(), '.github/chatmodes/outside.chatmode.md'));
    await saw(
      'the removal',
      () => !c.skills.some((s) => s.name === 'outside-skill') && c.promptItems('outside').length === 0 && !c.modes().some((m) => m.id === 'custom:outside'),
    );
  });

  it("from the attacker's side: read_skill reads nothing outside the skill's folder, no secret file in it; an unreadable SKILL.md is left out", async () => {
    const { testing } = await api();
    const c = testing.customizations;
    assert.match(await c.readSkill({ name: 'release-notes', file: 'template.md' }), /TEMPLATE-MARKER/);
    await assert.rejects(c.readSkill({ name: 'release-notes', file: '../../agents/reviewer.agent.md' }), /not a file of the skill's folder/);
    await assert.rejects(c.readSkill({ name: 'release-notes', file: '/etc/passwd' }), /not a file of the skill's folder/);
    await assert.rejects(c.readSkill({ name: 'release-notes', file: '.env' }), /may hold credentials/);
    await assert.rejects(c.readSkill({ name: 'broken' }), /no skill named "broken"/);
  });
});
