import { strict as assert } from 'node:assert';
import { includeActiveEditor, mentionAt, mergeAttachments, planReconcile, upsertTurn } from '../../src/webview/reducer';

const t = (id: string, v = 0) => ({ id, v });

describe('chat view state (pure reducer, run in Node)', () => {
  it('adds new turns at the end and updates kept ones without redrawing', () => {
    const plan = planReconcile([t('u1'), t('a1')], [t('u1'), t('a1', 1), t('u2'), t('a2')]);
    assert.equal(plan.kind, 'patch');
    if (plan.kind !== 'patch') return;
    assert.deepEqual(
      plan.add.map((x) => x.id),
      ['u2', 'a2'],
    );
    assert.deepEqual(
      plan.update.map((x) => x.id),
      ['u1', 'a1'],
    );
    assert.deepEqual(plan.remove, []);
  });

  it('removes the turns a retry or an edit replaced, and adds their successors', () => {
    const plan = planReconcile([t('u1'), t('a1'), t('u2'), t('a2')], [t('u1'), t('a1'), t('u3'), t('a3')]);
    assert.equal(plan.kind, 'patch');
    if (plan.kind !== 'patch') return;
    assert.deepEqual(plan.remove, ['u2', 'a2']);
    assert.deepEqual(
      plan.add.map((x) => x.id),
      ['u3', 'a3'],
    );
  });

  it('redraws when kept turns change order', () => {
    assert.equal(planReconcile([t('u1'), t('a1')], [t('a1'), t('u1')]).kind, 'redraw');
    assert.equal(planReconcile([], [t('u1')]).kind, 'patch');
  });

  it('puts a reported turn in its place, or at the end', () => {
    assert.deepEqual(upsertTurn([t('a'), t('b')], t('a', 2)), [t('a', 2), t('b')]);
    assert.deepEqual(upsertTurn([t('a')], t('c')), [t('a'), t('c')]);
  });

  it('keeps each attachment once', () => {
    const img = { name: 'p.png', mediaType: 'image/png' as const, data: 'AAAA', detail: 'auto' as const };
    const ctx = { label: 'src/a.ts', text: 'x' };
    const merged = mergeAttachments(
      { images: [img], context: [ctx] },
      { images: [{ ...img, name: 'again.png' }], context: [ctx, { label: 'src/a.ts', text: 'y' }] },
    );
    assert.equal(merged.images.length, 1);
    assert.deepEqual(
      merged.context.map((c) => c.text),
      ['x', 'y'],
    );
  });

  it('sends the active editor unless removed for that file, too large, or attached by hand', () => {
    const active = { label: 'src/a.ts', path: 'src/a.ts', tooLarge: false };
    assert.equal(includeActiveEditor(active, undefined, []), true);
    assert.equal(includeActiveEditor(active, 'src/a.ts', []), false);
    assert.equal(includeActiveEditor(active, 'src/b.ts', []), true, 'removed for another file only');
    assert.equal(includeActiveEditor({ ...active, tooLarge: true }, undefined, []), false);
    assert.equal(includeActiveEditor(active, undefined, [{ label: 'src/a.ts', text: '' }]), false);
    assert.equal(includeActiveEditor(null, undefined, []), false);
  });

  it('finds the @ or # mention being typed before the cursor, only at a word start', () => {
    assert.deepEqual(mentionAt('look at @src/ma', 15), { start: 8, query: 'src/ma', trigger: '@' });
    assert.deepEqual(mentionAt('#', 1), { start: 0, query: '', trigger: '@' });
    assert.deepEqual(mentionAt('see @a.ts and more', 9), { start: 4, query: 'a.ts', trigger: '@' });
    assert.equal(mentionAt('mail me@example', 15), undefined, 'not inside a word');
    assert.equal(mentionAt('@a.ts done', 10), undefined, 'the cursor left the mention');
  });

  it('finds an MCP prompt being typed: / only as the first character of the input', () => {
    assert.deepEqual(mentionAt('/every', 6), { start: 0, query: 'every', trigger: '/' });
    assert.deepEqual(mentionAt('/', 1), { start: 0, query: '', trigger: '/' });
    assert.equal(mentionAt('a/b', 3), undefined, 'not inside a word');
    assert.equal(mentionAt('see /usr', 8), undefined, 'not after other text');
    assert.equal(mentionAt('/simple done', 12), undefined, 'the cursor left the prompt name');
  });
});
