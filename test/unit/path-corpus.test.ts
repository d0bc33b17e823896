import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeDeceptive, folderInside, PathGuard, SecretFileError, ToolError } from '../../src/tools/pathGuard';
import { realTarget } from '../../src/tools/realPath';
import { WorkspaceTools, type Approver } from '../../src/tools/workspaceTools';

/**
 * Paths a model (or a cloned repository's links) may hand the tools, each with the verdict the
 * guard must give. The run prints the table: blocked vs allowed, and why.
 */
function hostileWorkspace() {
  const base = mkdtempSync(join(tmpdir(), 'mg-paths-'));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'src'), { recursive: true });
  mkdirSync(join(ws, '.git'), { recursive: true });
  mkdirSync(join(ws, '.GIT'), { recursive: true });
  mkdirSync(join(ws, '.Git'), { recursive: true });
  mkdirSync(outside);
  const w = (p: string, text: string) => writeFileSync(join(ws, p), text);
  w('src/app.ts', 'export const app = 1;\n');
  w('.gitignore', '.env\nsecrets/\n');
  w('.env', 'TOKEN=do-not-leak\n');
  w('.git/config', '[core]\n');
  w('.GIT/config', '[core]\n');
  w('.Git/HEAD', 'ref: refs/heads/main\n');
  w('..foo', 'a file whose name starts with two dots\n');
  mkdirSync(join(ws, '..bar'));
  w('..bar/notes.txt', 'notes\n');
  w('%2e%2e', 'a file literally named %2e%2e\n');
  mkdirSync(join(ws, 'secrets'));
  w('secrets/key.pem', 'PRIVATE\n');
  writeFileSync(join(outside, 'passwords.txt'), 'hunter2\n');
  // Links a cloned repository can carry:
  symlinkSync('../outside/new.txt', join(ws, 'dangle')); // dangling, points outside
  symlinkSync('../outside/passwords.txt', join(ws, 'filelink')); // file outside
  symlinkSync('../outside', join(ws, 'dirlink')); // folder outside
  symlinkSync('.env', join(ws, 'envlink')); // ignored file inside
  symlinkSync('.git', join(ws, 'gitlink')); // version-control folder inside
  symlinkSync('secrets', join(ws, 'secretdir')); // ignored folder inside
  symlinkSync('src', join(ws, 'srclink')); // fine: stays inside, not ignored
  symlinkSync('src/later.ts', join(ws, 'later')); // dangling but inside: creating it is fine
  symlinkSync('hop2', join(ws, 'hop1'));
  symlinkSync('../outside/passwords.txt', join(ws, 'hop2')); // a chain that ends outside
  symlinkSync('loop-b', join(ws, 'loop-a'));
  symlinkSync('loop-a', join(ws, 'loop-b'));
  return { base, ws, outside };
}

type Verdict = 'allowed' | 'blocked';
const CORPUS: [string, Verdict, string, { create?: boolean }?][] = [
  ['src/app.ts', 'allowed', 'plain'],
  ['./src/app.ts', 'allowed', 'dot prefix'],
  ['..foo', 'allowed', 'a name starting with ".." is not traversal'],
  ['..bar/notes.txt', 'allowed', 'a folder starting with ".."'],
  ['%2e%2e', 'allowed', 'URL-encoded dots are a literal name, not traversal'],
  ['srclink/app.ts', 'allowed', 'a link that stays inside'],
  ['later', 'allowed', 'a dangling link inside may be created', { create: true }],
  ['../outside/passwords.txt', 'blocked', 'traversal'],
  ['src/../../outside/passwords.txt', 'blocked', 'traversal in the middle'],
  ['src\\..\\..\\outside', 'blocked', 'backslash traversal'],
  ['/etc/passwd', 'blocked', 'absolute outside'],
  ['src/app.ts\0.png', 'blocked', 'NUL byte'],
  ['.git/config', 'blocked', 'version control'],
  ['.GIT/config', 'blocked', 'version control, upper case'],
  ['.Git/HEAD', 'blocked', 'version control, mixed case'],
  ['.env', 'blocked', 'ignored by .gitignore'],
  ['secrets/key.pem', 'blocked', 'ignored folder'],
  ['filelink', 'blocked', 'link to a file outside'],
  ['dirlink/passwords.txt', 'blocked', 'link to a folder outside'],
  ['dangle', 'blocked', 'dangling link to outside (create)', { create: true }],
  ['dangle', 'blocked', 'dangling link to outside (read)'],
  ['hop1', 'blocked', 'chain of links ending outside'],
  ['envlink', 'blocked', 'link to an ignored file'],
  ['gitlink/config', 'blocked', 'link to .git'],
  ['secretdir/key.pem', 'blocked', 'link to an ignored folder'],
  ['loop-a', 'blocked', 'link loop'],
];

