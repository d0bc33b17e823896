import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The package a bare import names (`highlight.js/lib/core` → `highlight.js`, `@scope/pkg/x` → `@scope/pkg`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('what ships is listed as a runtime dependency', () => {
  it('every package the extension, client or webview code imports is in dependencies (so an audit of runtime dependencies sees it)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const imported = new Set<string>();
    for (const file of sources(join(ROOT, 'src'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'([^'.][^']*)'/gm)) {
        if (!m[1].startsWith('node:') && m[1] !== 'vscode') imported.add(packageOf(m[1]));
      }
    }
    // The codicon font is copied into the bundle by esbuild.js, not imported.
    imported.add('@vscode/codicons');
    const missing = [...imported].filter((p) => !(p in pkg.dependencies)).sort();
    assert.deepEqual(missing, [], 'shipped but not in dependencies');
    assert.ok(imported.size >= 8, `found ${imported.size} imported packages`);
  });
});
