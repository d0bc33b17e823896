import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathGuard, ToolError } from '../../src/tools/pathGuard';
import { WorkspaceTools, type Approver, type ProposedEdit } from '../../src/tools/workspaceTools';

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function workspace(): { root: string; outside: string; second: string } {
  const base = mkdtempSync(join(tmpdir(), 'mg-tools-'));
  made.push(base);
  const root = join(base, 'project');
  const outside = join(base, 'outside');
  const second = join(base, 'second');
  const w = (p: string, text: string | Buffer) => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  };
  w('src/a.ts', 'export const alpha = 1;\nexport function greet() {\n  return "hello world";\n}\n');
  w('src/b.ts', 'import { alpha } from "./a";\nconsole.log(alpha, "hello there");\n');
  w('README.md', '# Project\nSay hello to the project.\n');
  w('.gitignore', 'secret.env\nbuild/\n*.log\n');
  w('secret.env', 'API_TOKEN=hello-do-not-leak\n');
  w('build/out.js', 'console.log("hello from build")\n');
  w('debug.log', 'hello log\n');
  w('node_modules/x/index.js', 'module.exports = "hello module"\n');
  w('.git/config', '[core]\n');
  w('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 0, 1, 2]));
  w('big.txt', Array.from({ length: 30_000 }, (_, i) => `line ${i + 1} with some padding text`).join('\n'));
  w('nested/.gitignore', 'local.txt\n');
  w('nested/local.txt', 'hello local\n');
  w('nested/keep.txt', 'hello keep\n');
  mkdirSync(outside);
  writeFileSync(join(outside, 'passwords.txt'), 'hunter2\n');
  symlinkSync(outside, join(root, 'link-out'));
  symlinkSync(join(root, 'src'), join(root, 'link-in'));
  mkdirSync(second);
  writeFileSync(join(second, 'other.ts'), 'export const other = "hello second";\n');
  return { root, outside, second };
}

const EXCLUDES = ['**/node_modules', '**/*.lock'];

describe('path guard', () => {
  const ws = workspace();
  const guard = new PathGuard([{ name: 'project', path: ws.root }], EXCLUDES);
  const refused = async (p: string, pattern: RegExp) => assert.rejects(guard.resolve(p), (e: unknown) => e instanceof ToolError && pattern.test(e.message));

  it('resolves workspace-relative and absolute paths inside the folder', async () => {
    assert.equal((await guard.resolve('src/a.ts')).rel, 'src/a.ts');
    assert.equal((await guard.resolve('./src/a.ts')).rel, 'src/a.ts');
    assert.equal((await guard.resolve(join(ws.root, 'README.md'))).rel, 'README.md');
    assert.equal((await guard.resolve('.')).rel, '');
  });

  it('refuses traversal with .., absolute paths outside, and missing files', async () => {
    await refused('../outside/passwords.txt', /contains "\.\."/);
    await refused('src/../README.md', /contains "\.\."/);
    await refused('src\\..\\..\\outside', /contains "\.\."/);
    await refused('/etc/passwd', /outside the workspace/);
    await refused(join(ws.outside, 'passwords.txt'), /outside the workspace/);
    await refused('src/nope.ts', /does not exist/);
    assert.equal((await guard.resolve('src/new.ts', { allowMissing: true })).rel, 'src/new.ts');
  });

  it('refuses a symbolic link that leads outside, follows one that stays inside', async () => {
    await refused('link-out/passwords.txt', /symbolic link/);
    await refused('link-out', /symbolic link/);
    await assert.rejects(guard.resolve('link-out/new.txt', { allowMissing: true }), /symbolic link/);
    assert.equal((await guard.resolve('link-in/a.ts')).rel, 'link-in/a.ts');
  });

  it('refuses ignored files: .gitignore (root and nested), exclude globs, version-control folders', async () => {
    await refused('secret.env', /excluded/);
    await refused('build/out.js', /excluded/);
    await refused('debug.log', /excluded/);
    await refused('nested/local.txt', /excluded/);
    await refused('node_modules/x/index.js', /excluded/);
    await refused('.git/config', /excluded/);
    assert.equal((await guard.resolve('nested/keep.txt')).rel, 'nested/keep.txt');
  });

  it('addresses a folder by name in a multi-root workspace', async () => {
    const multi = new PathGuard([
      { name: 'project', path: ws.root },
      { name: 'second', path: ws.second },
    ]);
    const r = await multi.resolve('second/other.ts');
    assert.equal(r.folder.name, 'second');
    assert.equal(r.display, 'second/other.ts');
    assert.equal((await multi.resolve('src/a.ts')).display, 'project/src/a.ts');
  });
});