describe('path corpus: hostile paths and links', () => {
  const { base, ws, outside } = hostileWorkspace();
  const guard = new PathGuard([{ name: 'ws', path: ws }]);
  after(() => rmSync(base, { recursive: true, force: true }));

  it('blocks and allows each path as listed (table printed)', async () => {
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const [path, expected, why, opts] of CORPUS) {
      let verdict: Verdict = 'allowed';
      let reason = '';
      try {
        await guard.resolve(path, { allowMissing: opts?.create });
      } catch (err) {
        assert.ok(err instanceof ToolError, `${path}: a ToolError, not ${String(err)}`);
        verdict = 'blocked';
        reason = err.message;
      }
      rows.push(`${verdict.padEnd(8)} ${JSON.stringify(path).padEnd(36)} ${why}${reason ? ` — ${reason}` : ''}`);
      if (verdict !== expected) wrong.push(`${path} (${why}): expected ${expected}, got ${verdict} ${reason}`);
    }
    console.log(`      ${rows.join('\n      ')}`);
    assert.deepEqual(wrong, []);
  });

  it('create_file through a dangling link writes nothing outside the workspace', async () => {
    const approver: Approver = { approve: () => Promise.resolve({ accepted: true }) };
    const tools = WorkspaceTools.forFolders([{ name: 'ws', path: ws }], [], { approver });
    const r = await tools.run('create_file', { path: 'dangle', content: 'planted' });
    assert.equal(r.isError, true);
    assert.match(r.content, /outside the workspace through a symbolic link/);
    assert.equal(existsSync(join(outside, 'new.txt')), false);
  });

  it('reads through links to ignored or protected targets are refused, not returned', async () => {
    const tools = WorkspaceTools.forFolders([{ name: 'ws', path: ws }], [], { approver: { approve: () => Promise.resolve({ accepted: false }) } });
    for (const p of ['envlink', 'gitlink/config', 'secretdir/key.pem', '.GIT/config', '.Git/HEAD']) {
      const r = await tools.run('read_file', { path: p });
      assert.equal(r.isError, true, p);
      assert.ok(!/do-not-leak|PRIVATE|\[core\]|refs\/heads/.test(r.content), `${p} leaked its content`);
    }
    assert.match((await tools.run('read_file', { path: '..foo' })).content, /two dots/);
  });

  it('a link planted while an edit waits for approval does not redirect the write', async () => {
    const target = join(ws, 'src', 'swap.ts');
    const approver: Approver = {
      approve: () => {
        // While the person looks at the diff, the file's folder becomes a link to outside.
        symlinkSync(join(outside, 'swap.ts'), target);
        return Promise.resolve({ accepted: true });
      },
    };
    const tools = WorkspaceTools.forFolders([{ name: 'ws', path: ws }], [], { approver });
    const r = await tools.run('create_file', { path: 'src/swap.ts', content: 'x' });
    assert.equal(r.isError, true);
    assert.equal(existsSync(join(outside, 'swap.ts')), false);
    assert.equal(readFileSync(join(ws, 'src', 'app.ts'), 'utf8'), 'export const app = 1;\n');
  });

  it('realTarget follows every link, including a final one that dangles', async () => {
    assert.deepEqual(await realTarget(join(ws, 'dangle')), { path: join(outside, 'new.txt'), exists: false });
    assert.deepEqual(await realTarget(join(ws, 'srclink', 'app.ts')), { path: join(ws, 'src', 'app.ts'), exists: true });
    assert.deepEqual(await realTarget(join(ws, 'dirlink', 'deeper', 'x.txt')), { path: join(outside, 'deeper', 'x.txt'), exists: false });
    await assert.rejects(realTarget(join(ws, 'loop-a')), /too many levels/);
  });
});

/** Files that hold credentials, in a workspace whose .gitignore does not list them (many do not). */
const SECRET_CORPUS: [string, Verdict][] = [
  ['.env', 'blocked'],
  ['.env.local', 'blocked'],
  ['config/.env.production', 'blocked'],
  ['certs/server.pem', 'blocked'],
  ['certs/server.KEY', 'blocked'],
  ['id_rsa', 'blocked'],
  ['id_rsa.pub', 'blocked'],
  ['id_ed25519', 'blocked'],
  ['.npmrc', 'blocked'],
  ['.netrc', 'blocked'],
  ['.pypirc', 'blocked'],
  ['.git-credentials', 'blocked'],
  ['certs/client.p12', 'blocked'],
  ['certs/client.PFX', 'blocked'],
  ['.aws/credentials', 'blocked'],
  ['.ssh/config', 'blocked'],
  ['home/.SSH/known_hosts', 'blocked'],
  ['innocent.txt', 'blocked'],
  ['vault/db.secret', 'blocked'],
  ['src/env.ts', 'allowed'],
  ['src/environment.ts', 'allowed'],
  ['src/keyboard.ts', 'allowed'],
  ['docs/pem.md', 'allowed'],
  ['src/app\u202Ets.ts', 'blocked'],
  ['src/\u200Bapp.ts', 'blocked'],
];

