import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTurn } from '../../src/runtime/core/engine';
import { systemPrompt } from '../../src/runtime/core/prompt';
import { emptyUsage, newId, type AssistantTurn } from '../../src/common/conversation';
import {
  addWorktree,
  changedFiles,
  commitAll,
  fileAt,
  git,
  headCommit,
  locateRepository,
  mergeBranch,
  removeWorktree,
  type GitPlace,
} from '../../src/sessions/core/git';
import { DEFAULT_AUTO_APPROVAL } from '../../src/runtime/core/autoApproval';
import { SessionStore, type AgentSession } from '../../src/sessions/core/sessionStore';
import { worktreeTools } from '../../src/sessions/core/worktreeTools';
import { DEFAULT_DENY } from '../../src/tools/commandPolicy';
import { clientFor, useEmulator } from './helpers';
import { NO_SANDBOX } from '../sandbox';

const ID = ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid'];

/** A repository with one commit: lib/rates.ts and lib/quote.ts. */
function repository(): { repo: string; root: string; place: () => Promise<GitPlace>; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'mg-sessions-'));
  const repo = join(root, 'project');
  mkdirSync(join(repo, 'lib'), { recursive: true });
  writeFileSync(join(repo, 'lib', 'rates.ts'), 'export const taxRate = 0.2;\n');
  writeFileSync(join(repo, 'lib', 'quote.ts'), "import { taxRate } from './rates';\n\nexport const gross = (net: number) => net * (1 + taxRate);\n");
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  execFileSync('git', [...ID, 'add', '-A'], { cwd: repo });
  execFileSync('git', [...ID, 'commit', '-q', '-m', 'start'], { cwd: repo });
  return { repo, root, place: async () => (await locateRepository(repo))!, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A worktree's tools with the person's settings: auto-approval (the defaults, changed by `auto`), the allow list, nothing paused. */
function toolOptions(worktree: string, name: string, auto: Partial<typeof DEFAULT_AUTO_APPROVAL> = {}, allow: string[] = [], paused = false) {
  return {
    worktree,
    name,
    excludes: [],
    secretFiles: [],
    consent: () => ({ auto: { ...DEFAULT_AUTO_APPROVAL, ...auto }, paused }),
    policy: () => ({ allow, deny: DEFAULT_DENY }),
    timeoutSeconds: () => 30,
    ...NO_SANDBOX,
  };
}

describe('background agent sessions: worktrees, their tools and their store', function () {
  this.timeout(60_000);
  const ctx = useEmulator();
  let r: ReturnType<typeof repository>;
  beforeEach(() => (r = repository()));
  afterEach(() => r.cleanup());

  it('a session works in its worktree on a new branch: the person’s files are untouched until Apply merges the branch', async () => {
    const repo = await r.place();
    const base = await headCommit(repo);
    const worktree = join(r.root, 'wt');
    const wt = await addWorktree(repo, worktree, 'model-gateway/rate', base);
    const asked: string[] = [];
    const tools = worktreeTools({ ...toolOptions(worktree, 'model-gateway/rate', { edits: true }), ask: (q) => (asked.push(q.kind), Promise.resolve(true)) });
    const { client } = clientFor(ctx.emu);
    const turn: AssistantTurn = {
      id: newId('a'),
      role: 'assistant',
      model: 'gpt-4o-mini',
      format: 'chat',
      steps: [],
      status: 'streaming',
      usage: emptyUsage(),
      at: Date.now(),
    };
    await runTurn({
      client,
      model: 'gpt-4o-mini',
      format: 'chat',
      system: systemPrompt({ folders: ['model-gateway/rate'], toolsEnabled: true }),
      history: [
        { id: newId('u'), role: 'user', text: 'Use replace_in_file on lib/rates.ts to replace "0.2" with "0.25"', images: [], context: [], at: Date.now() },
      ],
      turn,
      tools,
      maxSteps: 5,
      cacheTtl: '5m',
    });
    assert.equal(turn.status, 'done', JSON.stringify(turn.error));
    assert.deepEqual(asked, [], 'edits unasked by the person’s rule');
    assert.equal(readFileSync(join(worktree, 'lib', 'rates.ts'), 'utf8'), 'export const taxRate = 0.25;\n');
    assert.equal(readFileSync(join(r.repo, 'lib', 'rates.ts'), 'utf8'), 'export const taxRate = 0.2;\n', 'the person’s copy is untouched');
    assert.equal(await commitAll(wt, 'agent: rate'), true);
    assert.deepEqual(await changedFiles(wt, base), [{ status: 'M', path: 'lib/rates.ts' }]);
    assert.equal(await fileAt(wt, base, 'lib/rates.ts'), 'export const taxRate = 0.2;\n', 'Review’s left side');
    assert.deepEqual(await mergeBranch(repo, 'model-gateway/rate', 'Merge'), { merged: true });
    assert.equal(readFileSync(join(r.repo, 'lib', 'rates.ts'), 'utf8'), 'export const taxRate = 0.25;\n');
    await removeWorktree(repo, worktree, 'model-gateway/rate');
    assert.ok(!existsSync(worktree));
    assert.equal((await git(repo, ['branch', '--list', 'model-gateway/rate'])).trim(), '', 'its branch is gone');
  });

  it('Apply with conflicts leaves them to resolve (markers, the branch kept); a merge git refuses changes nothing', async () => {
    const repo = await r.place();
    const base = await headCommit(repo);
    const worktree = join(r.root, 'wt');
    const wt = await addWorktree(repo, worktree, 'model-gateway/x', base);
    writeFileSync(join(worktree, 'lib', 'rates.ts'), 'export const taxRate = 0.3;\n');
    await commitAll(wt, 'agent');
    // Meanwhile the person changed the same line, uncommitted: git refuses to merge over it.
    writeFileSync(join(r.repo, 'lib', 'rates.ts'), 'export const taxRate = 0.21;\n');
    const refused = await mergeBranch(repo, 'model-gateway/x', 'Merge');
    assert.ok(!refused.merged && 'refused' in refused, JSON.stringify(refused));
    assert.match(refused.refused, /would be overwritten|local changes/i);
    assert.equal(readFileSync(join(r.repo, 'lib', 'rates.ts'), 'utf8'), 'export const taxRate = 0.21;\n', 'their change is kept');
    // Committed: now the merge conflicts.
    execFileSync('git', [...ID, 'commit', '-q', '-am', 'person'], { cwd: r.repo });
    const conflicted = await mergeBranch(repo, 'model-gateway/x', 'Merge');
    assert.deepEqual(conflicted, { merged: false, conflicts: ['lib/rates.ts'] });
    const text = readFileSync(join(r.repo, 'lib', 'rates.ts'), 'utf8');
    assert.match(text, /<<<<<<< HEAD\nexport const taxRate = 0\.21;\n=======\nexport const taxRate = 0\.3;\n>>>>>>> model-gateway\/x/);
    execFileSync('git', ['merge', '--abort'], { cwd: r.repo });
    assert.equal(readFileSync(join(r.repo, 'lib', 'rates.ts'), 'utf8'), 'export const taxRate = 0.21;\n');
  });

  it('its commands: refused ones never run nor ask; others ask (the person answers later), run in the worktree', async () => {
    const repo = await r.place();
    const base = await headCommit(repo);
    const worktree = join(r.root, 'wt');
    await addWorktree(repo, worktree, 'model-gateway/cmd', base);
    const asked: string[] = [];
    let answer = false;
    const tools = worktreeTools({
      ...toolOptions(worktree, 'b', {}, ['pwd']),
      ask: (q) => (asked.push(q.kind === 'command' ? q.line : q.edit.path.rel), Promise.resolve(answer)),
    });
    const pushed = await tools.run('run_command', JSON.stringify({ command: 'git push origin main' }));
    assert.equal(pushed.isError, true);
    assert.match(pushed.content, /^Refused, not run:/);
    assert.deepEqual(asked, []);
    const allowed = await tools.run('run_command', JSON.stringify({ command: 'pwd' }));
    assert.match(allowed.content, new RegExp(`^\\$ pwd\\n\\(in the worktree \\(b\\); exit code 0;[^)]*\\)\\n${worktree.replace(/[/.]/g, '\\$&')}`));
    const rejected = await tools.run('run_command', JSON.stringify({ command: 'touch made-by-agent' }));
    assert.match(rejected.content, /rejected/);
    assert.ok(!existsSync(join(worktree, 'made-by-agent')));
    answer = true;
    const ran = await tools.run('run_command', JSON.stringify({ command: 'touch made-by-agent' }));
    assert.equal(ran.isError, false);
    assert.ok(existsSync(join(worktree, 'made-by-agent')) && !existsSync(join(r.repo, 'made-by-agent')));
    assert.deepEqual(asked, ['touch made-by-agent', 'touch made-by-agent']);
    // An edit with the person's auto-approval off asks too; a path outside the worktree is refused.
    answer = false;
    const edit = await tools.run('create_file', JSON.stringify({ path: 'lib/new.ts', content: 'x' }));
    assert.equal(edit.isError, true);
    assert.deepEqual(asked.at(-1), 'lib/new.ts');
    const outside = await tools.run('read_file', JSON.stringify({ path: '../project/lib/rates.ts' }));
    assert.equal(outside.isError, true);
    assert.equal((await tools.run('run_command', JSON.stringify({ command: 'pwd', cwd: '..' }))).isError, true);
  });

  it('the store: saved atomically, and a session running when the window went is stopped on load', async () => {
    const file = join(r.root, 'state', 'agent-sessions.json');
    const store = new SessionStore(file);
    const session: AgentSession = {
      id: 's1',
      title: 't',
      prompt: 'p',
      model: 'gpt-4o-mini',
      repo: r.repo,
      worktree: join(r.root, 'wt'),
      branch: 'b',
      base: 'abc',
      status: 'waiting',
      question: 'Run `npm test`?',
      createdAt: 1,
      updatedAt: 1,
      usage: emptyUsage(),
      files: ['lib/a.ts'],
      turns: [
        { id: 'u', role: 'user', text: 'p', images: [], context: [], at: 1 },
        { id: 'a', role: 'assistant', model: 'm', format: 'chat', steps: [], status: 'streaming', usage: emptyUsage(), at: 1 },
      ],
    };
    await store.save([session, { ...session, id: 's2', status: 'done', question: undefined }]);
    const loaded = await store.load();
    assert.deepEqual(
      loaded.map((s) => [s.id, s.status, s.question]),
      [
        ['s1', 'stopped', undefined],
        ['s2', 'done', undefined],
      ],
    );
    assert.equal((loaded[0].turns[1] as AssistantTurn).status, 'stopped');
    writeFileSync(file, '{"version":1,"sessions":[{"id":');
    assert.deepEqual(await new SessionStore(file).load(), [], 'a damaged file is not fatal');
  });
});
