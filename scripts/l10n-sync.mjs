// `node scripts/l10n-sync.mjs`: exports every l10n.t string of src/ into l10n/bundle.l10n.json (with
// @vscode/l10n-dev, the tool VS Code's own extensions use), then lists, for each translation
// (l10n/bundle.l10n.<language>.json), the strings it lacks and the ones no longer in the source.
// `--prune` drops the stale ones. Translators add the missing ones; docs/localization.md says how.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
execFileSync(
  process.execPath,
  [join(root, 'node_modules', '@vscode', 'l10n-dev', 'dist', 'cli.js'), 'export', '--outDir', join(root, 'l10n'), join(root, 'src')],
  { stdio: 'ignore' },
);
const english = Object.keys(JSON.parse(readFileSync(join(root, 'l10n', 'bundle.l10n.json'), 'utf8')));
let problems = 0;
for (const file of readdirSync(join(root, 'l10n')).filter((f) => /^bundle\.l10n\.[\w-]+\.json$/.test(f))) {
  const path = join(root, 'l10n', file);
  const translated = JSON.parse(readFileSync(path, 'utf8'));
  const missing = english.filter((k) => !(k in translated));
  const stale = Object.keys(translated).filter((k) => !english.includes(k));
  for (const k of missing) console.log(`${file}: missing ${JSON.stringify(k)}`);
  for (const k of stale) console.log(`${file}: stale ${JSON.stringify(k)}`);
  problems += missing.length + stale.length;
  if (process.argv.includes('--prune') && stale.length) {
    const kept = Object.fromEntries(english.filter((k) => k in translated).map((k) => [k, translated[k]]));
    writeFileSync(path, `${JSON.stringify(kept, null, 2)}\n`);
  }
}
console.log(`${english.length} strings; ${problems} to do`);
