import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationStore, nodeFs, type StoreFs } from '../../src/chat/core/store';
import type { Conversation } from '../../src/common/conversation';

const conv = (id: string, title: string, updatedAt: number): Conversation => ({
  id,
  title,
  createdAt: 1,
  updatedAt,
  turns: [{ id: 'u1', role: 'user', text: `hello from ${title}`, images: [], context: [], at: 1 }],
});

describe('conversation store', () => {
  it('saves, lists (newest first), reloads, renames and deletes conversations', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-store-'));
    const store = new ConversationStore(dir);
    await store.save(conv('c1', 'First', 10));
    await store.save(conv('c2', 'Second', 20));
    assert.deepEqual(
      (await store.list()).map((s) => s.id),
      ['c2', 'c1'],
    );
    // A new store (a reloaded window) sees the same.
    const again = new ConversationStore(dir);
    assert.deepEqual(
      (await again.list()).map((s) => s.title),
      ['Second', 'First'],
    );
    assert.equal((await again.load('c1'))?.turns.length, 1);
    await again.rename('c1', 'Renamed');
    assert.equal((await new ConversationStore(dir).load('c1'))?.title, 'Renamed');
    await again.delete('c2');
    assert.deepEqual(
      (await new ConversationStore(dir).list()).map((s) => s.id),
      ['c1'],
    );
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
  });

  it('a crash in the middle of a write leaves the last good version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-store-'));
    await new ConversationStore(dir).save(conv('c1', 'Good', 10));
    const good = readFileSync(join(dir, 'c1.json'), 'utf8');
    // A file system that dies after writing the temporary file, before the rename.
    const crashing: StoreFs = {
      ...nodeFs,
      writeAtomic: (p, text) => {
        if (typeof text !== 'string') throw new Error('the conversation store writes text');
        writeFileSync(`${p}.dead.tmp`, text.slice(0, text.length / 2));
        return Promise.reject(new Error('process killed'));
      },
    };
    const store = new ConversationStore(dir, crashing);
    await assert.rejects(store.save({ ...conv('c1', 'Half-written', 20), turns: [] }), /process killed/);
    assert.equal(readFileSync(join(dir, 'c1.json'), 'utf8'), good);
    const reloaded = new ConversationStore(dir);
    assert.equal((await reloaded.load('c1'))?.title, 'Good');
    assert.deepEqual(
      (await reloaded.list()).map((s) => s.title),
      ['Good'],
    );
  });

  it('rebuilds a lost or damaged index from the conversation files, and ignores damaged files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-store-'));
    const store = new ConversationStore(dir);
    await store.save(conv('c1', 'One', 10));
    await store.save(conv('c2', 'Two', 20));
    writeFileSync(join(dir, 'index.json'), '{broken');
    writeFileSync(join(dir, 'c3.json'), '{"not":"a conversation"}');
    assert.deepEqual(
      (await new ConversationStore(dir).list()).map((s) => s.id),
      ['c2', 'c1'],
    );
    rmSync(join(dir, 'index.json'));
    assert.equal((await new ConversationStore(dir).list()).length, 2);
    assert.equal(await new ConversationStore(dir).load('c3'), undefined);
    await assert.rejects(new ConversationStore(dir).load('../escape'), /Not a conversation id/);
  });
});
