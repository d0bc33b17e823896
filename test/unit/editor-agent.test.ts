import { strict as assert } from 'node:assert';
import { editProblemsText, editReport, introducedBy, SettleClock, type Diagnosis } from '../../src/editor/core/problems';
import { identifierAt, locationsText } from '../../src/editor/core/definitions';
import { parsePlan, planSummary } from '../../src/runtime/core/plan';
import { toolsForMode } from '../../src/runtime/core/modes';
import { TOOL_DEFINITIONS } from '../../src/tools/workspaceTools';
import { UPDATE_PLAN } from '../../src/runtime/core/plan';
import { EDITOR_READ_TOOLS } from '../../src/editor/core/definitions';
import { requestSteps } from '../emulator/editor-agent';
import { applyChanges, newNameProblem, renameDone } from '../../src/editor/core/rename';
import { distinctProblems, findTask, taskCommandLine, taskListText, taskResultText } from '../../src/editor/core/tasks';

const d = (line: number, message: string, severity: Diagnosis['severity'] = 'error', path = 'src/a.ts'): Diagnosis => ({
  path,
  line,
  severity,
  message,
  source: 'ts',
  code: '2304',
});

describe('editor: problems an edit introduced', () => {
  it('a problem that only moved (an edit above it) is not new; a second copy of the same message is', () => {
    const before = [d(3, "Cannot find name 'x'.")];
    assert.deepEqual(introducedBy(before, [d(5, "Cannot find name 'x'.")]), []);
    assert.deepEqual(
      introducedBy(before, [d(5, "Cannot find name 'x'."), d(9, "Cannot find name 'x'.")]).map((p) => p.line),
      [9],
    );
  });

  it('errors come before warnings; information and hints are never reported as introduced', () => {
    const got = introducedBy([], [d(1, 'unused', 'warning'), d(8, 'bad type'), d(2, 'a hint', 'hint'), d(4, 'fyi', 'info')]);
    assert.deepEqual(
      got.map((p) => `${p.severity}:${p.line}`),
      ['error:8', 'warning:1'],
    );
  });

  it('the report caps what it names, counts the fixed ones, and names other files whose errors grew', () => {
    const many = Array.from({ length: 14 }, (_, i) => d(i + 1, `problem ${i}`));
    const { report } = editReport({
      before: new Map([
        ['src/a.ts', [d(1, 'old one')]],
        ['src/b.ts', [d(1, 'b old')]],
      ]),
      after: new Map([
        ['src/a.ts', many],
        ['src/b.ts', [d(1, 'b old'), d(2, 'b new', 'error', 'src/b.ts'), d(3, 'b warn', 'warning', 'src/b.ts')]],
        ['src/c.ts', [d(1, 'c new', 'error', 'src/c.ts')]],
      ]),
      edited: ['src/a.ts'],
      waitedMs: 812.4,
      settled: 'diagnostics',
    });
    assert.equal(report.introduced.length, 10);
    assert.equal(report.more, 4);
    assert.equal(report.fixed, 1);
    assert.deepEqual(report.elsewhere, [
      { path: 'src/b.ts', errors: 1 },
      { path: 'src/c.ts', errors: 1 },
    ]);
    assert.equal(report.waitedMs, 812);
    const text = editProblemsText(report);
    assert.match(text, /^Problems this edit introduced \(14; it fixed 1\); fix them before going on:\nsrc\/a\.ts:1: error: problem 0 \(ts 2304\)/);
    assert.match(text, /… and 4 more \(get_problems lists them\)\./);
    assert.match(text, /Other open files now have more errors: src\/b\.ts \(1\), src\/c\.ts \(1\)\./);
  });

  it('the text says when nothing is new, and when no server answered', () => {
    const base = { introduced: [], more: 0, fixed: 0, elsewhere: [], waitedMs: 1000 };
    assert.equal(editProblemsText({ ...base, settled: 'unchanged' }), 'Problems: this edit introduced none.');
    assert.equal(editProblemsText({ ...base, fixed: 2, settled: 'diagnostics' }), 'Problems: this edit introduced none and fixed 2.');
    assert.match(editProblemsText({ ...base, settled: 'timeout' }), /^Problems: not checked: no language server reported on this file after 1 s\./);
    assert.doesNotMatch(editProblemsText({ ...base, settled: 'timeout' }), /introduced none/);
  });

  it('an edited file no server reported on is "not checked", never "no new problems", whatever the wait said', () => {
    for (const settled of ['unchanged', 'diagnostics', 'timeout'] as const) {
      const { report } = editReport({
        before: new Map(),
        after: new Map(),
        edited: ['src/math.ts'],
        waitedMs: 8200,
        settled,
        unchecked: ['src/math.ts'],
        server: 'TypeScript',
      });
      assert.equal(report.settled, 'timeout', settled);
      assert.deepEqual(report.unchecked, ['src/math.ts']);
      const text = editProblemsText(report);
      assert.equal(
        text.split('\n')[0],
        'Problems: not checked: the TypeScript server had not reported on src/math.ts after 8 s. Whether this edit introduced problems is not known; a late report will be added here, or run get_problems later to check.',
      );
      assert.doesNotMatch(text, /introduced none/);
    }
  });

  it('of several edited files, the checked ones are reported and the unchecked ones named', () => {
    const { report } = editReport({
      before: new Map(),
      after: new Map([
        ['src/a.ts', [d(2, 'broke a')]],
        ['src/b.ts', [d(1, 'would be new', 'error', 'src/b.ts')]],
      ]),
      edited: ['src/a.ts', 'src/b.ts'],
      waitedMs: 3000,
      settled: 'diagnostics',
      unchecked: ['src/b.ts'],
    });
    assert.equal(report.settled, 'diagnostics');
    assert.deepEqual(
      report.introduced.map((p) => p.message),
      ['broke a'],
      "the unchecked file's problems are not guessed at",
    );
    assert.match(editProblemsText(report), /\nNot checked: no language server reported on src\/b\.ts after 3 s\.$/);
  });

  it('a file not checked before the edit: every problem it has now is listed, and said to be maybe older', () => {
    const old = d(1, 'was there before');
    const { report } = editReport({
      before: new Map([['src/a.ts', [old]]]),
      after: new Map([['src/a.ts', [old, d(3, 'new one')]]]),
      edited: ['src/a.ts'],
      waitedMs: 900,
      settled: 'diagnostics',
      uncheckedBefore: ['src/a.ts'],
    });
    assert.equal(report.introduced.length, 2, 'the before snapshot of an unchecked file is not trusted');
    assert.deepEqual(report.uncheckedBefore, ['src/a.ts']);
    assert.match(
      editProblemsText(report),
      /Problems this edit introduced \(2\); fix them before going on: src\/a\.ts had not been checked before the edit, so some of these may be older than it\./,
    );
  });

  it('a late report says when it was checked', () => {
    const { report } = editReport({
      before: new Map(),
      after: new Map([['src/math.ts', [d(1, "Cannot find name 'c'.")]]]),
      edited: ['src/math.ts'],
      waitedMs: 9000,
      settled: 'diagnostics',
      server: 'TypeScript',
    });
    const text = editProblemsText({ ...report, lateMs: 9400 });
    assert.match(
      text,
      /^Problems this edit introduced \(1\) \(checked 9 s after the edit, when the TypeScript server first reported\); fix them before going on:/,
    );
  });

  it('the quoted line follows its problem when the host read it', () => {
    const introduced = [{ ...d(4, "Cannot find name 'totl'. Did you mean 'total'?"), lineText: '  return totl;' }];
    const { report } = editReport({ before: new Map(), after: new Map([['src/a.ts', introduced]]), edited: ['src/a.ts'], waitedMs: 1, settled: 'diagnostics' });
    assert.match(editProblemsText(report, introduced), /src\/a\.ts:4: error: Cannot find name 'totl'\. Did you mean 'total'\? \(ts 2304\)\n {4}return totl;/);
  });

  it('the wait for a server that says nothing: twice the slowest recent first answer, within floor and ceiling; long when cold', () => {
    const clock = new SettleClock(1000, 6000, 6000);
    assert.equal(clock.deadlineFor('typescript', true), 6000);
    assert.equal(clock.deadlineFor('typescript', false), 2500, 'no answer seen yet');
    clock.record('typescript', 300);
    assert.equal(clock.deadlineFor('typescript', false), 1000, 'never under the floor');
    clock.record('typescript', 900);
    assert.equal(clock.deadlineFor('typescript', false), 1800);
    clock.record('typescript', 5000);
    assert.equal(clock.deadlineFor('typescript', false), 6000, 'never over the ceiling');
    assert.equal(clock.deadlineFor('python', false), 2500, 'per language');
  });
});

