import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { listFiles, PackageManager } from '@vscode/vsce';

const ROOT = join(__dirname, '..', '..');

/** Every .ts file under a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * The package is what users run: a bundle the build writes but the .vsix leaves out (as
 * `dist/mcp.js` once was) works in every test of the build and fails for every user.
 */
describe('the package holds what the build writes and the code loads', function () {
  this.timeout(60_000);
  const outputs = JSON.parse(execFileSync(process.execPath, ['esbuild.js', '--list-outputs'], { cwd: ROOT, encoding: 'utf8' })) as string[];

  it("every file esbuild.js writes under dist/ is in the .vsix (vsce's own file list, .vscodeignore applied)", async () => {
    // vsce lists the files that exist: the build runs before the unit suite in `npm test`.
    assert.ok(existsSync(join(ROOT, 'dist', 'extension.js')), 'dist/ is built (node esbuild.js) before this test');
    const packaged = new Set((await listFiles({ cwd: ROOT, packageManager: PackageManager.None })).map((f) => f.replace(/\\/g, '/')));
    assert.ok(outputs.length >= 10, `the build's outputs are listed (${outputs.join(', ')})`);
    assert.deepEqual(
      outputs.filter((f) => !packaged.has(f)),
      [],
      'left out of the package',
    );
    // And nothing of the build the package does not need: source maps stay out.
    assert.deepEqual(
      [...packaged].filter((f) => f.endsWith('.map')),
      [],
    );
  });

  it('every bundle, stylesheet or file the code loads from dist/ at run time is one the build writes', () => {
    const loaded = new Set<string>();
    for (const file of sources(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      // require('./gateway.js') beside the host bundle; a worker's script beside it; ['dist', 'x.css'] for a webview.
      for (const m of text.matchAll(/require\('\.\/([\w-]+\.js)'\)/g)) loaded.add(`dist/${m[1]}`);
      for (const m of text.matchAll(/join\(__dirname, '([\w-]+\.(?:js|wasm))'\)/g)) loaded.add(`dist/${m[1]}`);
      for (const m of text.matchAll(/\[('dist'(?:, '[\w.-]+')+)\]/g)) loaded.add(m[1].replace(/'/g, '').split(', ').join('/'));
      assert.ok(
        !/'media', '[\w-]+\.(?:css|js)'/.test(text),
        `${relative(ROOT, file)} loads a stylesheet or script from media/ (the package ships them built, from dist/)`,
      );
    }
    assert.ok(loaded.size >= 6, `found the code's loads: ${[...loaded].join(', ')}`);
    assert.deepEqual(
      [...loaded].filter((f) => !outputs.includes(f)),
      [],
      'loaded but never built',
    );
  });
});