describe('path corpus: files that hold secrets, and deceptive names', () => {
  const base = mkdtempSync(join(tmpdir(), 'mg-secrets-'));
  const ws = join(base, 'ws');
  for (const [p] of SECRET_CORPUS) {
    if (p === 'innocent.txt') continue;
    mkdirSync(join(ws, p, '..'), { recursive: true });
    writeFileSync(join(ws, p), `SECRET=do-not-leak ${p}\n`);
  }
  symlinkSync('.env', join(ws, 'innocent.txt'));
  // The user's setting adds a glob; the built-in list cannot be shortened.
  const guard = new PathGuard([{ name: 'ws', path: ws }], [], ['*.secret']);
  after(() => rmSync(base, { recursive: true, force: true }));

  it('refuses each secret file and deceptive name, allows look-alikes (table printed)', async () => {
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const [path, expected] of SECRET_CORPUS) {
      let verdict: Verdict = 'allowed';
      let reason = '';
      try {
        await guard.resolve(path);
      } catch (err) {
        assert.ok(err instanceof ToolError);
        verdict = 'blocked';
        reason = err.message;
      }
      rows.push(`${verdict.padEnd(8)} ${escapeDeceptive(JSON.stringify(path)).padEnd(30)} ${reason.slice(0, 90)}`);
      if (verdict !== expected) wrong.push(`${path}: expected ${expected}, got ${verdict} ${reason}`);
    }
    console.log(`      ${rows.join('\n      ')}`);
    assert.deepEqual(wrong, []);
  });

  it('the reason for a deceptive name shows it escaped, not as it would display', async () => {
    await assert.rejects(guard.resolve('src/app\u202Ets.ts'), (e: Error) => e.message.includes('src/app\\u{202E}ts.ts') && !e.message.includes('\u202E'));
  });

  it('the tools neither read nor list them; a person attaching one by hand gets it', async () => {
    const tools = WorkspaceTools.forFolders([{ name: 'ws', path: ws }], [], { approver: { approve: () => Promise.resolve({ accepted: true }) } });
    for (const p of ['.env', 'innocent.txt', '.ssh/config', 'id_rsa']) {
      const r = await tools.run('read_file', { path: p });
      assert.equal(r.isError, true, p);
      assert.doesNotMatch(r.content, /do-not-leak/, p);
    }
    const edit = await tools.run('create_file', { path: '.env.new', content: 'X=1' });
    assert.equal(edit.isError, true);
    assert.equal(existsSync(join(ws, '.env.new')), false);
    const listed = (await tools.run('find_files', { pattern: '**/*' })).content;
    for (const p of ['.env', 'server.pem', 'id_rsa', 'credentials', '.npmrc']) assert.ok(!listed.includes(p), `${p} listed`);
    assert.match(listed, /environment\.ts/);
    assert.equal((await guard.resolve('.env', { allowSecret: true })).rel, '.env');
  });

  it('SecretFileError tells the secret refusal apart from other refusals', async () => {
    await assert.rejects(guard.resolve('.env'), SecretFileError);
    await assert.rejects(guard.resolve('../x'), (e: Error) => !(e instanceof SecretFileError));
  });
});

describe('path corpus: the assets folder a setting names', () => {
  const base = mkdtempSync(join(tmpdir(), 'mg-assets-'));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'media'), { recursive: true });
  mkdirSync(outside);
  symlinkSync('../outside', join(ws, 'generated'));
  symlinkSync('media', join(ws, 'art'));
  after(() => rmSync(base, { recursive: true, force: true }));

  it('follows links: one that stays inside is used, one that leaves is refused', async () => {
    assert.equal(await folderInside(ws, 'art'), join(ws, 'media'));
    assert.equal(await folderInside(ws, 'new/sub'), join(ws, 'new', 'sub'), 'a folder not made yet');
    await assert.rejects(folderInside(ws, 'generated'), /leads outside the workspace through a symbolic link/);
    await assert.rejects(folderInside(ws, 'generated/deeper'), /leads outside/);
    for (const bad of ['../outside', '/tmp', 'a/../../x', '']) await assert.rejects(folderInside(ws, bad), /inside the workspace folder/, bad);
    assert.equal(existsSync(join(outside, 'deeper')), false);
  });
});
