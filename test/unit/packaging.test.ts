import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The .vsix ships only what .vscodeignore lets through: every bundle the build writes must be there. */
describe('packaging', () => {
  it('every bundle in dist/ is shipped by .vscodeignore', function () {
    const dist = join(ROOT, 'dist');
    if (!existsSync(dist)) this.skip(); // `npm test` builds before this suite; a bare `npm run test:unit` may not have
    const shipped = new Set(
      readFileSync(join(ROOT, '.vscodeignore'), 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.startsWith('!'))
        .map((l) => l.slice(1)),
    );
    const bundles = readdirSync(dist).filter((f) => f.endsWith('.js'));
    assert.ok(bundles.includes('extension.js') && bundles.includes('mcp.js'), bundles.join(', '));
    assert.deepEqual(
      bundles.filter((b) => !shipped.has(`dist/${b}`)),
      [],
    );
  });
});
