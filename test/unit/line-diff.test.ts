import { strict as assert } from 'node:assert';
import { inlinePreview, lineDelta } from '../../src/chat/core/lineDiff';

describe('line diff of a proposed edit', () => {
  const before = 'a\nb\nc\nd\n';

  it('counts the lines added and removed between the common head and tail', () => {
    assert.deepEqual(lineDelta(before, 'a\nB\nc\nd\n'), { added: 1, removed: 1 });
    assert.deepEqual(lineDelta('', 'x\ny'), { added: 2, removed: 0 });
    assert.deepEqual(lineDelta(before, before), { added: 0, removed: 0 });
  });

  it('previews a small change with a line of context each side, numbered from its first line', () => {
    assert.deepEqual(inlinePreview(before, 'a\nB\nc\nd\n', 12), {
      startLine: 1,
      lines: [
        { kind: ' ', text: 'a' },
        { kind: '-', text: 'b' },
        { kind: '+', text: 'B' },
        { kind: ' ', text: 'c' },
      ],
    });
    assert.deepEqual(inlinePreview('', 'new file', 12)?.lines, [{ kind: '+', text: 'new file' }]);
  });

  it('leaves a larger change (or none) to the diff editor', () => {
    const big = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    assert.equal(inlinePreview('', big, 12), undefined);
    assert.equal(inlinePreview(before, before, 12), undefined);
    assert.equal(inlinePreview(before, 'a\nB\nc\nd\n', 0), undefined, '0: always the diff editor');
  });

  it('cuts very long lines', () => {
    const p = inlinePreview('', 'x'.repeat(1000), 12)!;
    assert.equal(p.lines[0].text.length, 401);
  });
});
