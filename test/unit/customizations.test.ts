import { strict as assert } from 'node:assert';
import { parseAgent, parsePrompt, parseSkill, skillsSection, splitFrontMatter, toolsOfAgent } from '../../src/customization/core/files';
import type { ToolDefinition } from '../../src/tools/workspaceTools';

const def = (name: string, kind: 'read' | 'write' = 'read'): ToolDefinition => ({
  name,
  kind,
  description: '',
  parameters: { type: 'object', properties: {}, required: [] },
});

describe('customization files: agents, prompts, skills', () => {
  it('reads YAML front matter as VS Code writes it (quoted strings, flow and block lists, a folded description)', () => {
    const a = parseAgent(
      '.github/agents/review.agent.md',
      "---\nname: 'Code Reviewer'\ndescription: >\n  Reviews the change,\n  never edits\ntools: [\"codebase\", 'usages']\nmodel: GPT-4o (copilot)\n---\nBe strict.\n",
    );
    assert.ok(!('error' in a));
    assert.equal(a.id, 'custom:review');
    assert.equal(a.name, 'Code Reviewer');
    assert.equal(a.description, 'Reviews the change, never edits');
    assert.deepEqual(a.tools, ['codebase', 'usages']);
    assert.equal(a.model, 'GPT-4o (copilot)');
    assert.equal(a.instructions, 'Be strict.');
    const legacy = parseAgent('.github/chatmodes/old.chatmode.md', '---\ntools:\n  - readFile\n  - problems\n---\nOld.');
    assert.ok(!('error' in legacy) && legacy.id === 'custom:old' && legacy.name === 'old');
    assert.deepEqual(!('error' in legacy) && legacy.tools, ['readFile', 'problems']);
    const noFront = parseAgent('.github/agents/plain.agent.md', 'Just instructions.');
    assert.ok(!('error' in noFront) && noFront.tools === undefined, 'no tools field: every tool of Agent mode');
  });

  it('reports a file it cannot use instead of guessing', () => {
    assert.match(splitFrontMatter('---\nname: [unclosed\n---\nbody').error ?? '', /not valid YAML/);
    assert.match((parseSkill('.claude/skills/x/SKILL.md', '---\nname: x\n---\nbody') as { error: string }).error, /needs a description/);
    assert.match((parsePrompt('.github/prompts/empty.prompt.md', '---\ndescription: d\n---\n') as { error: string }).error, /empty/);
    assert.match((parseAgent('.github/agents/a b!.agent.md', 'x') as { error: string }).error, /not a usable agent name/);
  });

  it("maps VS Code's tool names to this chat's; an MCP server's name keeps its tools; the plan and skills always stay; unknown names are reported", () => {
    const defs = [
      'read_file',
      'search_text',
      'find_files',
      'replace_in_file',
      'run_command',
      'find_references',
      'get_problems',
      'update_plan',
      'read_skill',
      'github__list_issues',
      'github__create_issue',
      'fs__read',
    ].map((n) => def(n, /replace|run|create/.test(n) ? 'write' : 'read'));
    const { kept, unknown } = toolsOfAgent(['codebase', '#problems', 'github/*', 'fetch'], defs);
    assert.deepEqual(
      kept.map((d) => d.name),
      ['read_file', 'search_text', 'find_files', 'get_problems', 'update_plan', 'read_skill', 'github__list_issues', 'github__create_issue'],
    );
    assert.deepEqual(unknown, ['fetch']);
    assert.deepEqual(
      toolsOfAgent(['run_command'], defs).kept.map((d) => d.name),
      ['run_command', 'update_plan', 'read_skill'],
      "this chat's own names work too",
    );
    assert.deepEqual(
      toolsOfAgent(
        ['editFiles'],
        defs.filter((d) => d.kind === 'read'),
      ).kept.map((d) => d.name),
      ['update_plan', 'read_skill'],
      'a name cannot add a tool the mode does not offer',
    );
  });

  it("VS Code 1.139's renamed tools and sets work under the new names and the old ones", () => {
    const all = [
      'read_file',
      'list_dir',
      'find_files',
      'search_text',
      'semantic_search',
      'get_problems',
      'find_references',
      'find_definition',
      'workspace_symbols',
      'document_symbols',
      'rename_symbol',
      'create_file',
      'replace_in_file',
      'run_command',
      'run_task',
      'update_plan',
      'read_skill',
    ];
    const defs = [...all.map((n) => def(n, /create|replace|rename|run_/.test(n) ? 'write' : 'read')), def('search__query')];
    const kept = (names: string[]) =>
      toolsOfAgent(names, defs)
        .kept.map((d) => d.name)
        .filter((n) => n !== 'update_plan' && n !== 'read_skill');
    const navigation = ['find_references', 'find_definition', 'workspace_symbols', 'document_symbols'];
    // What VS Code 1.139 suggests for `usages`, and the old name: the same tools.
    assert.deepEqual(kept(['vscodeGeneral/usages']), navigation);
    assert.deepEqual(kept(['usages']), navigation);
    assert.deepEqual(kept(['search/usages']), navigation);
    assert.deepEqual(kept(['read/problems']), ['get_problems']);
    assert.deepEqual(kept(['vscodeGeneral/rename']), ['rename_symbol']);
    assert.deepEqual(kept(['edit/editFiles']), ['create_file', 'replace_in_file']);
    assert.deepEqual(kept(['execute/runInTerminal', 'runCommands/getTerminalOutput']), ['run_command']);
    assert.deepEqual(kept(['vscodeTasks/runTask']), ['run_task']);
    assert.deepEqual(kept(['runTasks/runTask']), ['run_task']);
    assert.deepEqual(kept(['search/readFile']), ['read_file']);
    assert.deepEqual(kept(['todo']), [], 'update_plan is always kept');
    assert.deepEqual(kept(['vscodeGeneral']), ['find_references', 'find_definition', 'workspace_symbols', 'document_symbols', 'rename_symbol']);
    assert.deepEqual(kept(['vscodeGeneral/*']), ['find_references', 'find_definition', 'workspace_symbols', 'document_symbols', 'rename_symbol']);
    // An MCP server named like a VS Code set keeps its `server/*`.
    assert.deepEqual(kept(['search/*']), ['search__query']);
    assert.deepEqual(
      toolsOfAgent(['web/fetch', 'vscodeBrowser/readPage'], defs).unknown,
      ['web/fetch', 'vscodeBrowser/readPage'],
      'tools this chat does not have are reported',
    );
  });

  it('a prompt file names its mode by `agent` (or the older `mode`); skills go into the prompt by name and description only', () => {
    const p = parsePrompt('.github/prompts/explain.prompt.md', '---\ndescription: Explain\nmode: ask\n---\nExplain it.');
    assert.ok(!('error' in p) && p.name === 'explain' && p.mode === 'ask' && p.body === 'Explain it.');
    const s = parseSkill('.github/skills/notes/SKILL.md', '---\nname: release-notes\ndescription: Writes release notes\n---\nTHE BODY');
    assert.ok(!('error' in s) && s.dir === '.github/skills/notes');
    const section = skillsSection([s]);
    assert.match(section, /- release-notes: Writes release notes/);
    assert.doesNotMatch(section, /THE BODY/);
    assert.equal(skillsSection([]), '');
  });
});
