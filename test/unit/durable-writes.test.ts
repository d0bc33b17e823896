import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationStore } from '../../src/chat/core/store';
import type { Conversation } from '../../src/common/conversation';
import { IndexStore } from '../../src/search/core/store/indexStore';
import { SemanticIndex } from '../../src/search/core/semanticIndex';
import { writeAtomic } from '../../src/storage/atomicFile';

/**
 * Durable, not only atomic: every temporary file is flushed to disk (fsync) before it is renamed
 * over the target, so a power cut after the rename cannot leave an empty or partial file; and a
 * killed process's leftovers are cleared at the next load. Observed on the real file system by
 * recording the order of the real fsync and rename calls.
 */
type Event = { op: 'sync' | 'rename' | 'background-sync'; path?: string };

// The module object the code under test calls into (the ESM namespace view of it is frozen).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fsSync = require('node:fs') as typeof import('node:fs');

async function recording<T>(fn: () => Promise<T>): Promise<{ result: T; events: Event[] }> {
  const events: Event[] = [];
  const probe = await fsp.open(__filename, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const realSync = proto.sync;
  const realRename = fsp.rename;
  const realFsyncSync = fsSync.fsyncSync;
  const realFdatasync = fsSync.fdatasync;
  (fsSync as { fdatasync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void }).fdatasync = (fd, done) => {
    events.push({ op: 'background-sync' });
    realFdatasync(fd, done);
  };
  proto.sync = function (this: unknown) {
    events.push({ op: 'sync' });
    return realSync.call(this);
  };
  (fsSync as { fsyncSync: typeof fsSync.fsyncSync }).fsyncSync = (fd) => {
    events.push({ op: 'sync' });
    realFsyncSync(fd);
  };
  (fsp as { rename: typeof fsp.rename }).rename = (from, to) => {
    events.push({ op: 'rename', path: String(from) });
    return realRename(from, to);
  };
  try {
    return { result: await fn(), events };
  } finally {
    proto.sync = realSync;
    (fsp as { rename: typeof fsp.rename }).rename = realRename;
    (fsSync as { fsyncSync: typeof fsSync.fsyncSync }).fsyncSync = realFsyncSync;
    (fsSync as { fdatasync: typeof fsSync.fdatasync }).fdatasync = realFdatasync;
  }
}

/** Each rename of a temporary file comes after a flush since the previous rename. */
function assertFlushedBeforeRename(events: Event[], atLeast: number): void {
  const renames = events.filter((e) => e.op === 'rename' && /\.tmp$/.test(e.path ?? ''));
  assert.ok(renames.length >= atLeast, `expected ${atLeast}+ atomic writes, saw ${renames.length}`);
  let flushed = false;
  for (const e of events) {
    if (e.op === 'sync') flushed = true;
    else if (/\.tmp$/.test(e.path ?? '')) {
      assert.ok(flushed, `${e.path} was renamed into place without an fsync first`);
      flushed = false;
    }
  }
}

const conversation = (title: string): Conversation => ({
  id: 'c1',
  title,
  createdAt: 1,
  updatedAt: 2,
  turns: [{ id: 'u1', role: 'user', text: 'hi', images: [], context: [], at: 1 }],
});

describe('durable writes', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'mg-durable-'));
    dirs.push(d);
    return d;
  };
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('writeAtomic flushes the temporary file before renaming it into place', async () => {
    const d = dir();
    const { events } = await recording(() => writeAtomic(join(d, 'f.json'), '{"a":1}'));
    assertFlushedBeforeRename(events, 1);
    assert.deepEqual(readdirSync(d), ['f.json']);
  });

  it('conversation history: every save is flushed before its rename; orphaned temp files go at load', async () => {
    const d = dir();
    const { events } = await recording(() => new ConversationStore(d).save(conversation('One')));
    assertFlushedBeforeRename(events, 2); // the conversation and the index
    writeFileSync(join(d, 'c1.json.0badc0de.tmp'), '{"half');
    writeFileSync(join(d, 'index.json.12345678.tmp'), '[');
    writeFileSync(join(d, 'notes.tmp'), 'not ours: kept');
    const reopened = new ConversationStore(d);
    assert.deepEqual(
      (await reopened.list()).map((c) => c.title),
      ['One'],
    );
    assert.deepEqual(readdirSync(d).sort(), ['c1.json', 'index.json', 'notes.tmp']);
  });

  it('search index: the rows are flushed before the metadata that names them, the log line after its rows; leftovers go at load', async () => {
    const root = dir();
    const store = dir();
    for (const f of ['a', 'b', 'c', 'd', 'e', 'f']) writeFileSync(join(root, `${f}.ts`), `export const ${f} = 1;\n`);
    const embed = (texts: string[]) =>
      Promise.resolve({ vectors: texts.map((_t, i) => Float32Array.from({ length: 8 }, (_v, k) => (k === i % 8 ? 1 : 0.1))), requests: 1 });
    // On this thread (not the worker), so that the recording sees the snapshot's writes too.
    const make = () => new SemanticIndex({ folders: [{ name: 'r', path: root }], excludes: [], storeDir: store, model: 'm', embed, snapshots: 'inline' });
    const build = await recording(() => make().update());
    assertFlushedBeforeRename(build.events, 1);
    const metaRename = build.events.findIndex((e) => e.op === 'rename' && /meta\.json\.[0-9a-f]{8}\.tmp$/.test(e.path ?? ''));
    assert.ok(build.events.slice(0, metaRename).filter((e) => e.op === 'sync').length >= 4, 'vectors, codes, scales and log flushed before the metadata');
    // An update appends: rows, then the log line, each flushed, and nothing renamed (one dead row
    // of six is not yet worth a new snapshot).
    writeFileSync(join(root, 'a.ts'), 'export const a = 2;\n');
    const index = make();
    await index.load();
    const update = await recording(() => index.update([join(root, 'a.ts')]));
    assert.deepEqual(
      update.events.map((e) => e.op),
      ['sync', 'sync', 'sync', 'sync'],
    );
    writeFileSync(join(store, 'meta.json.abcdef01.tmp'), '{"half');
    writeFileSync(join(store, 'vectors-9.f32'), Buffer.alloc(64));
    const last = make();
    assert.equal(await last.load(), 'loaded');
    await Promise.all([index.close(), last.close()]);
    assert.deepEqual(
      readdirSync(store).filter((f) => f.endsWith('.tmp') || f.startsWith('vectors-9')),
      [],
      'a temp file and an unfinished generation are removed',
    );
  });

  it("search index: a large generation's rows are flushed in the background as they are written, and again before the metadata names them", async () => {
    const store = new IndexStore(dir(), (dim) => dim / 8);
    const dim = 1536;
    const rows = 4096; // 24 MB of vectors a put: the background flush starts past 64 MB
    const { events } = await recording(async () => {
      const files = await store.openSnapshot(1);
      for (let i = 0; i < 4; i++) files.put(new Float32Array(rows * dim).fill(i + 1), new Uint8Array(rows * (dim / 8)), new Float32Array(rows).fill(1));
      await files.commit({ model: 'm', dim, rows: Array.from({ length: 4 * rows }, (_, r) => `h${r}`), files: {} }, new Float32Array(dim));
    });
    const ops = events.map((e) => e.op);
    const metaRename = events.findIndex((e) => e.op === 'rename' && /meta\.json\.[0-9a-f]{8}\.tmp$/.test(e.path ?? ''));
    assert.equal(ops.filter((o) => o === 'background-sync').length, 3, 'vectors, codes and scales, once, as the vectors passed 64 MB');
    assert.ok(ops.indexOf('background-sync') < ops.indexOf('sync'), 'before the commit');
    assert.equal(ops.slice(0, metaRename).filter((o) => o === 'sync').length, 5, 'the four files, then the metadata, flushed at the commit');
  });
});
