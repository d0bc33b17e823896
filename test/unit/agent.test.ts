import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AUTO_APPROVAL, runsUnasked, unaskedSummary } from '../../src/runtime/core/autoApproval';
import { CappedOutput, describeOutcome, stripAnsi } from '../../src/runtime/core/output';
import { runProcess } from '../../src/runtime/core/processRun';
import { commandAsked, plan, typedText, type ToolSpec, type Turn } from '../emulator/assistant';

const runCommand: ToolSpec = {
  name: 'run_command',
  parameters: { type: 'object', properties: { command: { type: 'string' }, cwd: { type: 'string' } }, required: ['command'] },
};
const echo: ToolSpec = { name: 'everything__echo', parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } };
const user = (text: string): Turn => ({ role: 'user', text, images: 0, toolResults: [], toolCalls: [] });

describe('agent: auto-approval', () => {
  it('reads run unasked by default; edits, paid media and unlisted tools ask; commands only when the policy says run', () => {
    const a = DEFAULT_AUTO_APPROVAL;
    assert.equal(runsUnasked({ kind: 'read' }, a, false), true);
    assert.equal(runsUnasked({ kind: 'edit' }, a, false), false);
    assert.equal(runsUnasked({ kind: 'paid' }, a, false), false);
    assert.equal(runsUnasked({ kind: 'command', decision: 'run' }, a, false), true);
    assert.equal(runsUnasked({ kind: 'command', decision: 'ask' }, a, false), false);
    assert.equal(runsUnasked({ kind: 'tool', server: 'everything', tool: 'echo' }, a, false), false);
  });

  it('an MCP server or one of its tools can be listed; a listed tool allows no other', () => {
    const a = { ...DEFAULT_AUTO_APPROVAL, mcp: ['everything/echo', 'fs'] };
    assert.equal(runsUnasked({ kind: 'tool', server: 'everything', tool: 'echo' }, a, false), true);
    assert.equal(runsUnasked({ kind: 'tool', server: 'everything', tool: 'add' }, a, false), false);
    assert.equal(runsUnasked({ kind: 'tool', server: 'fs', tool: 'write_file' }, a, false), true);
    assert.equal(runsUnasked({ kind: 'tool', server: 'fs2', tool: 'x' }, a, false), false);
  });

  it('pausing makes everything ask, and the indicator says so', () => {
    const a = { readOnly: true, edits: true, terminal: true, mcp: ['fs'], paidMedia: true };
    for (const c of [
      { kind: 'read' },
      { kind: 'edit' },
      { kind: 'paid' },
      { kind: 'command', decision: 'run' },
      { kind: 'tool', server: 'fs', tool: 'x' },
    ] as const)
      assert.equal(runsUnasked(c, a, true), false, c.kind);
    assert.deepEqual(unaskedSummary(a, true, 3), { paused: true, parts: [] });
    assert.deepEqual(unaskedSummary(a, false, 1), { paused: false, parts: ['reads', 'edits', '1 allowed command', 'MCP: fs', 'paid media'] });
    assert.deepEqual(unaskedSummary(DEFAULT_AUTO_APPROVAL, false, 0).parts, ['reads']);
  });
});

describe('agent: command output', () => {
  it('keeps the head and the tail of a long output and says how much was left out', () => {
    const out = new CappedOutput(20, 20);
    for (let i = 0; i < 100; i++) out.append(`line ${i}\n`);
    const text = out.text();
    assert.match(text, /^line 0\nline 1\n/);
    assert.match(text, /line 99\n$/);
    assert.match(text, /… \d+ characters left out …/);
    assert.ok(text.length < 120);
  });

  it('removes colours and keeps only the last drawing of a progress line', () => {
    assert.equal(stripAnsi('\x1b[32mok\x1b[0m \x1b]633;C\x07done'), 'ok done');
    const out = new CappedOutput();
    out.append('progress 10%\rprogress 50%\rprogress 100%\r\nnext\r\n');
    assert.equal(out.text(), 'progress 100%\nnext\n');
  });

  it('describes how a command ended', () => {
    const base = { output: 'x\n', via: 'process' as const, ms: 1500 };
    assert.match(
      describeOutcome('npm test', 'the workspace root', { ...base, exitCode: 0 }, 600),
      /^\$ npm test\n\(in the workspace root; exit code 0; 1\.5 s\)\nx$/,
    );
    assert.match(describeOutcome('sleep 9', '.', { ...base, exitCode: undefined, ended: 'timeout' }, 5), /stopped after the 5 s timeout/);
    assert.match(describeOutcome('sleep 9', '.', { ...base, exitCode: undefined, ended: 'stopped' }, 5), /stopped by the person/);
  });
});

