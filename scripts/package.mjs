// `npm run package`: the production build, then `vsce package` (model-gateway.vsix) and its
// SHA-256 beside it (model-gateway.vsix.sha256, in the `sha256sum` format), and the size.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const vsix = 'model-gateway.vsix';
execFileSync(process.execPath, [join(root, 'esbuild.js'), '--production'], { cwd: root, stdio: 'inherit' });
execFileSync(
  process.execPath,
  [join(root, 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', vsix],
  { cwd: root, stdio: 'inherit' },
);
const sha = createHash('sha256')
  .update(readFileSync(join(root, vsix)))
  .digest('hex');
writeFileSync(join(root, `${vsix}.sha256`), `${sha}  ${vsix}\n`);
console.log(`${vsix}: ${(statSync(join(root, vsix)).size / 1024).toFixed(1)} KB, sha256 ${sha}`);
