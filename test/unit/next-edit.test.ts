import { strict as assert } from 'node:assert';
import { EditHistory, lineEditBetween, NEXT_EDIT_INSTRUCTION, nextEditRequest, parseNextEdit, WINDOW_LINES } from '../../src/completions/core/nextEdit';
import { nextEditAnswer } from '../emulator/next-edit-model';

const FILE = 'function area(w: number) {\n  const count = w * 2;\n  console.log(count);\n  return count + 1;\n}\n';

describe('next-edit suggestions: the core', () => {
  it('settles typing between pauses into line edits (a word typed letter by letter is one edit)', () => {
    const h = new EditHistory(FILE);
    assert.equal(h.settle(FILE), undefined, 'no change, no edit');
    const renamed = FILE.replace('const count', 'const total');
    const e = h.settle(renamed);
    assert.deepEqual(e, { line: 1, before: ['  const count = w * 2;'], after: ['  const total = w * 2;'] });
    assert.deepEqual(lineEditBetween('a\nb\n', 'a\nx\ny\nb\n'), { line: 1, before: [], after: ['x', 'y'] });
    for (let i = 0; i < 7; i++) h.settle(`${renamed}// ${i}\n`);
    assert.equal(h.recent.length, 5, 'the latest five kept');
  });

  it('asks with the recent edits and the numbered lines around the cursor only', () => {
    const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const r = nextEditRequest({
      model: 'm',
      path: 'a.ts',
      language: 'typescript',
      text: long,
      cursorLine: 100,
      edits: [{ line: 100, before: ['old'], after: ['line 100'] }],
    });
    const user = (r.messages[1] as { content: string }).content;
    assert.ok(user.startsWith(NEXT_EDIT_INSTRUCTION));
    assert.match(user, /@@ line 101\n-old\n\+line 100/);
    assert.ok(
      user.includes(`${101 - WINDOW_LINES}| line ${100 - WINDOW_LINES}`) && !user.includes(`${100 - WINDOW_LINES}| line`),
      'the window starts 40 lines up',
    );
    assert.ok(user.includes(`${101 + WINDOW_LINES}| line ${100 + WINDOW_LINES}`) && !user.includes(`${102 + WINDOW_LINES}| line`), 'and ends 40 lines down');
  });

  it('reads the answer into an edit at the occurrence nearest its line; refuses undo, no-ops, text not shown and non-JSON', () => {
    const text = FILE.replace('const count', 'const total');
    const edits = [{ line: 1, before: ['  const count = w * 2;'], after: ['  const total = w * 2;'] }];
    const e = parseNextEdit('{"line": 3, "old": "  console.log(count);", "new": "  console.log(total);"}', text, 1, edits);
    assert.ok(e);
    assert.equal(text.slice(e.start, e.end), 'count', 'only what differs is replaced');
    assert.equal(e.text, 'total');
    assert.equal(e.line, 2);
    assert.equal(parseNextEdit('{}', text, 1, edits), undefined);
    assert.equal(parseNextEdit('I would rename it.', text, 1, edits), undefined);
    assert.equal(parseNextEdit('{"line": 2, "old": "  const total = w * 2;", "new": "  const count = w * 2;"}', text, 1, edits), undefined, 'an undo');
    assert.equal(parseNextEdit('{"line": 3, "old": "nowhere()", "new": "x"}', text, 1, edits), undefined);
    assert.equal(parseNextEdit('{"line": 3, "old": "count", "new": "count"}', text, 1, edits), undefined);
    const far = `${'\n'.repeat(100)}${text}`;
    assert.equal(
      parseNextEdit('{"line": 103, "old": "  console.log(count);", "new": "  console.log(total);"}', far, 0, edits),
      undefined,
      'outside the lines shown',
    );
  });

  it("the emulator's model renames the nearest remaining use, then the next, then stops", () => {
    let text = FILE.replace('const count', 'const total');
    const h = new EditHistory(FILE);
    h.settle(text);
    const ask = (cursor: number) =>
      nextEditAnswer(
        (nextEditRequest({ model: 'm', path: 'a.ts', language: 'typescript', text, cursorLine: cursor, edits: h.recent }).messages[1] as { content: string })
          .content,
      )!;
    for (const expected of ['  console.log(total);', '  return total + 1;']) {
      const e = parseNextEdit(ask(1), text, 1, h.recent);
      assert.ok(e, `a suggestion towards ${expected}`);
      text = text.slice(0, e.start) + e.text + text.slice(e.end);
      assert.ok(text.includes(expected));
      h.settle(text);
    }
    assert.equal(parseNextEdit(ask(3), text, 3, h.recent), undefined, 'nothing left to rename');
  });
});
