import { strict as assert } from 'node:assert';
import { NameTable } from '../../src/search/core/keywords/nameTable';

/**
 * The keyword index finds identifiers with a hand-written scan over a table of names instead of a
 * pattern and a map: it must find exactly what the pattern finds, and give each name one value.
 */
describe('the name table of the keyword index', () => {
  const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
  // Letters, digits, `_` and `$`, and what ends a name: ASCII punctuation, accents, astral characters.
  const alphabet = ['a', 'b', 'Z', 'q', '_', '$', '0', '7', ' ', '\n', '-', '.', '(', 'é', 'ß', '\u00a0', '😀', 'ö', '\u0130'];
  let seed = 7;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed / 2 ** 32);
  const text = (length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');

  function scanned(table: NameTable, t: string, values: Map<string, number>, names: string[]): string[] {
    const count = table.scan(t, (name) => {
      assert.ok(!values.has(name), `"${name}" was asked for twice`);
      values.set(name, names.length);
      names.push(name);
      return names.length - 1;
    });
    return Array.from(table.values.subarray(0, count), (v) => names[v]);
  }

  it('finds the identifiers the pattern finds, in order, each name asked for once', () => {
    const table = new NameTable();
    const values = new Map<string, number>();
    const names: string[] = [];
    for (let i = 0; i < 6_000; i++) {
      const t = text(1 + Math.floor(random() * 200));
      assert.deepEqual(scanned(table, t, values, names), t.match(IDENTIFIER) ?? [], JSON.stringify(t));
    }
    assert.ok(names.length > 4_096, `${names.length} names: the table grew through two rehashes`);
    assert.equal(table.size, names.length);
  });

  it('tells apart long names that differ in one character, and names at the edges of the text', () => {
    const table = new NameTable();
    const values = new Map<string, number>();
    const names: string[] = [];
    const long = 'x'.repeat(70_000);
    const t = `${long}a ${long}b $${long} ${long}a 9abc abc9 _`;
    assert.deepEqual(scanned(table, t, values, names), t.match(IDENTIFIER));
    assert.deepEqual(
      names.map((n) => n.length),
      [70_001, 70_001, 70_001, 3, 4, 1],
      'the repeated name was found, not asked for again',
    );
    assert.deepEqual(scanned(table, 'abc', values, names), ['abc']);
    assert.equal(
      table.scan('', () => assert.fail('nothing to ask')),
      0,
    );
  });

  it('tells apart two names of one length whose hashes are equal', () => {
    const table = new NameTable();
    const values = new Map<string, number>();
    const names: string[] = [];
    // 32-bit FNV-1a gives both -1357407345: found by a search over six-letter names.
    assert.deepEqual(scanned(table, 'yaczfa glbppa yaczfa glbppa', values, names), ['yaczfa', 'glbppa', 'yaczfa', 'glbppa']);
    assert.deepEqual(names, ['yaczfa', 'glbppa']);
  });

  it('asks again for every name after clear, and gives the new values', () => {
    const table = new NameTable();
    let asked = 0;
    const first = table.scan('alpha beta alpha', () => ++asked);
    assert.deepEqual(Array.from(table.values.subarray(0, first)), [1, 2, 1]);
    table.clear();
    assert.equal(table.size, 0);
    const second = table.scan('beta alpha', () => 10 + ++asked);
    assert.deepEqual(Array.from(table.values.subarray(0, second)), [13, 14]);
  });
});
