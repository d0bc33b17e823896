import { strict as assert } from 'node:assert';
import { fuzzyScore, rankPaths } from '../../src/chat/core/fuzzy';

const PATHS = [
  'README.md',
  'src/math.ts',
  'src/index.ts',
  'src/utils/mathHelpers.ts',
  'test/math.test.ts',
  'docs/guide/markdown-tips.md',
  'src/components/MainThing.tsx',
];

describe('fuzzy path ranking for @ mentions', () => {
  it('puts a file whose name holds the query first, the shortest name first', () => {
    assert.deepEqual(rankPaths('math', PATHS).slice(0, 3), ['src/math.ts', 'test/math.test.ts', 'src/utils/mathHelpers.ts']);
  });

  it('matches characters in order across the path, preferring word starts', () => {
    assert.equal(rankPaths('smt', PATHS)[0], 'src/math.ts');
    assert.equal(rankPaths('mthg', PATHS)[0], 'src/components/MainThing.tsx');
    assert.equal(fuzzyScore('xyz', 'src/math.ts'), undefined);
  });

  it('ignores case and spaces, and an empty query matches everything', () => {
    assert.equal(rankPaths('READ me', PATHS)[0], 'README.md');
    assert.equal(rankPaths('', PATHS).length, PATHS.length);
    assert.equal(rankPaths('', PATHS, 3).length, 3);
  });
});
