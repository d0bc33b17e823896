import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkerId } from '../../src/search/core/chunker';
import { TeamStore, TeamStoreError } from '../../src/search/core/team/teamStore';
import { runIndexCli, UsageError } from '../../src/cli/indexCli';
import pg from 'pg';
import { encodeHalfvec } from '../../src/search/core/vectors/halfFloat';
import { startPgliteServer } from '../fixtures/pgliteServer';
import { startRealPostgres, type RealPostgres } from '../fixtures/realPostgres';
import { hashOf, randomVector } from '../fixtures/vectors';
import { DEMO_KEY, useEmulator } from './helpers';

/**
 * The team store and its command line against a real PostgreSQL server (Debian's, on loopback):
 * what PGlite, one connection at a time and no passwords, cannot show. Connections, roles,
 * authentication and TLS do not depend on the gateway's profile: this file runs in the new-api
 * unit pass only (it has no `@profile-dependent` line: `scripts/suite-scope.cjs`).
 */
const MODEL = 'embed-emu-256';
const DIM = 256;
const ROOT = join(__dirname, '..', '..');

describe('team store on a real PostgreSQL server: several connections, roles, passwords, TLS', function () {
  this.timeout(240_000);
  const ctx = useEmulator();
  let pgs: RealPostgres;
  let repo: string;
  let scratch: string;
  const FILES = 6;
  const passwords = { writer: 'writer-pass-5Jq', reader: 'reader-pass-8Kd', outsider: 'outsider-pass-2Lw' };

  before(async () => {
    pgs = await startRealPostgres();
    await pgs.admin(`create role writer login password '${passwords.writer}'`);
    await pgs.admin(`create role reader login password '${passwords.reader}'`);
    await pgs.admin(`create role outsider login password '${passwords.outsider}'`);
    await pgs.admin('create database team owner writer');
    scratch = mkdtempSync(join(tmpdir(), 'mg-pgserver-'));
    repo = join(scratch, 'repo');
    mkdirSync(join(repo, 'lib'), { recursive: true });
    for (let i = 0; i < FILES; i++) writeFileSync(join(repo, 'lib', `part${i}.py`), `# part ${i}\ndef part_${i}(x):\n    return x + ${i}\n`);
    writeFileSync(join(scratch, 'ca.pem'), pgs.ca.cert);
  });
  after(async () => {
    await pgs?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const storeUrl = (user: string, query = 'sslmode=disable') => pgs.url(user, 'team', query);
  const cli = async (user: keyof typeof passwords | undefined, extra: string[] = [], o: { password?: string; query?: string; folder?: string } = {}) => {
    const progress: string[] = [];
    const out: string[] = [];
    const env: NodeJS.ProcessEnv = { MODEL_GATEWAY_API_KEY: DEMO_KEY };
    const password = o.password ?? (user ? passwords[user] : undefined);
    if (password) env.PGPASSWORD = password;
    const r = await runIndexCli(['--store', storeUrl(user ?? 'writer', o.query), '--gateway', ctx.emu.url, '--model', MODEL, ...extra, o.folder ?? repo], env, {
      progress: (l) => progress.push(l),
      result: (l) => out.push(l),
    });
    return { ...r, progress: progress.join('\n'), out: out.join('\n') };
  };
  const dropStore = () => pgs.admin('drop schema if exists model_gateway cascade', 'team');
  const rejectsWithin = async (work: Promise<unknown>, ms: number, check: (e: Error) => boolean) => {
    const t0 = performance.now();
    await assert.rejects(work, (e: Error) => {
      const took = performance.now() - t0;
      assert.ok(took < ms, `took ${took.toFixed(0)} ms (${e.message})`);
      return check(e);
    });
  };

  it('four first fills at once against an empty store, ten rounds: every run succeeds and each vector is kept once', async () => {
    for (let round = 0; round < 10; round++) {
      await dropStore();
      const runs = await Promise.allSettled([0, 1, 2, 3].map(() => cli('writer')));
      const failed = runs.flatMap((r, i) => (r.status === 'rejected' ? [`run ${i}: ${(r.reason as Error).message}`] : []));
      assert.deepEqual(failed, [], `round ${round}`);
      const [{ n }] = await pgs.admin<{ n: string }>('select count(*) as n from model_gateway.vectors', 'team');
      assert.equal(Number(n), FILES, `round ${round}: one row per chunk`);
    }
  });

  it('keeps the vectors as bytea where the database has no pgvector: shared all the same, and search in the store says it needs pgvector', async () => {
    await dropStore();
    const first = await cli('writer');
    assert.equal(first.stats.toStore, FILES);
    assert.match(first.progress, /kept as bytea: the database has no pgvector/);
    const [column] = await pgs.admin<{ t: string; bytes: number }>(
      `select format_type(a.atttypid, a.atttypmod) as t, (select max(octet_length(embedding)) from model_gateway.vectors) as bytes from pg_attribute a where a.attrelid = 'model_gateway.vectors'::regclass and a.attname = 'embedding'`,
      'team',
    );
    assert.deepEqual(column, { t: 'bytea', bytes: 4 + 2 * DIM });
    const requests = ctx.emu.stats.embeddingRequests;
    const second = await cli('writer');
    assert.equal(second.stats.fromStore, FILES);
    assert.equal(second.stats.embedded, 0);
    assert.equal(ctx.emu.stats.embeddingRequests, requests, 'the second fill takes every vector from the store');
    const store = new TeamStore({ url: storeUrl('writer'), password: passwords.writer, model: MODEL, chunker: chunkerId(300) });
    try {
      const { vectors } = await store.take(await allHashes());
      assert.equal(vectors.size, FILES);
      for (const v of vectors.values()) assert.equal(v.length, DIM);
      await assert.rejects(
        store.nearest(vectors.values().next().value!, 5),
        (e: Error) => e instanceof TeamStoreError && e.problem === 'cannot-search' && /needs pgvector/.test(e.message),
      );
    } finally {
      await store.close();
    }
    await assert.rejects(cli('writer', ['--search-index']), /keeps its vectors as bytea.*needs pgvector/);
  });

  const allHashes = async () => (await pgs.admin<{ h: string }>(`select encode(hash, 'hex') as h from model_gateway.vectors`, 'team')).map((r) => r.h);

  it('a role that may only read is refused before any embedding request (exit 2); --read-only is a dry run that embeds nothing', async () => {
    await pgs.admin('grant usage on schema model_gateway to reader; grant select on all tables in schema model_gateway to reader', 'team');
    const extra = join(repo, 'lib', 'extra.py');
    writeFileSync(extra, 'def extra():\n    return "only in this checkout"\n');
    try {
      const requests = ctx.emu.stats.embeddingRequests;
      await rejectsWithin(
        cli('reader'),
        5000,
        (e) =>
          e instanceof UsageError && e.exitCode === 2 && /this role can only read the store: nothing embedded/.test(e.message) && /--read-only/.test(e.message),
      );
      assert.equal(ctx.emu.stats.embeddingRequests, requests, 'nothing was embedded');
      const dry = await cli('reader', ['--read-only']);
      assert.equal(ctx.emu.stats.embeddingRequests, requests, 'a dry run embeds nothing');
      assert.equal(dry.wouldEmbed, 1);
      assert.equal(dry.stats.fromStore, FILES);
      assert.match(dry.out, /dry run \(--read-only\): nothing embedded, nothing added/);
      assert.match(dry.out, new RegExp(`in the store ${FILES}; a writer would embed 1 \\(\\d+ characters\\)`));
      assert.equal(dry.storeRows, FILES);
    } finally {
      rmSync(extra);
    }
  });

  it("a role without USAGE on the schema is refused with the server's reason and a word for the administrator", async () => {
    await assert.rejects(
      cli('outsider'),
      (e: Error) => e instanceof TeamStoreError && e.problem === 'refused' && /permission denied/.test(e.message) && /administrator/.test(e.message),
    );
  });

  it("no password: a clear error at once, in the command line's words and from the extension's own bundle", async () => {
    await rejectsWithin(
      cli(undefined),
      1000,
      (e) => e instanceof TeamStoreError && e.problem === 'sign-in' && /asks for a password, and none is set\. Set PGPASSWORD/.test(e.message),
    );
    // dist/teamStore.js, as the extension loads it: node-postgres's .pgpass reader is a stand-in there.
    const bundle = join(ROOT, 'dist', 'teamStore.js');
    if (!existsSync(bundle)) (await import('node:child_process')).execFileSync(process.execPath, [join(ROOT, 'esbuild.js')], { cwd: ROOT, stdio: 'ignore' });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const m = require(bundle) as typeof import('../../src/entries/teamStore-entry');
    const store = new m.TeamStore({ url: storeUrl('writer'), model: MODEL, chunker: chunkerId(300) });
    try {
      await rejectsWithin(store.open(), 1000, (e) => (e as TeamStoreError).problem === 'sign-in' && /asks for a password/.test(e.message));
    } finally {
      await store.close();
    }
  });

  it('each stand-in for a left-out part of node-postgres settles: it finds nothing or throws at once', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sources = require(join(ROOT, 'scripts', 'pg-left-out.cjs')) as Record<string, string>;
    const load = (name: string) => {
      const module = { exports: {} as unknown };
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      const body = new Function('module', 'exports', 'process', sources[name]) as (m: typeof module, e: unknown, p: NodeJS.Process) => void;
      body(module, module.exports, process);
      return module.exports;
    };
    assert.deepEqual(Object.keys(sources).sort(), ['./native', 'pg-connection-string', 'pg-pool', 'pgpass']);
    const pgpass = load('pgpass') as (params: unknown, cb: (pass?: string) => void) => void;
    assert.equal(await new Promise((resolve) => pgpass({}, resolve)), undefined);
    const Pool = load('pg-pool') as new () => unknown;
    assert.throws(() => new Pool(), /left out of this bundle/);
    assert.throws(() => (load('pg-connection-string') as { parse: (s: string) => unknown }).parse('postgres://x'), /not read in this bundle/);
    assert.throws(() => load('./native'), /left out of this bundle/);
  });

  it("a wrong password: refused at once with the server's reason, naming --store and PGPASSWORD, the password never shown", async () => {
    await rejectsWithin(
      cli('writer', [], { password: 'not-the-password-9Zx' }),
      1000,
      (e) =>
        e instanceof TeamStoreError &&
        e.problem === 'sign-in' &&
        /password authentication failed/.test(e.message) &&
        /--store/.test(e.message) &&
        /PGPASSWORD/.test(e.message) &&
        !e.message.includes('not-the-password-9Zx') &&
        !/modelGateway\.|Model Gateway:/.test(e.message),
    );
  });

  it('TLS: verify-full passes with the CA given by --ca and fails without it, naming --ca; a server without TLS asked for it says it offers none', async () => {
    const ok = await cli('writer', ['--ca', join(scratch, 'ca.pem')], { query: 'sslmode=verify-full' });
    assert.equal(ok.stats.files, FILES);
    await assert.rejects(
      cli('writer', [], { query: 'sslmode=verify-full' }),
      (e: Error) =>
        e instanceof TeamStoreError && /failed the TLS check/.test(e.message) && /--ca <file\.pem>/.test(e.message) && !/modelGateway\./.test(e.message),
    );
    await pgs.setTls(false);
    try {
      await assert.rejects(
        cli('writer', ['--ca', join(scratch, 'ca.pem')], { query: 'sslmode=require' }),
        (e: Error) =>
          e instanceof TeamStoreError && /does not offer TLS/.test(e.message) && /sslmode=disable to --store/.test(e.message) && !/CA/.test(e.message),
      );
    } finally {
      await pgs.setTls(true);
    }
  });

  it('the server stopped mid-fill: the command ends with one clear line, no stack, and exit 1', async () => {
    await dropStore();
    const big = join(scratch, 'big');
    mkdirSync(big);
    for (let i = 0; i < 40; i++) writeFileSync(join(big, `m${i}.py`), `def m_${i}():\n    return ${i}\n`);
    // Each embeddings answer waits, so the fill is still embedding when the server goes.
    ctx.emu.inject({ path: '/v1/embeddings', times: 40, fault: { kind: 'slowFirstByte', ms: 150 } });
    const before = ctx.emu.stats.embeddingRequests;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'src', 'cli', 'indexCli.ts'),
        '--store',
        storeUrl('writer'),
        '--gateway',
        ctx.emu.url,
        '--model',
        MODEL,
        '--batch-size',
        '1',
        '--concurrency',
        '1',
        big,
      ],
      {
        env: { ...process.env, MODEL_GATEWAY_API_KEY: DEMO_KEY, PGPASSWORD: passwords.writer },
        cwd: ROOT,
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      while (ctx.emu.stats.embeddingRequests - before < 3) await new Promise((r) => setTimeout(r, 20));
      pgs.stopServer();
      const code = await exited;
      assert.equal(code, 1, stderr);
      const lines = stderr.trim().split('\n');
      const last = lines[lines.length - 1];
      assert.match(last, /^model-gateway-index: The team store writer@127\.0\.0\.1:\d+\/team (cannot be reached|failed)/);
      assert.ok(!/\n\s+at /.test(stderr), `no stack: ${stderr}`);
      assert.ok(!stderr.includes(passwords.writer));
    } finally {
      child.kill();
      ctx.emu.faults.clear();
      pgs.startServer();
      rmSync(big, { recursive: true, force: true });
    }
  });
});

