import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { chunkerId } from '../../src/search/core/chunker';
import type { IndexStats } from '../../src/search/core/semanticIndex';
import { TeamStore } from '../../src/search/core/team/teamStore';
import { startRealPostgres, type RealPostgres } from '../fixtures/realPostgres';
import { api, connectToEmulator, runAnswering, runCommand } from './helpers';

/**
 * The extension against a real PostgreSQL server (Debian's, started by the test on loopback):
 * what the person sees when the store asks for a password none was set for, and when their role
 * may only read. PGlite checks no password and has one role.
 */
describe('the team store in a real VS Code against a real PostgreSQL server: passwords and roles', function () {
  this.timeout(120_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const passwords = { writer: 'writer-ext-7Hq', reader: 'reader-ext-3Vn' };
  let pgs: RealPostgres;
  const notices = async () => (await api()).testing.services.notices.map((n) => n.message);

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.embeddings', 'embed-emu-256', vscode.ConfigurationTarget.Global);
    pgs = await startRealPostgres();
    await pgs.admin(`create role writer login password '${passwords.writer}'`);
    await pgs.admin(`create role reader login password '${passwords.reader}'`);
    await pgs.admin('create database team owner writer');
    // The store made by a writer (as CI would), then readable by the reader.
    const store = new TeamStore({ url: pgs.url('writer', 'team'), password: passwords.writer, model: 'embed-emu-256', chunker: chunkerId(300) });
    try {
      await store.open();
    } finally {
      await store.close();
    }
    await pgs.admin('grant usage on schema model_gateway to reader; grant select on all tables in schema model_gateway to reader', 'team');
  });

  after(async () => {
    await settings().update('search.teamStore', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.embeddings', undefined, vscode.ConfigurationTarget.Global);
    await pgs?.stop();
  });

  it('no password set: the build goes on at once on this machine, and the warning names Set Team Store Password', async () => {
    await settings().update('search.teamStore', pgs.url('writer', 'team'), vscode.ConfigurationTarget.Global);
    const t0 = Date.now();
    const stats = await runCommand<IndexStats>('modelGateway.search.rebuild');
    assert.ok(stats && stats.chunks > 0, JSON.stringify(stats));
    assert.equal(stats.fromStore + stats.toStore, 0);
    assert.match(stats.storeFailure ?? '', /asks for a password, and none is set\. Set it with "Model Gateway: Set Team Store Password"/);
    assert.ok(!/PGPASSWORD|--store/.test(stats.storeFailure ?? ''), "in the editor's words");
    assert.ok(Date.now() - t0 < 30_000);
    assert.ok((await notices()).some((m) => /asks for a password/.test(m)));
    assert.match((await runCommand<string>('modelGateway.search.teamStoreStatus')) ?? '', /not in use \(.*asks for a password/);
  });

  it('a role that may only read: the build takes what the store holds, adds nothing, and says so once', async () => {
    await settings().update('search.teamStore', pgs.url('reader', 'team'), vscode.ConfigurationTarget.Global);
    assert.equal(await runAnswering<boolean>('modelGateway.search.setTeamStorePassword', passwords.reader), true);
    const first = await runCommand<IndexStats>('modelGateway.search.rebuild');
    const second = await runCommand<IndexStats>('modelGateway.search.rebuild');
    for (const s of [first, second]) {
      assert.ok(s && s.chunks > 0);
      assert.equal(s.storeFailure, undefined);
      assert.equal(s.toStore, 0);
    }
    const said = (await notices()).filter((m) => /this role may only read it/.test(m));
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.match(said[0], /reader@127\.0\.0\.1:\d+\/team/);
    assert.match((await runCommand<string>('modelGateway.search.teamStoreStatus')) ?? '', /connected read-only/);
  });
});
