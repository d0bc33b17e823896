import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const root = join(__dirname, '..', '..');

interface Layers {
  layerRules: Linter.Config[];
}

/** Lints one planted import as if it were a file at `path`, with the layer rules `npm test` uses. */
async function plant(path: string, importLine: string): Promise<string[]> {
  const { layerRules } = (await import(join(root, 'eslint.layers.mjs'))) as Layers;
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layerRules],
  });
  const [result] = await eslint.lintText(`${importLine}\nexport const used = typeof planted;\n`, { filePath: join(root, path) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

const refused = async (path: string, spec: string) => {
  const messages = await plant(path, `import * as planted from '${spec}';`);
  assert.ok(
    messages.some((m) => m.startsWith('no-restricted-imports')),
    `${path} importing ${spec} should be refused; lint said ${JSON.stringify(messages)}`,
  );
};
const allowed = async (path: string, spec: string) => {
  const messages = await plant(path, `import * as planted from '${spec}';`);
  assert.deepEqual(messages, [], `${path} importing ${spec} should pass`);
};

describe('lint holds the layers (eslint.layers.mjs)', function () {
  this.timeout(60_000);

  it('common/ imports only common/, zod and @vscode/l10n', async () => {
    await refused('src/common/planted.ts', 'vscode');
    await refused('src/common/planted.ts', '../gateway/core/transport');
    await refused('src/common/planted.ts', '../runtime/core/engine');
    await refused('src/common/planted.ts', 'marked');
    await allowed('src/common/planted.ts', '@vscode/l10n');
    await refused('src/common/planted.ts', 'node:fs');
    await allowed('src/common/planted.ts', './money');
    await allowed('src/common/planted.ts', 'zod/mini');
  });

  it('the gateway imports neither vscode nor a feature, the platform or a webview', async () => {
    await refused('src/gateway/resources/planted.ts', 'vscode');
    await refused('src/gateway/resources/planted.ts', '../../shell/services');
    await refused('src/gateway/resources/planted.ts', '../../runtime/core/engine');
    await refused('src/gateway/core/planted.ts', '../../usage/core/report');
    await refused('src/gateway/planted.ts', '../webview/dom');
    await allowed('src/gateway/resources/planted.ts', '../core/transport');
    await allowed('src/gateway/resources/planted.ts', '../../common/money');
  });

  it('webview code imports only webview/, common/ and browser libraries', async () => {
    await refused('src/webview/planted.ts', 'vscode');
    await refused('src/webview/planted.ts', '../gateway/core/errors');
    await refused('src/webview/planted.ts', '../chat/host/session');
    await refused('src/webview/planted.ts', 'node:fs');
    await allowed('src/webview/planted.ts', '../common/chatProtocol');
    await allowed('src/webview/planted.ts', './dom');
    await allowed('src/webview/planted.ts', 'dompurify');
  });

  it('the platform never imports a feature', async () => {
    await refused('src/shell/planted.ts', '../usage/host/statusBar');
    await refused('src/shell/planted.ts', '../runtime/core/engine');
    await refused('src/shell/planted.ts', '../lm/host/access');
    await allowed('src/shell/planted.ts', '../gateway');
    await allowed('src/shell/planted.ts', './config');
  });

  it("a feature's core/ has no vscode, no host/, no platform", async () => {
    await refused('src/chat/core/planted.ts', 'vscode');
    await refused('src/chat/core/planted.ts', '../host/session');
    await refused('src/usage/core/planted.ts', '../../shell/config');
    await refused('src/search/core/planted.ts', '../../webview/dom');
    await allowed('src/chat/core/planted.ts', './store');
    await allowed('src/chat/core/planted.ts', '../../common/conversation');
    await allowed('src/search/core/planted.ts', '../../tools/pathGuard');
  });

  it("the search core's rooms: vectors/ and keywords/ are leaves, store/ takes slices only, snapshot/ never reaches the index, team/ never the local files", async () => {
    await refused('src/search/core/vectors/planted.ts', '../keywords/keywords');
    await refused('src/search/core/vectors/planted.ts', '../slices');
    await refused('src/search/core/vectors/planted.ts', 'vscode');
    await allowed('src/search/core/vectors/planted.ts', './wasmKernel');
    await refused('src/search/core/keywords/planted.ts', '../semanticIndex');
    await refused('src/search/core/keywords/planted.ts', '../../host/searchService');
    await allowed('src/search/core/keywords/planted.ts', '../../../tools/pathGuard');
    await refused('src/search/core/store/planted.ts', '../vectors/vectorIndex');
    await allowed('src/search/core/store/planted.ts', '../slices');
    await allowed('src/search/core/store/planted.ts', '../../../storage/atomicFile');
    await refused('src/search/core/snapshot/planted.ts', '../semanticIndex');
    await refused('src/search/core/snapshot/planted.ts', '../team/teamStore');
    await allowed('src/search/core/snapshot/planted.ts', '../vectors/vectorIndex');
    await allowed('src/search/core/snapshot/planted.ts', '../store/indexStore');
    await refused('src/search/core/team/planted.ts', '../store/indexStore');
    await refused('src/search/core/team/planted.ts', '../snapshot/snapshotJob');
    await refused('src/search/core/team/planted.ts', '../../../shell/config');
    await allowed('src/search/core/team/planted.ts', '../vectors/halfFloat');
    await allowed('src/search/core/team/planted.ts', '../semanticIndex');
  });

  it('the runtime serves every surface and imports none: runtime/core/ has no vscode and no platform', async () => {
    await refused('src/runtime/core/planted.ts', 'vscode');
    await refused('src/runtime/core/planted.ts', '../../chat/core/store');
    await refused('src/runtime/core/planted.ts', '../../shell/config');
    await refused('src/runtime/core/planted.ts', '../host/turnBuilder');
    await allowed('src/runtime/core/planted.ts', '../../tools/pathGuard');
    await refused('src/runtime/host/planted.ts', '../../sessions/host/agentSessions');
    await refused('src/runtime/host/planted.ts', '../../agent/host/toolbox');
    await allowed('src/runtime/host/planted.ts', '../../shell/config');
    await allowed('src/runtime/host/planted.ts', '../core/toolPolicy');
    await allowed('src/sessions/core/planted.ts', '../../runtime/core/toolPolicy');
    await refused('src/sessions/core/planted.ts', '../../runtime/host/turnBuilder');
  });

  it('a feature imports no other feature but for the pairs eslint.layers.mjs names (what they share is in the runtime or common/)', async () => {
    await refused('src/scm/host/planted.ts', '../../chat/host/session');
    await refused('src/sessions/core/planted.ts', '../../chat/core/store');
    await refused('src/sessions/host/planted.ts', '../../agent/host/feature');
    await refused('src/completions/host/planted.ts', '../../usage/host/panel');
    await refused('src/search/core/keywords/planted.ts', '../../../chat/core/store');
    await refused('src/search/host/planted.ts', '../../chat/host/session');
    await allowed('src/chat/host/planted.ts', '../../search/host/searchService');
    await allowed('src/chat/host/planted.ts', '../../editor/host/feature');
    await allowed('src/sessions/host/planted.ts', '../../runtime/host/toolbox');
    await allowed('src/scm/core/planted.ts', '../../runtime/core/tokens');
  });

  it('a model turn is run by the runtime only: no feature imports runTurn', async () => {
    const planted = async (path: string, line: string) => (await plant(path, line)).filter((m) => m.startsWith('no-restricted-imports'));
    assert.equal((await planted('src/sessions/host/planted.ts', "import { runTurn as planted } from '../../runtime/core/engine';")).length, 1);
    assert.equal((await planted('src/chat/core/planted.ts', "import { runTurn as planted } from '../../runtime/core/engine';")).length, 1);
    assert.deepEqual(await planted('src/chat/host/planted.ts', "import type { ToolRunner as planted } from '../../runtime/core/engine';"), []);
    assert.deepEqual(await planted('src/runtime/host/planted.ts', "import { runTurn as planted } from '../core/engine';"), []);
  });

  it('tools/ and storage/ stay under the features', async () => {
    await refused('src/tools/planted.ts', 'vscode');
    await refused('src/tools/planted.ts', '../shell/config');
    await refused('src/storage/planted.ts', '../search/core/store/indexStore');
    await allowed('src/tools/planted.ts', './pathGuard');
  });

  it('the lint gate npm test runs includes these rules', async () => {
    const { layerRules } = (await import(join(root, 'eslint.layers.mjs'))) as Layers;
    const config = ((await import(join(root, 'eslint.config.mjs'))) as { default: Linter.Config[] }).default;
    for (const zone of layerRules) assert.ok(config.includes(zone), `eslint.config.mjs leaves out the zone for ${String(zone.files)}`);
    // Later entries would override a zone's rule for the same files: the zones come last.
    assert.deepEqual(config.slice(-layerRules.length), layerRules);
  });
});