describe('agent: running a command as a process', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mg-agent-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('returns the exit code and the output of both streams, run in the folder given', async () => {
    let seen = '';
    const r = await runProcess('pwd; echo out; echo err >&2; exit 3', { cwd: dir, timeoutMs: 10_000, onData: (d) => (seen += d) });
    assert.equal(r.exitCode, 3);
    assert.equal(r.ended, undefined);
    assert.match(seen, new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    assert.match(seen, /out\n/);
    assert.match(seen, /err\n/);
  });

  it('stops the whole process group on Stop (a child the shell started too)', async () => {
    const stop = new AbortController();
    let seen = '';
    const running = runProcess('sleep 30 & echo started $!; wait', { cwd: dir, timeoutMs: 60_000, signal: stop.signal, onData: (d) => (seen += d) });
    while (!/started \d+/.test(seen)) await new Promise((r) => setTimeout(r, 20));
    const sleeper = Number(/started (\d+)/.exec(seen)![1]);
    stop.abort();
    const r = await running;
    assert.equal(r.ended, 'stopped');
    await new Promise((r) => setTimeout(r, 200));
    // Gone, or a zombie waiting for a parent to reap it (this machine's PID 1 may not): not running.
    const state = await readFile(`/proc/${sleeper}/stat`, 'utf8').then(
      (s) => /\) (\w)/.exec(s)?.[1],
      () => 'gone',
    );
    assert.ok(state === 'gone' || state === 'Z', `the child of the shell is not running (state ${state})`);
  });

  it('stops a command at its timeout', async () => {
    const r = await runProcess('sleep 30', { cwd: dir, timeoutMs: 200, onData: () => undefined });
    assert.equal(r.ended, 'timeout');
  });
});

describe('emulator: the assistant as an agent', () => {
  it('answers what the person typed, not the file context put before it', () => {
    const text = 'Context from README.md:\n```markdown\n# Title\nrun the tests\n```\n\nWhat does this project do?';
    assert.equal(typedText(text), 'What does this project do?');
    const p = plan('gpt-4o', [user(text)], [], 'auto', false);
    assert.doesNotMatch(p.text, /Context from/);
    assert.doesNotMatch(p.text, /run the tests/);
  });

  it('plans run_command for "run the tests", the build, the linter or a quoted command', () => {
    assert.equal(commandAsked('Please run the tests'), 'npm test');
    assert.equal(commandAsked('run the build'), 'npm run build');
    assert.equal(commandAsked('Run `make check -j4` for me'), 'make check -j4');
    assert.equal(commandAsked('What do the tests cover?'), undefined);
    const p = plan('gpt-4o', [user('Run the tests please')], [runCommand], 'auto', false);
    assert.deepEqual(p.toolCalls, [{ name: 'run_command', arguments: { command: 'npm test' } }]);
  });

  it('calls a server tool named by its own name, with its argument', () => {
    const p = plan('gpt-4o', [user('Use the echo tool to say "hello agent"')], [runCommand, echo], 'auto', false);
    assert.deepEqual(p.toolCalls, [{ name: 'everything__echo', arguments: { message: 'hello agent' } }]);
  });

  it('answers from a command result in words: how it ended and what its output says', () => {
    const result = '$ npm test\n(in the workspace root; exit code 1; 2.0 s)\n  3 passing\n  1 failing\nnpm ERR! Test failed.';
    const turns: Turn[] = [
      user('Run the tests'),
      { role: 'assistant', text: '', images: 0, toolResults: [], toolCalls: ['run_command'] },
      { role: 'user', text: '', images: 0, toolResults: [{ name: 'run_command', content: result, isError: true }], toolCalls: [] },
    ];
    const p = plan('gpt-4o', turns, [runCommand], 'auto', false);
    assert.equal(p.toolCalls.length, 0);
    assert.match(p.text, /`npm test` ran in the workspace root and ended with exit code 1/);
    assert.match(p.text, /`npm test` failed \(exit code 1\): “npm ERR! Test failed\.”/);
    assert.match(p.text, /That answers: “Run the tests”/);
  });
});
