import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readNew } from '../../src/search/core/fileChunks';
import { FileReader, READ_BATCH, type FileRead } from '../../src/search/core/fileReader';

describe('the file reader of a full build (its own thread)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-reader-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string | Buffer) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const text = (r: FileRead) => (typeof r === 'string' ? r : r.bytes.toString('utf8'));

  it('reads what the thread-pool read gives, byte for byte, with the size and time stat gives, for more files than a batch', async () => {
    const paths = Array.from({ length: READ_BATCH * 3 + 5 }, (_, i) => write(`f${i}.ts`, `// file ${i}\n${'é∑'.repeat(i * 7)}\n`));
    const reader = new FileReader();
    try {
      const reads = await Promise.all(paths.map((p) => reader.read(p, 512 * 1024)));
      for (const [i, p] of paths.entries()) {
        const r = reads[i];
        const before = await readNew(p, () => true);
        assert.ok(typeof r !== 'string' && typeof before !== 'string', p);
        assert.ok(r.bytes.equals(before.bytes), `${p}: the same bytes`);
        const s = statSync(p);
        assert.equal(r.size, s.size);
        assert.equal(r.mtimeMs, s.mtimeMs);
      }
    } finally {
      await reader.close();
    }
  });

  it('says skipped for an empty file or one over the limit, and gone for a folder or a missing file, as the reads on this thread do', async () => {
    const cases = {
      empty: write('empty.ts', ''),
      big: write('big.ts', 'x'.repeat(2000)),
      small: write('small.ts', 'fits'),
      folder: (mkdirSync(join(dir, 'sub')), join(dir, 'sub')),
      missing: join(dir, 'missing.ts'),
    };
    const reader = new FileReader();
    try {
      const got: Record<string, string> = {};
      for (const [k, p] of Object.entries(cases)) got[k] = text(await reader.read(p, 1000));
      assert.deepEqual(got, { empty: 'skipped', big: 'skipped', small: 'fits', folder: 'gone', missing: 'gone' });
      // A limit of 0: every file is skipped (its name is never indexed), a missing one still gone.
      assert.equal(await reader.read(cases.small, 0), 'skipped');
      assert.equal(await reader.read(cases.missing, 0), 'gone');
    } finally {
      await reader.close();
    }
  });

  it('answers reads asked after it is closed, and those out when its thread dies, on this thread', async () => {
    const p = write('a.ts', 'still read');
    const reader = new FileReader();
    assert.equal(text(await reader.read(p, 100)), 'still read');
    // Its thread ended from outside while a batch is out: the batch is read here instead.
    const worker = (reader as unknown as { worker: { terminate(): Promise<number> } }).worker;
    const out = Promise.all(Array.from({ length: 10 }, () => reader.read(p, 100)));
    await worker.terminate();
    assert.deepEqual((await out).map(text), Array(10).fill('still read'));
    await reader.close();
    assert.equal(text(await reader.read(p, 100)), 'still read');
  });
});