describe('editor: navigation results', () => {
  it('finds an identifier only as a whole word', () => {
    assert.equal(identifierAt('const totalSum = total + 1;', 'total'), 17);
    assert.equal(identifierAt('$total total_x', 'total'), -1);
    assert.equal(identifierAt('a.sumAll(x)', 'sumAll'), 2);
  });

  it('groups places by file, drops duplicates, caps, and counts what was hidden', () => {
    const text = locationsText(
      'References to f',
      [
        { path: 'a.ts', line: 1, text: '  export function f() {}' },
        { path: 'b.ts', line: 3, text: 'f();' },
        { path: 'a.ts', line: 1, text: 'dup' },
        { path: 'a.ts', line: 9, text: 'f()' },
      ],
      2,
      3,
    );
    assert.match(
      text,
      /^References to f: 3 in 2 files \(first 2 shown\)\n\na\.ts:1: export function f\(\) \{\}\n\nb\.ts:3: f\(\);\n\n3 more in files the chat does not read/,
    );
    assert.match(
      locationsText(
        'R',
        [
          { path: 'a.ts', line: 1 },
          { path: 'b.ts', line: 2 },
          { path: 'a.ts', line: 5 },
        ],
        10,
        0,
      ),
      /^R: 3 in 2 files\n\na\.ts:1: \na\.ts:5: \n\nb\.ts:2: $/,
    );
  });
});

