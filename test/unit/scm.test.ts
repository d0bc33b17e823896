import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { askBeforeSending, fromOwnUi } from '../../src/scm/core/caller';
import { commitChange, mergeBase, parseNameStatus, readChange, recentMessages, type Verdict } from '../../src/scm/core/changes';
import { cleanCommitMessage, COMMIT_DIFF_TOKENS, COMMIT_INSTRUCTION, commitRequest, subjectsOf } from '../../src/scm/core/commitMessage';
import { boundedDiff, fileDiffOf } from '../../src/scm/core/diff';
import { scmModelOf } from '../../src/scm/core/model';
import { applyFix, fixPreview, parseFindings, placeFix, REVIEW_DIFF_TOKENS, reviewRequest } from '../../src/scm/core/review';
import { locateRepository, type GitPlace } from '../../src/tools/git';
import { isSecretPath, PathGuard, SecretFileError } from '../../src/tools/pathGuard';
import { scmAnswer } from '../emulator/scm-model';

const fileDiff = (path: string, added: string[], removed: string[] = []) =>
  [
    `diff --git a/${path} b/${path}`,
    'index 1111111..2222222 100644',
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -1,${removed.length + 1} +1,${added.length + 1} @@`,
    ' context',
    ...removed.map((l) => `-${l}`),
    ...added.map((l) => `+${l}`),
    '',
  ].join('\n');

describe('source control: the diff the model reads', () => {
  it("counts a file's lines in its hunks only; a binary file is marked", () => {
    const deleted = ['diff --git a/old.ts b/old.ts', 'deleted file mode 100644', '--- a/old.ts', '+++ /dev/null', '@@ -1 +0,0 @@', '-gone', ''].join('\n');
    const files = [
      fileDiffOf('src/a.ts', fileDiff('src/a.ts', ['x', 'y'], ['z'])),
      fileDiffOf('old.ts', deleted),
      fileDiffOf('img.png', 'diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n'),
    ];
    assert.deepEqual(
      files.map((f) => [f.path, f.added, f.removed, f.binary]),
      [
        ['src/a.ts', 2, 1, false],
        ['old.ts', 0, 1, false],
        ['img.png', 0, 0, true],
      ],
    );
  });

  it("never shows a withheld file's lines, names it; lock files and binaries are named only", () => {
    const withheld = (path: string, why: 'secret' | 'excluded', from?: string) => ({
      path,
      from,
      text: '',
      added: 0,
      removed: 0,
      binary: false,
      withheld: why,
    });
    const files = [
      withheld('.env', 'secret'),
      withheld('vendor/x.js', 'excluded'),
      fileDiffOf('package-lock.json', fileDiff('package-lock.json', ['"lockfileVersion": 3'])),
      fileDiffOf('src/a.ts', fileDiff('src/a.ts', ['const a = 1;'])),
      withheld('x.txt', 'secret', '.env.prod'),
      withheld('a\tb/.env', 'secret'),
    ];
    const d = boundedDiff(files, 10_000);
    assert.ok(!d.text.includes('lockfileVersion'));
    assert.ok(d.text.includes('const a = 1;'));
    assert.match(
      d.text,
      /- \.env \(a secret file, not shown\)\n- vendor\/x\.js \(ignored or excluded, not shown\)\n- package-lock\.json \(generated, not shown\)\n- \.env\.prod → x\.txt \(a secret file, not shown\)\n- "a\\tb\/\.env" \(a secret file, not shown\)/,
    );
    assert.deepEqual(d.shown, ['src/a.ts']);
  });

  it('cuts to the budget in equal shares: a huge file cannot push out the small ones; the cut one says so', () => {
    const big = fileDiffOf(
      'src/big.ts',
      fileDiff(
        'src/big.ts',
        Array.from({ length: 3000 }, (_, i) => `const line${i} = ${i};`),
      ),
    );
    const small = fileDiffOf('src/small.ts', fileDiff('src/small.ts', ['export const small = true;']));
    const d = boundedDiff([big, small], 1_000);
    assert.ok(d.text.includes('export const small = true;'), 'the small file whole');
    assert.deepEqual(d.cut, ['src/big.ts']);
    assert.match(d.text, /the rest of this file's diff left out: 3000 lines added/);
    assert.ok(d.tokens <= 1_050, `${d.tokens} tokens`);
    assert.ok(d.tokens >= 800, 'the budget is used');
  });

  it("reads git's NUL-separated list: names with tabs, quotes, newlines and non-ASCII as they are; renames with both names", () => {
    assert.deepEqual(parseNameStatus('M\0配置/.env\0R087\0.env\0x.txt\0A\0q"uo\tte\0D\0a\nb\0'), [
      { status: 'M', path: '配置/.env' },
      { status: 'R', from: '.env', path: 'x.txt' },
      { status: 'A', path: 'q"uo\tte' },
      { status: 'D', path: 'a\nb' },
    ]);
  });
});

/** A real repository in a temporary folder, and the chat's verdict over it (fileVerdict's rules, missing files judged by name). */
class TempRepo {
  readonly dir = mkdtempSync(join(tmpdir(), 'mg-scm-'));
  place!: GitPlace;
  constructor(
    private readonly excludes: string[] = [],
    private readonly secretFiles: string[] = [],
  ) {
    this.git('init', '-q', '-b', 'main');
    this.git('config', 'user.email', 'dev@example.com');
    this.git('config', 'user.name', 'Dev');
  }

  async open(): Promise<this> {
    this.place = (await locateRepository(this.dir))!;
    return this;
  }

  git(...args: string[]): string {
    return execFileSync('git', args, { cwd: this.dir, encoding: 'utf8' });
  }

  write(files: Record<string, string | Buffer>): void {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(this.dir, path)), { recursive: true });
      writeFileSync(join(this.dir, path), content);
    }
  }

  readonly verdict: Verdict = async (path) => {
    const abs = join(this.dir, path);
    if (isSecretPath(abs, this.secretFiles)) return 'secret';
    try {
      await new PathGuard([{ name: 'repo', path: this.dir }], this.excludes, this.secretFiles).resolve(abs, { allowMissing: true });
      return undefined;
    } catch (err) {
      return err instanceof SecretFileError ? 'secret' : 'excluded';
    }
  };

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('source control: secret files never reach the model, whatever git does with their names (attacks)', function () {
  this.timeout(60_000);
  const SECRETS = [
    'DB_PASSWORD=hunter2',
    'TAB_SECRET',
    'QUOTE_SECRET',
    'NEWLINE_SECRET',
    'RENAMED_SECRET',
    'BACK_SECRET',
    'BINARY_SECRET',
    'MODE_SECRET',
    'NPM_SECRET',
    'IGNORED_CONTENT',
    'EXCLUDED_CONTENT',
    'DIR_SECRET',
  ];
  let r: TempRepo;

  before(async () => {
    r = await new TempRepo(['vendor'], ['*.env']).open();
    r.write({
      '.gitignore': 'build/\n',
      'src/a.ts': 'export const a = 1;\n',
      '.env': 'RENAMED_SECRET=1\nB=2\nC=3\nD=4\n',
      'notes.txt': 'BACK_SECRET=1\nB=2\nC=3\nD=4\n',
      id_rsa: 'MODE_SECRET\n',
      '.npmrc': '//registry.example.com/:_authToken=NPM_SECRET\n',
      'vendor/lib.js': 'lib();\n',
      cfg: 'plain = true\n',
    });
    r.git('add', '-A');
    r.git('commit', '-qm', 'feat: start');
    // The change: secret files under every name git quotes, renamed both ways, binary, mode-changed, deleted.
    r.git('mv', '.env', 'x.txt');
    r.git('mv', 'notes.txt', '.env.production');
    r.write({
      'src/a.ts': 'export const a = 2;\n',
      '配置/.env': 'DB_PASSWORD=hunter2\n',
      'q"uo\tte/.env': 'TAB_SECRET=1\n',
      '"quo"te".env': 'QUOTE_SECRET=1\n',
      'a\nb/.env': 'NEWLINE_SECRET=1\n',
      'x.txt': 'RENAMED_SECRET=1\nB=2\nC=3\nD=5\n',
      '.env.production': 'BACK_SECRET=1\nB=2\nC=3\nD=5\n',
      // A binary secret that .gitattributes tells git to diff as text.
      '.gitattributes': '*.p12 diff\n',
      '証明書/server.p12': Buffer.concat([Buffer.from('BINARY_SECRET\n'), Buffer.from([0, 1, 2, 255])]),
      id_rsa: 'MODE_SECRET changed\n',
    });
    chmodSync(join(r.dir, 'id_rsa'), 0o755);
    r.git('rm', '-q', '.npmrc');
    r.write({ 'build/out.js': 'IGNORED_CONTENT\n' });
    r.git('add', '-f', 'build/out.js');
    // A file that becomes a folder: the file's own diff must not take the folder's secret with it.
    r.git('rm', '-q', 'cfg');
    r.write({ 'vendor/lib.js': 'EXCLUDED_CONTENT\n', 'cfg/.env': 'DIR_SECRET=1\n', 'cfg/ok.txt': 'fine\n', '文档/说明.md': 'HELLO_DOC\n' });
    r.git('add', '-A');
  });

  after(() => r.remove());

  it('a commit message: no secret, ignored or excluded content, no hunk of theirs; each named only', async () => {
    const { staged, files } = await commitChange(r.place, r.verdict);
    assert.ok(staged);
    const d = boundedDiff(files, COMMIT_DIFF_TOKENS);
    for (const s of SECRETS) assert.ok(!d.text.includes(s), `${s} would be sent:\n${d.text}`);
    assert.ok(!/GIT binary patch|^\+.*_SECRET/m.test(d.text));
    // What may be shown is, under its own name (non-ASCII included).
    assert.ok(d.text.includes('+export const a = 2;') && d.text.includes('+HELLO_DOC') && d.text.includes('+fine'));
    assert.deepEqual([...d.shown].sort(), ['.gitattributes', 'cfg', 'cfg/ok.txt', 'src/a.ts', '文档/说明.md'].sort());
    assert.deepEqual(Object.fromEntries(d.left.map((l) => [l.name, l.why])), {
      '配置/.env': 'secret',
      '"q\\"uo\\tte/.env"': 'secret',
      '"\\"quo\\"te\\".env"': 'secret',
      // A line break in a name: the path guard's globs miss it, so it is withheld unjudged.
      '"a\\nb/.env"': 'excluded',
      '.env → x.txt': 'secret',
      'notes.txt → .env.production': 'secret',
      '証明書/server.p12': 'secret',
      id_rsa: 'secret',
      '.npmrc': 'secret',
      'build/out.js': 'excluded',
      'vendor/lib.js': 'excluded',
      'cfg/.env': 'secret',
    });
    // The deleted file `cfg`'s diff is its own: one file, its one line removed.
    const cfg = files.find((f) => f.path === 'cfg')!;
    assert.deepEqual([cfg.added, cfg.removed, cfg.text.match(/^diff --git/gm)?.length], [0, 1, 1]);
  });

  it('a review of the working tree and of a branch: a rename of `.env` to `x.txt` and back is withheld both ways', async () => {
    const b = await new TempRepo().open();
    try {
      b.write({ '.env': 'RENAMED_SECRET=1\nB=2\nC=3\nD=4\n', 'src/a.ts': 'a();\n' });
      b.git('add', '-A');
      b.git('commit', '-qm', 'start');
      b.git('checkout', '-qb', 'feature');
      b.git('mv', '.env', 'x.txt');
      b.write({ 'x.txt': 'RENAMED_SECRET=1\nB=2\nC=3\nD=5\n', 'src/a.ts': 'a();\nb();\n' });
      b.git('commit', '-qam', 'move');
      const base = await mergeBase(b.place, 'main');
      assert.ok(base);
      const branch = boundedDiff(await readChange(b.place, [base, 'HEAD'], b.verdict), REVIEW_DIFF_TOKENS);
      assert.ok(!branch.text.includes('RENAMED_SECRET') && !branch.text.includes('D=5'), branch.text);
      assert.deepEqual(
        branch.left.map((l) => l.name),
        ['.env → x.txt'],
      );
      // …and back, in the working tree.
      b.git('mv', 'x.txt', '.env');
      b.write({ '.env': 'RENAMED_SECRET=1\nB=2\nC=3\nD=6\n' });
      const tree = boundedDiff(await readChange(b.place, ['HEAD'], b.verdict), REVIEW_DIFF_TOKENS);
      assert.ok(!tree.text.includes('RENAMED_SECRET') && !tree.text.includes('D=6'), tree.text);
      assert.deepEqual(
        tree.left.map((l) => l.name),
        ['x.txt → .env'],
      );
    } finally {
      b.remove();
    }
  });

  it('a branch name is never taken as an option of git; recent messages come from git too', async () => {
    const out = join(r.dir, 'written-by-git');
    assert.equal(await mergeBase(r.place, `--output=${out}`), undefined);
    assert.equal(await mergeBase(r.place, 'no-such-branch'), undefined);
    assert.ok(!existsSync(out));
    assert.deepEqual(subjectsOf(await recentMessages(r.place, 10)), ['feat: start']);
  });
});

describe('source control: commit messages', () => {
  it("asks with the diff, the repository's recent subjects and its rules", () => {
    const r = commitRequest({
      model: 'm',
      diff: 'DIFF\n',
      staged: true,
      recentSubjects: ['feat(x): one', 'fix: two'],
      rules: '<rules file="AGENTS.md">Subjects in English.</rules>',
    });
    const [system, user] = r.messages as { content: string }[];
    assert.ok(user.content.startsWith(COMMIT_INSTRUCTION));
    assert.match(user.content, /<recent_subjects>\n- feat\(x\): one\n- fix: two\n<\/recent_subjects>/);
    assert.match(user.content, /<diff kind="staged">\nDIFF\n<\/diff>/);
    assert.match(system.content, /Subjects in English/);
    assert.ok((r.max_tokens ?? 0) <= 400, 'a message is short: the output is capped');
  });

  it('cleans the answer to a message: fences, quotes and a "Commit message:" label off', () => {
    assert.equal(cleanCommitMessage('```\nfeat: add x\n\nBody.  \n```'), 'feat: add x\n\nBody.');
    assert.equal(cleanCommitMessage('"Fix the parser"'), 'Fix the parser');
    assert.equal(cleanCommitMessage('Commit message: Add tests'), 'Add tests');
    assert.equal(cleanCommitMessage('Say "hi" to "them"'), 'Say "hi" to "them"', 'inner quotes kept');
    assert.deepEqual(subjectsOf(['feat: a\n\nbody', '', 'fix: b']), ['feat: a', 'fix: b']);
  });

  it("the emulator's model follows the repository's style", () => {
    const diff = fileDiff('src/greet.ts', ['export function wave(): void {}']);
    const ask = (subjects: string[]) =>
      scmAnswer(
        `${COMMIT_INSTRUCTION}\n\n<recent_subjects>\n${subjects.map((s) => `- ${s}`).join('\n')}\n</recent_subjects>\n\n<diff kind="staged">\n${diff}</diff>`,
      );
    assert.equal(ask(['feat: a', 'fix(b): c']), 'feat: add wave to greet.ts');
    assert.equal(ask(['Add a', 'Fix c']), 'Add wave to greet.ts');
  });
});

describe('source control: reviews', () => {
  it('reads findings from a fence, a bare array or {findings}; drops files not in the diff and malformed items', () => {
    const items = [
      { path: 'src/a.ts', line: 3, severity: 'WARNING', message: 'm1', fix: { old: 'a == b', new: 'a === b' } },
      { path: 'b/src/a.ts', line: '4', severity: 'blocker', message: 'm2', fix: { new: 'no old' } },
      { path: 'elsewhere.ts', line: 1, severity: 'error', message: 'not in the diff' },
      { path: 'src/a.ts', line: 0, message: 'no line' },
    ];
    for (const answer of ['```json\n' + JSON.stringify(items) + '\n```', `Here: ${JSON.stringify(items)}`, JSON.stringify({ findings: items })]) {
      const found = parseFindings(answer, ['src/a.ts']);
      assert.deepEqual(found, [
        { path: 'src/a.ts', line: 3, severity: 'warning', message: 'm1', fix: { old: 'a == b', new: 'a === b' } },
        { path: 'src/a.ts', line: 4, severity: 'warning', message: 'm2', fix: undefined },
      ]);
    }
    assert.equal(parseFindings('Looks good to me!', ['src/a.ts']), undefined);
    assert.deepEqual(parseFindings('[]', ['src/a.ts']), []);
  });

  it('a fix is made at its own line, and nowhere else: not at the same text elsewhere (attack), not when it moved', () => {
    const text = 'if (a == b) x();\nfoo();\nif (a == b) y();\n';
    assert.equal(applyFix(text, 3, { old: 'a == b', new: 'a === b' }), 'if (a == b) x();\nfoo();\nif (a === b) y();\n');
    assert.equal(applyFix(text, 1, { old: 'a == b', new: 'a === b' }), 'if (a === b) x();\nfoo();\nif (a == b) y();\n');
    // A finding on line 2 whose "old" text is a security check 30 lines below: refused, the check untouched.
    const guarded = 'const x = 1;\nlet isAdmin = user.admin;\n' + 'foo();\n'.repeat(30) + 'if (isAdmin === false) deny();\n';
    assert.deepEqual(applyFix(guarded, 2, { old: 'isAdmin === false', new: 'isAdmin === true' }), { refused: 'moved' });
    assert.deepEqual(placeFix(text, 2, { old: 'a == b', new: '' }), { refused: 'moved' });
    assert.deepEqual(placeFix('a == b || a == b\n', 1, { old: 'a == b', new: 'a === b' }), { refused: 'ambiguous' });
    assert.deepEqual(placeFix(text, 40, { old: 'a == b', new: 'a === b' }), { refused: 'moved' });
    // Several lines from the finding's line; a CRLF file keeps its line ends.
    assert.equal(applyFix('a\r\nb\r\nc\r\n', 2, { old: 'b\nc', new: 'B\nC' }), 'a\r\nB\r\nC\r\n');
    assert.equal(fixPreview({ old: '  s == "";\n', new: '  s === "";' }), '-  s == "";\n+  s === "";');
    assert.equal(fixPreview({ old: 'debug();', new: '' }), '-debug();');
  });

  it("the emulator's reviewer finds `==` on the added line, at its line in the new file", () => {
    const diff = [
      'diff --git a/src/g.ts b/src/g.ts',
      '--- a/src/g.ts',
      '+++ b/src/g.ts',
      '@@ -1,3 +1,6 @@',
      ' a',
      ' b',
      ' c',
      '+',
      '+export const empty = (s: string) =>',
      '+  s == "";',
      '',
    ].join('\n');
    const r = reviewRequest({ model: 'm', diff, scope: 'the working tree', rules: '' });
    const found = parseFindings(scmAnswer((r.messages[1] as { content: string }).content)!, ['src/g.ts']);
    assert.equal(found?.length, 1);
    assert.equal(found[0].line, 6);
    assert.deepEqual(found[0].fix, { old: '  s == "";', new: '  s === "";' });
  });
});

describe('source control: who may spend through the commands', () => {
  class Uri {
    constructor(readonly path: string) {}
  }
  const isUri = (v: unknown) => v instanceof Uri;
  /** As VS Code passes it to the Source Control title bar's commands: a class whose properties are getters. */
  class SourceControl {
    readonly handle = 3;
    constructor(private readonly root: Uri) {}
    get id() {
      return 'git';
    }
    get rootUri() {
      return this.root;
    }
    get inputBox() {
      return { value: '' };
    }
  }
  const root = new Uri('/repo');
  const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

  it("VS Code's own calls need no step: the palette, the title bar's repository, the box's button", () => {
    assert.ok(fromOwnUi([], isUri));
    assert.ok(fromOwnUi([undefined, undefined], isUri));
    assert.ok(fromOwnUi([new SourceControl(root)], isUri));
    assert.ok(fromOwnUi([root, [{ resourceGroupId: 'index', resources: [new Uri('/repo/a.ts')] }], token], isUri));
    assert.equal(askBeforeSending(true, 100), undefined);
    assert.equal(askBeforeSending(true, 20_000, 12_000), 'large');
  });

  it("another extension's arguments are asked about before anything is sent, however small the change (attack)", () => {
    const calls: unknown[][] = [
      [{ rootUri: root }],
      [{ id: 'git', rootUri: root, inputBox: { value: '' } }],
      [new SourceControl(root), 'working-tree'],
      [undefined, 'branch:main'],
      [root],
      [root, 'not the groups'],
      [root, [{ resourceGroupId: 'index', resources: [] }], token, 'more'],
      ['/repo'],
      // The Git extension's API repository (another extension can hold it): not the view's SourceControl.
      [
        Object.assign(
          Object.create({
            get inputBox() {
              return {};
            },
          }) as object,
          { rootUri: root },
        ),
      ],
    ];
    for (const args of calls) {
      assert.equal(fromOwnUi(args, isUri), false, JSON.stringify(args));
      assert.equal(askBeforeSending(fromOwnUi(args, isUri), 10, 12_000), 'caller');
    }
  });
});

describe("source control: the model is the person's choice", () => {
  it("a cloned repository's settings never choose where its diff goes (attack); the log names what was ignored", () => {
    assert.deepEqual(scmModelOf(undefined, { workspaceValue: 'attacker-model' }), { model: '', ignored: ['modelGateway.defaultModels.chat'] });
    assert.deepEqual(scmModelOf({ workspaceFolderValue: 'attacker-model' }, { globalValue: 'gpt-4o-mini' }), {
      model: 'gpt-4o-mini',
      ignored: ['modelGateway.scm.model'],
    });
    assert.deepEqual(scmModelOf({ globalValue: 'small', workspaceValue: 'x' }, { globalValue: 'big', workspaceValue: 'y' }), {
      model: 'small',
      ignored: ['modelGateway.scm.model', 'modelGateway.defaultModels.chat'],
    });
    assert.deepEqual(scmModelOf(undefined, { globalValue: ' chat-model ' }), { model: 'chat-model', ignored: [] });
  });
});
