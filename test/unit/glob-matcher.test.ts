import { strict as assert } from 'node:assert';
import picomatch from 'picomatch';
import { globMatcher, SECRET_FILES } from '../../src/tools/pathGuard';

/** The matcher as it was: each glob's own picomatch matcher, at every level of the path. */
function oneGlobAtATime(globList: readonly string[], nocase: boolean): (p: string) => boolean {
  const globs = globList.flatMap((g) => (g.startsWith('**/') || g.includes('/') ? [g] : [g, `**/${g}`]));
  const matchers = globs.map((g) => picomatch(g, { dot: true, nocase }));
  return (p) => {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (matchers.some((m) => m(prefix) || m(`${prefix}/`))) return true;
    }
    return false;
  };
}

/** A small deterministic generator, so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('glob matching of the path guard (excludes and secret files)', () => {
  // VS Code's default excludes, the secret list, and what people write in files.exclude.
  const globPool = [
    ...SECRET_FILES,
    '**/.git',
    '**/.svn',
    '**/.DS_Store',
    '**/node_modules',
    '**/bower_components',
    '**/*.code-search',
    'build/',
    'out',
    'dist/**',
    'src/generated/*.ts',
    '**/*.{min.js,map}',
    '*.log',
    'docs/**/draft-*',
    'a?c',
    '[Tt]emp',
    '!keep.txt',
    '**/__pycache__/**',
    'coverage',
    '.vscode/*.json',
    'weird name/**',
    'src/**/fixtures',
    'Secrets.PEM',
  ];
  const segmentPool = [
    'src',
    'pkg',
    'node_modules',
    '.git',
    'build',
    'out',
    'dist',
    'generated',
    'docs',
    'draft-1.md',
    'app.ts',
    'x.min.js',
    'x.map',
    'abc',
    'aXc',
    'Temp',
    'temp',
    'keep.txt',
    '.env',
    '.ENV.local',
    'id_rsa.pub',
    'key.pem',
    'Secrets.PEM',
    '.aws',
    'credentials',
    '__pycache__',
    'm.pyc',
    'coverage',
    '.vscode',
    'settings.json',
    'weird name',
    'fixtures',
    'README',
    'a.log',
    '.npmrc',
    'x.p12',
  ];

  it('gives the answer each glob gives on its own, on 6,000 generated paths and glob lists, in both letter-case modes', () => {
    const next = random(44);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
    let checked = 0;
    let matched = 0;
    for (let list = 0; list < 60; list++) {
      const globs = Array.from({ length: 1 + Math.floor(next() * 8) }, () => pick(globPool));
      for (const nocase of [false, true]) {
        const fast = globMatcher(globs, nocase);
        const reference = oneGlobAtATime(globs, nocase);
        for (let n = 0; n < 50; n++) {
          const path = Array.from({ length: 1 + Math.floor(next() * 5) }, () => pick(segmentPool)).join('/');
          // Asked twice: the second answer comes from the folders it has already seen.
          for (let round = 0; round < 2; round++) {
            assert.equal(fast(path), reference(path), `${JSON.stringify(globs)} (nocase ${nocase}) on "${path}"`);
          }
          checked++;
          if (reference(path)) matched++;
        }
      }
    }
    assert.equal(checked, 6000);
    // Both answers occur often enough for the comparison to mean something.
    assert.ok(matched > 600 && matched < 5400, `${matched} of ${checked} matched`);
  });

  it('refuses secret files at any depth and in any letter case, and lets ordinary files through', () => {
    const secret = globMatcher(SECRET_FILES, true);
    for (const p of ['.env', 'a/b/.env.local', 'deploy/KEY.PEM', '.aws/credentials', 'home/.ssh/id_ed25519', 'x/.NPMRC']) assert.ok(secret(p), p);
    for (const p of ['src/env.ts', 'docs/pem.md', 'awsome/file', 'src/keys.ts']) assert.ok(!secret(p), p);
  });

  it('matches nothing with no globs', () => {
    assert.equal(globMatcher([], false)('anything/at/all'), false);
  });
});
