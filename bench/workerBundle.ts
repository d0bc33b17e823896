/**
 * The search worker as users run it: `src/search/core/snapshot/snapshotWorker.ts` bundled and minified as
 * `esbuild.js` ships it (`dist/searchWorker.js`), built once per bench run into a temporary
 * folder. From source the worker would load the TypeScript through tsx, whose compiling took a
 * third of a second of the worker's thread at each build (on two cores, time the build waited for).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

let built: string | undefined;

export function searchWorkerBundle(): string {
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-worker-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'searchWorker.js');
  buildSync({
    entryPoints: [join(__dirname, '..', 'src', 'search', 'core', 'snapshot', 'snapshotWorker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    logLevel: 'warning',
  });
  built = outfile;
  return outfile;
}
