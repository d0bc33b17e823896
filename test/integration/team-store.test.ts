import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import * as vscode from 'vscode';
import type { IndexStats } from '../../src/search/core/semanticIndex';
import { config } from './config';
import { api, connectToEmulator, emulatorControl, emulatorRequests, runAnswering, runCommand, until } from './helpers';

const embeddingRequests = async () => (await emulatorRequests()).filter((p) => p === 'POST /v1/embeddings').length;

/** A TCP hop in front of the store that the test can cut (every connection dropped, nothing listening) and restore. */
async function cuttableHop(target: number): Promise<{ port: number; cut: () => Promise<void>; restore: () => Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen();
  return { port, cut, restore: listen, close: () => cut().catch(() => undefined) };
}

describe('the team store in a real VS Code (PostgreSQL with pgvector: PGlite over the wire protocol)', function () {
  this.timeout(120_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  let hop: Awaited<ReturnType<typeof cuttableHop>>;
  const created: string[] = [];
  const top = async (text: string) => (await (await api()).testing.search.query(text, 3)).map((r) => `${r.chunk.file}:${r.chunk.start}`);

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.embeddings', 'embed-emu-256', vscode.ConfigurationTarget.Global);
    // A repository of a dozen files besides the sample's (each its own topic, so answers are clear).
    const topics = [
      'parses invoices into lines',
      'renders a bar chart of spend',
      'retries a request after a pause',
      'hashes passwords with a salt',
      'formats dates for the log',
      'reads the config file',
      'sorts users by name',
      'sends the weekly email',
      'compresses images before upload',
      'validates postal codes',
    ];
    topics.forEach((topic, i) => {
      const file = join(folder(), 'src', `team${i}.ts`);
      created.push(file);
      writeFileSync(file, `// This module ${topic}.\nexport function team${i}(input: string): string {\n  return input + ' ${topic}';\n}\n`);
    });
    hop = await cuttableHop(Number(new URL(config.teamStoreUrl).port));
    await settings().update('search.teamStore', `postgres://postgres@127.0.0.1:${hop.port}/postgres`, vscode.ConfigurationTarget.Global);
    const set = await runAnswering<boolean>('modelGateway.search.setTeamStorePassword', config.teamStorePassword);
    assert.equal(
      set,
      true,
      `the password was not set: ${JSON.stringify((await api()).testing.services.notices.slice(-3))} ${JSON.stringify(vscode.workspace.getConfiguration('modelGateway.search').inspect('teamStore'))}`,
    );
  });

  after(async () => {
    await settings().update('search.teamStore', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.embeddings', undefined, vscode.ConfigurationTarget.Global);
    await hop?.close();
    for (const f of created) rmSync(f, { force: true });
  });

  it("a repository's settings cannot point the index at a store: its server gets no connection", async () => {
    const marker = () => vscode.workspace.getConfiguration('modelGateway.search').inspect('candidates')?.workspaceValue;
    const connections: Socket[] = [];
    const hostile = createServer((socket) => (connections.push(socket), socket.destroy()));
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', () => resolve()));
    const port = (hostile.address() as { port: number }).port;
    const mine = settings().inspect('search.teamStore')?.globalValue;
    const file = join(folder(), '.vscode', 'settings.json');
    const { mkdirSync, readFileSync, existsSync } = await import('node:fs');
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    try {
      await settings().update('search.teamStore', undefined, vscode.ConfigurationTarget.Global);
      mkdirSync(join(folder(), '.vscode'), { recursive: true });
      // VS Code drops a folder's value of an application setting: a setting it keeps marks when the file was read.
      writeFileSync(
        file,
        JSON.stringify({
          'modelGateway.search.teamStore': `postgres://evil@127.0.0.1:${port}/steal`,
          'modelGateway.search.teamStoreSearch': true,
          'modelGateway.search.candidates': 31,
        }),
      );
      await until('VS Code read the folder settings', () => (marker() === 31 ? true : undefined));
      assert.equal(vscode.workspace.getConfiguration('modelGateway.search').get('teamStore'), '', 'VS Code ignores the folder value');
      const stats = await runCommand<IndexStats>('modelGateway.search.rebuild');
      assert.ok(stats && stats.chunks > 0);
      assert.equal(stats.fromStore + stats.toStore, 0);
      assert.equal(connections.length, 0, "the repository's store was never contacted");
      assert.match((await runCommand<string>('modelGateway.search.teamStoreStatus')) ?? '', /No team store is set/);
    } finally {
      if (before === undefined) rmSync(file, { force: true });
      else writeFileSync(file, before);
      // Settled before the next test: a late change event would drop the index it builds.
      await until('VS Code dropped the folder settings', () => (marker() === undefined ? true : undefined));
      await settings().update('search.teamStore', mine, vscode.ConfigurationTarget.Global);
      hostile.close();
    }
  });

  it("a teammate's build fills the store; a newcomer's first build makes no embedding request and answers the same", async () => {
    const a = await runCommand<IndexStats>('modelGateway.search.rebuild');
    assert.ok(a && a.chunks >= 13, JSON.stringify(a));
    assert.equal(a.fromStore, 0);
    assert.equal(a.embedded, a.chunks);
    assert.equal(a.toStore, a.chunks);
    const questions = ['greet a person by name hello', 'retries a request after a pause', 'sends the weekly email'];
    const answers = await Promise.all(questions.map(top));
    assert.equal(answers[1][0], 'src/team2.ts:1');
    // The newcomer: the same repository and store, no index of their own yet (the local index is
    // what differs between two machines; Rebuild starts from none).
    const before = await embeddingRequests();
    const b = await runCommand<IndexStats>('modelGateway.search.rebuild');
    assert.ok(b);
    assert.equal(await embeddingRequests(), before, 'no embedding request');
    assert.equal(b.embedded, 0);
    assert.equal(b.fromStore, b.chunks);
    assert.equal(b.chunks, a.chunks);
    assert.deepEqual(await Promise.all(questions.map(top)), answers);
    const status = await runCommand<string>('modelGateway.search.teamStoreStatus');
    assert.match(
      status ?? '',
      new RegExp(`connected, ${a.chunks} vectors of embed-emu-256; the last build \\(and the changes since\\) took ${b.chunks} vectors from it and added 0`),
    );
  });

  it('a changed file embeds only its changed chunk, and adds it to the store', async () => {
    const { testing } = await api();
    // Changes an earlier test left to the watcher (a settings file it removed) are applied first.
    await testing.search.flush();
    const file = join(folder(), 'src', 'teamNote.ts');
    created.push(file);
    writeFileSync(file, 'export const teamNote = "shared by the whole team"; // one chunk\n');
    // A late watcher event for an earlier change can still make an update of its own before this
    // file's: the update awaited is the first after which the index answers with this file.
    let seen = testing.search.lastStats;
    const stats = await until('the update that indexed src/teamNote.ts', async () => {
      const latest = testing.search.lastStats;
      if (latest === seen) return undefined;
      seen = latest;
      return (await top('shared by the whole team'))[0] === 'src/teamNote.ts:1' ? latest : undefined;
    });
    assert.ok(stats);
    assert.equal(stats.embedded, 1);
    assert.equal(stats.toStore, 1);
  });

  it('the store cut mid-build: the build finishes on this machine, the person is told once, and nothing half-done is trusted', async () => {
    const { testing } = await api();
    ['tracks parcels across depots', 'plays a chime on completion', 'converts celsius to kelvin'].forEach((topic, i) => {
      const file = join(folder(), 'src', `late${i}.ts`);
      created.push(file);
      writeFileSync(file, `// lateArrival${i}: ${topic}\nexport const lateArrival${i} = '${topic}';\n`);
    });
    const noticesBefore = testing.services.notices.filter((n) => n.message.startsWith('Team store:')).length;
    // The three new chunks must be embedded: their request waits, and the store is cut meanwhile
    // (after the build took every other vector from it, before it gives these back).
    await emulatorControl('faults', { path: '/v1/embeddings', fault: { kind: 'slowFirstByte', ms: 2500 } });
    const before = await embeddingRequests();
    const building = runCommand<IndexStats>('modelGateway.search.rebuild');
    await until('the embedding request', async () => ((await embeddingRequests()) > before ? true : undefined));
    await hop.cut();
    const stats = await building;
    await hop.restore();
    assert.ok(stats);
    assert.match(stats.storeFailure ?? '', /cannot be reached/);
    assert.equal(stats.embedded, 3);
    assert.equal(stats.fromStore + stats.embedded, stats.chunks);
    assert.equal(stats.toStore, 0);
    assert.equal(testing.search.ready(), true);
    assert.equal((await top('plays a chime on completion'))[0], 'src/late1.ts:1');
    const notices = testing.services.notices.filter((n) => n.message.startsWith('Team store:'));
    assert.equal(notices.length - noticesBefore, 1);
    assert.match(notices.at(-1)!.message, /cannot be reached/);
    // Back up: the three were never added, so the next build embeds exactly them and adds them.
    const again = await runCommand<IndexStats>('modelGateway.search.rebuild');
    assert.ok(again);
    assert.equal(again.storeFailure, undefined);
    assert.equal(again.embedded, 3);
    assert.equal(again.toStore, 3);
  });

  it('a store made for another model is refused by name, and the index is built on this machine alone', async () => {
    await settings().update('defaultModels.embeddings', 'text-embedding-3-small', vscode.ConfigurationTarget.Global);
    try {
      const stats = await runCommand<IndexStats>('modelGateway.search.rebuild');
      assert.ok(stats);
      assert.match(stats.storeFailure ?? '', /holds vectors of "embed-emu-256", and this workspace's search uses "text-embedding-3-small"/);
      assert.equal(stats.embedded, stats.chunks);
      assert.equal(stats.toStore, 0);
    } finally {
      await settings().update('defaultModels.embeddings', 'embed-emu-256', vscode.ConfigurationTarget.Global);
    }
  });

  it('search in the store: a window keeps no vectors, embeds nothing the store has, and answers from Postgres', async () => {
    const { testing } = await api();
    await settings().update('search.teamStoreSearch', true, vscode.ConfigurationTarget.Global);
    try {
      const before = await embeddingRequests();
      const stats = await runCommand<IndexStats>('modelGateway.search.build');
      assert.ok(stats);
      assert.equal(await embeddingRequests(), before, 'nothing embedded: the store has every chunk');
      assert.equal(stats.embedded, 0);
      // The window's scan (when it loaded) found every chunk in the store; the build found nothing new.
      assert.equal(stats.fromStore + stats.reused, stats.chunks);
      assert.equal(testing.search.ready(), true);
      assert.equal((await top('sends the weekly email'))[0], 'src/team7.ts:1');
      assert.match((await runCommand<string>('modelGateway.search.teamStoreStatus')) ?? '', /searched in place \(no HNSW index yet/);
    } finally {
      await settings().update('search.teamStoreSearch', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('the database holds no chunk text and no path: every column of every table read', async () => {
    const c = new pg.Client({ connectionString: config.teamStoreUrl });
    await c.connect();
    try {
      const tables = (await c.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = 'model_gateway'`)).rows
        .map((r) => r.table_name)
        .sort();
      assert.deepEqual(tables, ['store', 'vectors']);
      let cells = 0;
      for (const t of tables) {
        for (const row of (await c.query({ text: `select * from model_gateway.${t}`, rowMode: 'array' })).rows as unknown[][]) {
          for (const cell of row) {
            cells++;
            const text = Buffer.isBuffer(cell) ? cell.toString('latin1') : String(cell);
            for (const needle of ['greet', 'src/', '.ts', 'teamNote', 'lateArrival', 'Hello', 'export '])
              assert.ok(!text.includes(needle), `${t} holds "${needle}"`);
          }
        }
      }
      assert.ok(cells > 20, `${cells} cells`);
    } finally {
      await c.end();
    }
  });
});