describe('search in a team store with pgvector (PGlite: pgvector 0.8, the real planner)', function () {
  const CHUNKER = chunkerId(300);
  it('the nearest-neighbour query runs through the HNSW index whatever the planner would pick: at 300 rows and at 20,000 (EXPLAIN)', async function () {
    this.timeout(180_000);
    // A store of its own (16 dimensions keep the 20,000-row graph quick to build in WebAssembly).
    const own = await startPgliteServer();
    const s = new TeamStore({ url: own.url, model: MODEL, chunker: CHUNKER });
    const c = new pg.Client({ connectionString: own.url });
    const plan = (lines: string[]) => lines.join('\n');
    try {
      const give = async (from: number, to: number) => {
        const hashes = Array.from({ length: to - from }, (_, i) => hashOf(500_000 + from + i));
        await s.give(
          hashes,
          hashes.map((_, i) => randomVector(16, from + i + 1)),
        );
      };
      await give(0, 300);
      await s.makeSearchable();
      await c.connect();
      const query = randomVector(16, 9);
      // The planner left alone scans every row of a small table: what a store without the setting did.
      const free = (
        await c.query<{ 'QUERY PLAN': string }>(`explain select hash from model_gateway.vectors order by embedding <=> $1::halfvec limit 30`, [
          encodeHalfvec(query),
        ])
      ).rows.map((r) => r['QUERY PLAN']);
      assert.match(plan(free), /Seq Scan on vectors/);
      assert.match(plan(await s.explainNearest(query, 30)), /Index Scan using vectors_embedding_hnsw on vectors/);
      // The rest added without the index (one graph insert at a time is slow in WebAssembly), then the index made again.
      await c.query('drop index model_gateway.vectors_embedding_hnsw');
      for (let at = 300; at < 20_000; at += 2_000) await give(at, Math.min(20_000, at + 2_000));
      const again = new TeamStore({ url: own.url, model: MODEL, chunker: CHUNKER });
      try {
        assert.equal((await again.open()).searchable, false);
        await again.makeSearchable();
      } finally {
        await again.close();
      }
      await c.query('analyze model_gateway.vectors');
      const at20k = plan(await s.explainNearest(query, 30));
      assert.match(at20k, /Index Scan using vectors_embedding_hnsw on vectors/);
      assert.doesNotMatch(at20k, /Seq Scan/);
      // Its answer at 20,000 rows: a stored vector's own hash first.
      const hits = await s.nearest(randomVector(16, 12_345), 10);
      assert.equal(hits[0].hash, hashOf(500_000 + 12_344));
    } finally {
      await c.end().catch(() => undefined);
      await s.close();
      await own.stop();
    }
  });
});
