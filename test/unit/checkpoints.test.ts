import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyRestore, planRestore } from '../../src/chat/core/checkpoints';
import { PathGuard } from '../../src/tools/pathGuard';
import { WorkspaceTools, type ProposedEdit } from '../../src/tools/workspaceTools';

describe('checkpoints: undo and restore of accepted edits', () => {
  const root = mkdtempSync(join(tmpdir(), 'mg-checkpoint-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const original = 'line one\nline two\r\nline three — ünïcode\n';
  writeFileSync(join(root, 'a.txt'), original);

  it('puts every file of a turn back byte for byte and removes the files it created', async () => {
    const written: ProposedEdit[] = [];
    const tools = WorkspaceTools.forFolders([{ name: 'w', path: root }], [], {
      approver: { approve: () => Promise.resolve({ accepted: true }) },
      onWritten: (e) => written.push(e),
    });
    await tools.run('replace_in_file', { path: 'a.txt', old_string: 'line two', new_string: 'LINE 2' });
    await tools.run('replace_in_file', { path: 'a.txt', old_string: 'line one', new_string: 'LINE 1' });
    await tools.run('create_file', { path: 'new/b.txt', content: 'created' });
    assert.equal(written.length, 3);
    const edits = written.map((e) => ({ path: e.path.display, before: e.kind === 'create' ? null : e.before, after: e.after }));
    const guard = new PathGuard([{ name: 'w', path: root }]);
    const plan = await planRestore(guard, edits);
    assert.deepEqual(
      plan.map((s) => [s.path, s.restoreTo === null ? 'remove' : 'write', s.changedSince]),
      [
        ['a.txt', 'write', false],
        ['new/b.txt', 'remove', false],
      ],
    );
    await applyRestore(plan);
    assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), original);
    assert.equal(existsSync(join(root, 'new', 'b.txt')), false);
  });

  it('says when a file changed since the edit (restoring would overwrite that)', async () => {
    const guard = new PathGuard([{ name: 'w', path: root }]);
    writeFileSync(join(root, 'a.txt'), 'edited by hand\n');
    const [step] = await planRestore(guard, [{ path: 'a.txt', before: original, after: 'what the model wrote\n' }]);
    assert.equal(step.changedSince, true);
    assert.equal(step.current, 'edited by hand\n');
  });

  it('refuses to restore through a path outside the workspace', async () => {
    const guard = new PathGuard([{ name: 'w', path: root }]);
    await assert.rejects(planRestore(guard, [{ path: '../escape.txt', before: null, after: 'x' }]), /contains "\.\."/);
  });
});