describe('workspace tools', () => {
  const ws = workspace();
  const decisions: boolean[] = [];
  const proposed: ProposedEdit[] = [];
  const approver: Approver = { approve: (edit) => (proposed.push(edit), Promise.resolve({ accepted: decisions.shift() ?? false })) };
  const tools = WorkspaceTools.forFolders([{ name: 'project', path: ws.root }], EXCLUDES, { approver });
  const withRg = existsSync('/usr/bin/rg')
    ? WorkspaceTools.forFolders([{ name: 'project', path: ws.root }], EXCLUDES, { approver, rgPath: '/usr/bin/rg' })
    : undefined;

  it('reads files with numbered lines and ranges; refuses binary and oversized files with a hint', async () => {
    const r = await tools.run('read_file', { path: 'src/a.ts' });
    assert.equal(r.isError, false);
    assert.match(r.content, /^src\/a\.ts — lines 1-4 of 4\n {4}1 {2}export const alpha = 1;/);
    const range = await tools.run('read_file', JSON.stringify({ path: 'big.txt', start_line: 100, end_line: 102 }));
    assert.match(range.content, /lines 100-102 of 30000 \(more: read from line 103\)\n {2}100 {2}line 100 /);
    assert.match((await tools.run('read_file', { path: 'image.png' })).content, /^Error: "image\.png" is a binary file/);
    assert.match((await tools.run('read_file', { path: 'big.txt' })).content, /^Error: .* over the 256 KB limit\. Read part of it with start_line/);
    assert.match((await tools.run('read_file', { path: 'src' })).content, /is a folder; use list_dir/);
    assert.match((await tools.run('read_file', '{not json')).content, /^Error: The arguments are not a JSON object/);
    assert.match((await tools.run('read_file', {})).content, /Missing the "path" argument/);
    assert.match((await tools.run('delete_everything', {})).content, /no tool named "delete_everything"/);
  });

  it('lists folders without ignored entries', async () => {
    const r = await tools.run('list_dir', { path: '.' });
    const names = r.content.split('\n').slice(1);
    assert.deepEqual(
      names.filter((n) => n.endsWith('/')).sort(),
      ['link-in/', 'link-out/', 'nested/', 'src/'].sort().filter((n) => names.includes(n)),
    );
    for (const hidden of ['secret.env', 'build/', 'debug.log', 'node_modules/', '.git/']) assert.ok(!names.includes(hidden), `${hidden} is not listed`);
    assert.ok(names.includes('README.md') && names.includes('.gitignore'));
    assert.deepEqual((await tools.run('list_dir', { path: 'nested' })).content.split('\n').slice(1), ['.gitignore', 'keep.txt']);
  });

  it('finds files by glob, leaving ignored ones out', async () => {
    const r = await tools.run('find_files', { pattern: '**/*.ts' });
    assert.deepEqual(r.content.split('\n').slice(1), ['src/a.ts', 'src/b.ts']);
    assert.match((await tools.run('find_files', { pattern: '*.txt' })).content, /nested\/keep\.txt/);
    assert.ok(!(await tools.run('find_files', { pattern: '**/*.js' })).content.includes('node_modules'));
  });

  for (const [name, t] of [
    ['built-in search', tools],
    ['ripgrep', withRg],
  ] as const) {
    it(`searches text with ${name}, never in ignored files`, async function () {
      if (!t) this.skip(); // ripgrep is installed by the setup script; without it only the built-in search runs
      const r = await t.run('search_text', { query: 'hello' });
      const hits = r.content
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((l) => l.split(':')[0])
        .sort();
      assert.deepEqual([...new Set(hits)], ['README.md', 'nested/keep.txt', 'src/a.ts', 'src/b.ts']);
      const re = await t.run('search_text', { query: 'hello (world|there)', is_regex: true, glob: '**/*.ts' });
      assert.match(re.content, /src\/a\.ts:3: return "hello world";/);
      assert.match((await t.run('search_text', { query: 'zzz-none' })).content, /^No match/);
    });
  }

  it('proposes edits for approval: an accepted edit changes the file, a rejected one does not', async () => {
    decisions.push(true);
    const created = await tools.run('create_file', { path: 'src/c.ts', content: 'export const c = 3;\n' });
    assert.deepEqual(created, { content: 'Created src/c.ts (2 lines).', isError: false });
    assert.equal(readFileSync(join(ws.root, 'src/c.ts'), 'utf8'), 'export const c = 3;\n');
    assert.equal(proposed.at(-1)?.kind, 'create');

    decisions.push(false);
    const rejected = await tools.run('replace_in_file', { path: 'src/a.ts', old_string: 'alpha = 1', new_string: 'alpha = 2' });
    assert.equal(rejected.isError, true);
    assert.match(rejected.content, /rejected the edit to src\/a\.ts; nothing was written/);
    assert.match(readFileSync(join(ws.root, 'src/a.ts'), 'utf8'), /alpha = 1/);
    assert.equal(proposed.at(-1)?.after.includes('alpha = 2'), true);

    decisions.push(true);
    assert.equal((await tools.run('replace_in_file', { path: 'src/a.ts', old_string: 'alpha = 1', new_string: 'alpha = 2' })).isError, false);
    assert.match(readFileSync(join(ws.root, 'src/a.ts'), 'utf8'), /alpha = 2/);

    assert.match((await tools.run('replace_in_file', { path: 'src/b.ts', old_string: 'nope', new_string: 'x' })).content, /was not found/);
    assert.match((await tools.run('replace_in_file', { path: 'src/b.ts', old_string: 'alpha', new_string: 'x' })).content, /occurs 2 times/);
    assert.match((await tools.run('create_file', { path: 'README.md', content: 'x' })).content, /already exists/);
    assert.match((await tools.run('create_file', { path: '../escape.ts', content: 'x' })).content, /contains "\.\."/);
    assert.match((await tools.run('create_file', { path: 'secret.env', content: 'x' })).content, /excluded/);
    assert.equal(existsSync(join(ws.outside, 'escape.ts')), false);
  });

  it('edits of several files (a rename) take one decision, and none is written when one changed while it was asked', async () => {
    const guard = tools.guard;
    const a = await guard.resolve('src/a.ts');
    const b = await guard.resolve('src/b.ts');
    const [beforeA, beforeB] = [readFileSync(a.abs, 'utf8'), readFileSync(b.abs, 'utf8')];
    const edits = [
      { kind: 'edit' as const, path: a, before: beforeA, after: beforeA.replace(/alpha/g, 'first') },
      { kind: 'edit' as const, path: b, before: beforeB, after: beforeB.replace(/alpha/g, 'first') },
    ];
    let asked = 0;
    const meddling = WorkspaceTools.forFolders([{ name: 'project', path: ws.root }], EXCLUDES, {
      approver: {
        approve: () => Promise.resolve({ accepted: true }),
        approveAll: () => (asked++, writeFileSync(b.abs, `${beforeB}// someone typed\n`), Promise.resolve({ accepted: true })),
      },
    });
    const refused = await meddling
      .applyAllIfApproved(edits, 'Rename alpha to first', undefined, 'done')
      .catch((e: Error) => ({ content: e.message, isError: true }));
    assert.equal(asked, 1);
    assert.match(refused.content, /src\/b\.ts changed while waiting for approval; nothing was written/);
    assert.equal(readFileSync(a.abs, 'utf8'), beforeA, 'the first file was not written either');
    writeFileSync(b.abs, beforeB);

    const rejecting = WorkspaceTools.forFolders([{ name: 'project', path: ws.root }], EXCLUDES, {
      approver: { approve: () => Promise.resolve({ accepted: true }), approveAll: () => Promise.resolve({ accepted: false }) },
    });
    assert.match(
      (await rejecting.applyAllIfApproved(edits, 'Rename alpha to first', undefined, 'done')).content,
      /rejected the change to 2 files \(Rename alpha to first\); nothing was written/,
    );
    const written: string[] = [];
    const accepting = WorkspaceTools.forFolders([{ name: 'project', path: ws.root }], EXCLUDES, {
      approver: { approve: () => Promise.resolve({ accepted: false }), approveAll: () => Promise.resolve({ accepted: true }) },
      onWritten: (e) => written.push(e.path.display),
    });
    assert.deepEqual(await accepting.applyAllIfApproved(edits, 'Rename alpha to first', undefined, 'Renamed.'), { content: 'Renamed.', isError: false });
    assert.deepEqual(written, ['src/a.ts', 'src/b.ts']);
    assert.match(readFileSync(b.abs, 'utf8'), /import \{ first \}/);
    writeFileSync(a.abs, beforeA);
    writeFileSync(b.abs, beforeB);
    await assert.rejects(tools.applyAllIfApproved(edits, 'x', undefined, 'done'), /cannot be approved here/);
  });
});