describe('chat: plans and modes', () => {
  it('reads a plan, normalising statuses, and refuses one that is not', () => {
    const ok = parsePlan(
      JSON.stringify({
        items: [
          { text: ' Read ', status: 'done' },
          { text: 'Edit', status: 'in_progress' },
          { text: 'Test', status: 'pending' },
        ],
      }),
    );
    assert.ok('plan' in ok);
    assert.deepEqual(ok.plan, [
      { text: 'Read', status: 'done' },
      { text: 'Edit', status: 'in-progress' },
      { text: 'Test', status: 'pending' },
    ]);
    assert.equal(planSummary(ok.plan), 'Plan updated: 1 of 3 done; in progress: Edit.');
    const bad = parsePlan(JSON.stringify({ items: [{ text: 'x', status: 'maybe' }] }));
    assert.ok('error' in bad && /items\.0\.status/.test(bad.error), JSON.stringify(bad));
    assert.ok('error' in parsePlan(JSON.stringify({ items: Array.from({ length: 21 }, () => ({ text: 'x', status: 'pending' })) })));
    assert.ok('error' in parsePlan('{not json'));
  });

  it('Ask keeps read-only tools; Plan adds the plan; Agent has everything', () => {
    const mcp = { name: 'server__write', description: '', parameters: { type: 'object' as const, properties: {}, required: [] }, kind: 'write' as const };
    const all = [...TOOL_DEFINITIONS, UPDATE_PLAN, ...EDITOR_READ_TOOLS, mcp];
    const names = (mode: 'ask' | 'plan' | 'agent') => toolsForMode(mode, all).map((t) => t.name);
    assert.deepEqual(names('ask'), [
      'read_file',
      'list_dir',
      'find_files',
      'search_text',
      'get_problems',
      'find_definition',
      'find_references',
      'workspace_symbols',
      'document_symbols',
    ]);
    assert.deepEqual(names('plan'), [
      'read_file',
      'list_dir',
      'find_files',
      'search_text',
      'update_plan',
      'get_problems',
      'find_definition',
      'find_references',
      'workspace_symbols',
      'document_symbols',
    ]);
    assert.equal(names('agent').length, all.length);
  });

  it("the emulator's model splits a request into steps, never inside quotes", () => {
    assert.deepEqual(requestSteps('Read a.ts, then replace "x; then y" with "z", then run the tests'), [
      'Read a.ts',
      'replace "x; then y" with "z"',
      'run the tests',
    ]);
    assert.deepEqual(requestSteps('Replace "a then b" with "c"'), []);
    assert.deepEqual(requestSteps('Do this:\n1. read a\n2. edit b'), ['read a', 'edit b']);
  });
});

