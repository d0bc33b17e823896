import { strict as assert } from 'node:assert';
import { cleanCommitMessage, COMMIT_INSTRUCTION, commitRequest, subjectsOf } from '../../src/scm/core/commitMessage';
import { boundedDiff, splitDiff } from '../../src/scm/core/diff';
import { applyFix, locateFix, parseFindings, reviewRequest } from '../../src/scm/core/review';
import { scmAnswer } from '../emulator/scm-model';

const fileDiff = (path: string, added: string[], removed: string[] = []) =>
  [`diff --git a/${path} b/${path}`, 'index 1111111..2222222 100644', `--- a/${path}`, `+++ b/${path}`, `@@ -1,${removed.length + 1} +1,${added.length + 1} @@`, ' context', ...removed.map((l) => `-${l}`), ...added.map((l) => `+${l}`), ''].join('\n');

describe('source control: the diff the model reads', () => {
  it('splits a diff per file with its counts; a deletion keeps its old path', () => {
    const deleted = ['diff --git a/old.ts b/old.ts', 'deleted file mode 100644', '--- a/old.ts', '+++ /dev/null', '@@ -1 +0,0 @@', '-gone', ''].join('\n');
    const files = splitDiff(fileDiff('src/a.ts', ['x', 'y'], ['z']) + deleted + 'diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n');
    assert.deepEqual(
      files.map((f) => [f.path, f.added, f.removed, f.binary]),
      [
        ['src/a.ts', 2, 1, false],
        ['old.ts', 0, 1, false],
        ['img.png', 0, 0, true],
      ],
    );
  });

  it("never shows a secret or excluded file's lines, names it; lock files and binaries are named only", () => {
    const files = splitDiff(fileDiff('.env', ['API_KEY=sk-live-secret']) + fileDiff('vendor/x.js', ['ignored()']) + fileDiff('package-lock.json', ['"lockfileVersion": 3']) + fileDiff('src/a.ts', ['const a = 1;']));
    const d = boundedDiff(files, 10_000, (p) => (p === '.env' ? 'secret' : p.startsWith('vendor/') ? 'excluded' : undefined));
    assert.ok(!d.text.includes('sk-live-secret'));
    assert.ok(!d.text.includes('ignored()'));
    assert.ok(!d.text.includes('lockfileVersion'));
    assert.ok(d.text.includes('const a = 1;'));
    assert.match(d.text, /- \.env \(a secret file, not shown\)\n- vendor\/x\.js \(ignored or excluded, not shown\)\n- package-lock\.json \(generated, not shown\)/);
    assert.deepEqual(d.shown, ['src/a.ts']);
  });

  it('cuts to the budget in equal shares: a huge file cannot push out the small ones; the cut one says so', () => {
    const big = fileDiff('src/big.ts', Array.from({ length: 3000 }, (_, i) => `const line${i} = ${i};`));
    const small = fileDiff('src/small.ts', ['export const small = true;']);
    const d = boundedDiff(splitDiff(big + small), 1_000, () => undefined);
    assert.ok(d.text.includes('export const small = true;'), 'the small file whole');
    assert.deepEqual(d.cut, ['src/big.ts']);
    assert.match(d.text, /the rest of this file's diff left out: 3000 lines added/);
    assert.ok(d.tokens <= 1_050, `${d.tokens} tokens`);
    assert.ok(d.tokens >= 800, 'the budget is used');
  });
});

describe('source control: commit messages', () => {
  it("asks with the diff, the repository's recent subjects and its rules", () => {
    const r = commitRequest({ model: 'm', diff: 'DIFF\n', staged: true, recentSubjects: ['feat(x): one', 'fix: two'], rules: '<rules file="AGENTS.md">Subjects in English.</rules>' });
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
    const ask = (subjects: string[]) => scmAnswer(`${COMMIT_INSTRUCTION}\n\n<recent_subjects>\n${subjects.map((s) => `- ${s}`).join('\n')}\n</recent_subjects>\n\n<diff kind="staged">\n${diff}</diff>`);
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

  it('a fix replaces the occurrence nearest its line, and none when the text changed since', () => {
    const text = 'if (a == b) x();\nfoo();\nif (a == b) y();\n';
    assert.equal(applyFix(text, 3, { old: 'a == b', new: 'a === b' }), 'if (a == b) x();\nfoo();\nif (a === b) y();\n');
    assert.equal(applyFix(text, 1, { old: 'a == b', new: 'a === b' }), 'if (a === b) x();\nfoo();\nif (a == b) y();\n');
    assert.equal(locateFix(text, 2, { old: 'c == d' }), undefined);
  });

  it("the emulator's reviewer finds `==` on the added line, at its line in the new file", () => {
    const diff = ['diff --git a/src/g.ts b/src/g.ts', '--- a/src/g.ts', '+++ b/src/g.ts', '@@ -1,3 +1,6 @@', ' a', ' b', ' c', '+', '+export const empty = (s: string) =>', '+  s == "";', ''].join('\n');
    const r = reviewRequest({ model: 'm', diff, scope: 'the working tree', rules: '' });
    const found = parseFindings(scmAnswer((r.messages[1] as { content: string }).content)!, ['src/g.ts']);
    assert.equal(found?.length, 1);
    assert.equal(found[0].line, 6);
    assert.deepEqual(found[0].fix, { old: '  s == "";', new: '  s === "";' });
  });
});