describe('editor: rename', () => {
  it("applies the language server's changes by offset, last first; refuses overlapping or out-of-range ones", () => {
    const text = 'const rate = 1;\nuse(rate, rate);\n';
    const at = (n: number) => text.split('rate', n).join('rate').length;
    const changes = [1, 2, 3].map((n) => ({ start: at(n), end: at(n) + 4, newText: 'vatRate' }));
    assert.equal(applyChanges(text, changes), 'const vatRate = 1;\nuse(vatRate, vatRate);\n');
    assert.equal(applyChanges(text, [...changes].reverse()), applyChanges(text, changes), 'order given does not matter');
    assert.throws(
      () =>
        applyChanges(text, [
          { start: 2, end: 8, newText: 'x' },
          { start: 6, end: 10, newText: 'y' },
        ]),
      /overlap/,
    );
    assert.throws(() => applyChanges(text, [{ start: 30, end: 90, newText: 'x' }]), /outside the text/);
  });

  it("a new name must look like an identifier (the server checks the language's own rules)", () => {
    assert.equal(newNameProblem('vatRate'), undefined);
    assert.equal(newNameProblem('$el_2'), undefined);
    assert.match(newNameProblem('') ?? '', /empty/);
    assert.match(newNameProblem('a b') ?? '', /not an identifier/);
    assert.match(newNameProblem('x"); process.exit(1); ("') ?? '', /not an identifier/);
    assert.match(newNameProblem('x'.repeat(201)) ?? '', /over 200/);
  });

  it('says how many changes went into which files', () => {
    assert.equal(
      renameDone('a', 'b', [
        { path: 'x.ts', changes: 2 },
        { path: 'y.ts', changes: 1 },
      ]),
      'Renamed a to b: 3 changes in 2 files:\n  x.ts (2)\n  y.ts (1)',
    );
  });
});

describe('editor: tasks', () => {
  const tasks = [
    { label: 'build', source: 'tasks.json', commandLine: 'tsc -p .', background: false },
    { label: 'test', source: 'npm', commandLine: 'npm run test', background: false },
    { label: 'watch', source: 'tasks.json', background: true },
  ];
  it('finds a task by its label, any letter case, or a detected one by "source: label"', () => {
    assert.equal(findTask(tasks, 'build')?.label, 'build');
    assert.equal(findTask(tasks, 'BUILD')?.label, 'build');
    assert.equal(findTask(tasks, 'npm: test')?.label, 'test');
    assert.equal(findTask(tasks, 'deploy'), undefined);
    assert.match(
      taskListText(tasks, 'deploy'),
      /No task is labelled "deploy"\. The tasks of this workspace:\n {2}build \(tasks\.json\): tsc -p \.\n {2}test \(npm\): npm run test\n {2}watch \(tasks\.json, background\)/,
    );
  });

  it("shows a task's line as a shell reads it back", () => {
    assert.equal(taskCommandLine('node', ['/a b/tsc', '-p', '.', "it's"], false), "node '/a b/tsc' -p . 'it'\\''s'");
    assert.equal(taskCommandLine('npm run build && rm -rf x', undefined, true), 'npm run build && rm -rf x');
  });

  it('says what the matcher found, or, when a failed task brought none, how to read its output', () => {
    const p = { path: 'src/a.ts', line: 1, severity: 'error' as const, message: 'bad', source: 'ts', code: '2322' };
    assert.match(
      taskResultText({ label: 'build', commandLine: 'tsc', exitCode: 2, ms: 1200, problems: [p, p].slice(0, 1), hidden: 2 }),
      /exited with code 2 after 1\.2 s\.\nProblems its problem matcher reported \(1, 1 error\):\nsrc\/a\.ts:1: error: bad \(ts 2322\)\n2 more in files/,
    );
    assert.match(
      taskResultText({ label: 'build', commandLine: 'tsc', exitCode: 2, ms: 10, problems: [], hidden: 0 }),
      /reached the chat[\s\S]*run_command: tsc/,
    );
    assert.match(taskResultText({ label: 'build', commandLine: 'tsc', exitCode: 0, ms: 10, problems: [], hidden: 0 }), /reported no problems/);
    assert.match(taskResultText({ label: 'build', exitCode: undefined, ms: 10, ended: 'timeout', problems: [], hidden: 0 }), /was stopped at the time limit/);
    assert.deepEqual(
      distinctProblems([p, { ...p }, { ...p, line: 2 }]).map((d) => d.line),
      [1, 2],
    );
  });
});
