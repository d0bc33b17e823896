import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { chunkerId } from '../../src/search/core/chunker';
import { binaryCopyFields, copyOut } from '../../src/search/core/team/copyOut';
import { decodeHalfvec, decodeHalfvecRows, encodeHalfvec, toHalf } from '../../src/search/core/vectors/halfFloat';
import { SemanticIndex, type EmbedFn } from '../../src/search/core/semanticIndex';
import { StoreSearchIndex } from '../../src/search/core/team/storeSearchIndex';
import { TeamStore, TeamStoreError, parseStoreUrl } from '../../src/search/core/team/teamStore';
import { runIndexCli, UsageError } from '../../src/cli/indexCli';
import { startPgliteServer, type PgliteServer } from '../fixtures/pgliteServer';
import { hashOf, randomVector } from '../fixtures/vectors';
import { clientFor, DEMO_KEY, useEmulator } from './helpers';

const MODEL = 'embed-emu-256';
const CHUNKER = chunkerId(300);

describe('team store: addresses and half floats', () => {
  it('refuses a password in the address, another scheme, a bad sslmode; TLS is on except on this machine or when disabled', () => {
    assert.throws(
      () => parseStoreUrl('postgres://ci:hunter2@db.example.com/index'),
      (e: Error) => e instanceof TeamStoreError && /holds a password/.test(e.message) && !e.message.includes('hunter2'),
    );
    assert.throws(() => parseStoreUrl('mysql://db.example.com/index'), /must be postgres:\/\//);
    assert.throws(() => parseStoreUrl('postgres://db.example.com/x?sslmode=allow'), /sslmode "allow"/);
    assert.throws(() => parseStoreUrl('not a url'), /not a URL/);
    assert.equal(parseStoreUrl('postgres://ci@db.example.com/index').tls, 'on');
    assert.equal(parseStoreUrl('postgres://ci@db.example.com/index?sslmode=require').tls, 'on');
    assert.equal(parseStoreUrl('postgres://ci@db.example.com/index?sslmode=prefer').tls, 'on');
    assert.equal(parseStoreUrl('postgres://ci@db.example.com/index?sslmode=disable').tls, 'off');
    assert.equal(parseStoreUrl('postgres://ci@127.0.0.1:6543/index').tls, 'off');
    const p = parseStoreUrl('postgresql://reader@db.example.com:6000/team%20index');
    assert.deepEqual(p.config, { host: 'db.example.com', port: 6000, database: 'team index', user: 'reader' });
    assert.equal(p.where, 'reader@db.example.com:6000/team index');
  });

  it('rounds to the nearest half and reads it back within half precision; refuses wrong sizes, infinities and zero vectors', () => {
    assert.equal(toHalf(1), 0x3c00);
    assert.equal(toHalf(-2), 0xc000);
    assert.equal(toHalf(65504), 0x7bff);
    assert.equal(toHalf(1e6), 0x7c00);
    assert.equal(toHalf(2 ** -24), 0x0001);
    assert.equal(toHalf(0), 0);
    const v = randomVector(300, 7);
    const back = decodeHalfvec(encodeHalfvec(v), 300);
    assert.ok(back instanceof Float32Array);
    for (let i = 0; i < v.length; i++) assert.ok(Math.abs(back[i] - v[i]) <= Math.abs(v[i]) * 2 ** -11 + 2 ** -25, `element ${i}: ${v[i]} → ${back[i]}`);
    assert.match(decodeHalfvec(encodeHalfvec(v), 256) as string, /bytes where/);
    assert.match(decodeHalfvec(encodeHalfvec([1, Infinity]), 2) as string, /not a finite/);
    assert.equal(decodeHalfvec(encodeHalfvec([0, 0, 0]), 3), 'a zero vector');
  });

  it('reads every finite half as its value: normal, subnormal, both zeros and both signs', () => {
    // All 63,488 finite halves (exponent below 31), two vectors of 31,744, against the definition.
    const valueOf = (h: number) => {
      const sign = h & 0x8000 ? -1 : 1;
      const exp = (h >>> 10) & 0x1f;
      const mant = h & 0x3ff;
      return exp === 0 ? sign * mant * 2 ** -24 : sign * (1 + mant / 1024) * 2 ** (exp - 15);
    };
    for (const signBit of [0, 0x8000]) {
      const n = 31 * 1024;
      const bytes = Buffer.alloc(4 + 2 * n);
      bytes.writeInt16BE(n, 0);
      for (let i = 0; i < n; i++) bytes.writeUInt16BE(signBit | i, 4 + 2 * i);
      const back = decodeHalfvec(bytes, n);
      assert.ok(back instanceof Float32Array);
      for (let i = 0; i < n; i++) assert.ok(Object.is(back[i], Math.fround(valueOf(signBit | i))), `half 0x${(signBit | i).toString(16)}: ${back[i]}`);
    }
    // An infinity or a NaN is refused, wherever it is.
    for (const h of [0x7c00, 0xfc00, 0x7e00, 0xfd55]) {
      const bytes = Buffer.alloc(8);
      bytes.writeInt16BE(2, 0);
      bytes.writeUInt16BE(0x3c00, 4);
      bytes.writeUInt16BE(h, 6);
      assert.match(decodeHalfvec(bytes, 2) as string, /element 1 is not a finite/);
    }
  });
});

describe('halfvecs decoded many at a time (a COPY answer), through WebAssembly SIMD', () => {
  /** Rows of halfvec binary values end to end, each after 3 bytes of something else, and where each lies. */
  const answer = (values: Buffer[]) => {
    const parts: Buffer[] = [];
    const starts: number[] = [];
    const ends: number[] = [];
    let at = 0;
    for (const v of values) {
      parts.push(Buffer.from([9, 9, 9]), v);
      starts.push(at + 3);
      ends.push(at + 3 + v.length);
      at += 3 + v.length;
    }
    return { bytes: Buffer.concat(parts), starts, ends };
  };
  const halves = (dim: number, hs: number[]) => {
    const b = Buffer.alloc(4 + 2 * hs.length);
    b.writeInt16BE(dim, 0);
    hs.forEach((h, i) => b.writeUInt16BE(h, 4 + 2 * i));
    return b;
  };

  it('gives every one of the 65,536 halves the value the table gives: both zeros, subnormals, infinities and NaNs', () => {
    // 64 rows of 1,024: the kernel decodes them all (a row with a non-finite element is refused, its values written all the same).
    const rows = Array.from({ length: 64 }, (_, r) =>
      halves(
        1024,
        Array.from({ length: 1024 }, (_, i) => r * 1024 + i),
      ),
    );
    const { bytes, starts, ends } = answer(rows);
    const simd = decodeHalfvecRows(bytes, starts, ends, 1024);
    const table = decodeHalfvecRows(bytes, starts, ends, 1024, false);
    // Object.is tells the zeros apart and takes any NaN for a NaN (a NaN's quiet bit may differ).
    const differ = [...simd.pool].flatMap((x, h) => (Object.is(x, table.pool[h]) ? [] : [`0x${h.toString(16)}: ${x} against ${table.pool[h]}`]));
    assert.deepEqual(differ, []);
    assert.deepEqual(simd.problems, table.problems);
    assert.deepEqual(
      simd.problems.flatMap((p, r) => (p === undefined ? [] : [r])),
      [31, 63],
      'the two rows holding exponent 31 (0x7c00–0x7fff, 0xfc00–0xffff) are refused',
    );
  });

  it('refuses what the one-at-a-time decoder refuses, with the same words, and decodes the rest alike at any dimension (the last values one at a time)', () => {
    for (const dim of [1, 7, 8, 9, 300, 1536]) {
      const v = randomVector(dim, dim);
      const good = encodeHalfvec(v);
      const zero = encodeHalfvec(new Array<number>(dim).fill(0));
      const rows = [
        good,
        zero,
        encodeHalfvec([...v, 1]),
        halves(
          dim + 1,
          Array.from({ length: dim }, () => 0x3c00),
        ),
        encodeHalfvec(v.map((x, i) => (i === dim - 1 ? Number.NaN : x))),
        good,
      ];
      const { bytes, starts, ends } = answer(rows);
      starts.push(-1);
      ends.push(-1);
      const simd = decodeHalfvecRows(bytes, starts, ends, dim);
      const table = decodeHalfvecRows(bytes, starts, ends, dim, false);
      assert.deepEqual(simd.problems, table.problems, `dim ${dim}`);
      assert.deepEqual(simd.problems, [
        undefined,
        'a zero vector',
        `${4 + 2 * (dim + 1)} bytes where ${4 + 2 * dim} were expected`,
        `${dim + 1} dimensions where ${dim} were expected`,
        `element ${dim - 1} is not a finite number`,
        undefined,
        'no value',
      ]);
      for (const r of [0, 5]) assert.deepEqual(simd.pool.subarray(r * dim, (r + 1) * dim), decodeHalfvec(good, dim), `dim ${dim}, row ${r}`);
    }
  });
});

describe('team store against a real Postgres with pgvector (PGlite over the wire protocol)', function () {
  this.timeout(60_000);
  let server: PgliteServer;
  const opened: TeamStore[] = [];
  const store = (o: Partial<ConstructorParameters<typeof TeamStore>[0]> = {}) => {
    const s = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER, ...o });
    opened.push(s);
    return s;
  };
  const sql = async <T extends pg.QueryResultRow>(text: string): Promise<T[]> => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      return (await c.query<T>(text)).rows;
    } finally {
      await c.end();
    }
  };
  before(async () => {
    server = await startPgliteServer();
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  after(async () => {
    await server?.stop();
  });

  it('a read-only window finds an empty database not set up, and creates nothing', async () => {
    await assert.rejects(store({ readOnly: true }).open(), (e: Error) => e instanceof TeamStoreError && e.problem === 'not-set-up');
    assert.deepEqual(await sql(`select to_regclass('model_gateway.store') as t`), [{ t: null }]);
  });

  it('creates its schema, takes back what it gave, and reports its rows', async () => {
    const s = store();
    const state = await s.open();
    assert.deepEqual(
      { ...state, where: undefined },
      { where: undefined, model: MODEL, chunker: CHUNKER, dimensions: undefined, rows: 0, writable: true, searchable: false, vectors: 'halfvec' },
    );
    const vectors = Array.from({ length: 1200 }, (_, i) => randomVector(256, i + 1));
    assert.equal(
      await s.give(
        vectors.map((_, i) => hashOf(i)),
        vectors,
      ),
      1200,
    );
    const got = await s.take([hashOf(5), hashOf(1199), hashOf(99999)]);
    assert.equal(got.vectors.size, 2);
    assert.equal(got.unusable, 0);
    const five = got.vectors.get(hashOf(5))!;
    assert.ok(five.every((x, i) => Math.abs(x - vectors[5][i]) < 1e-3));
    // All 1,200 over three statements (500 rows each, read back as one value each): every vector under its own hash.
    const all = await s.take(vectors.map((_, i) => hashOf(i)).reverse());
    assert.equal(all.vectors.size, 1200);
    for (let i = 0; i < 1200; i += 7)
      assert.ok(
        all.vectors.get(hashOf(i))!.every((x, d) => Math.abs(x - vectors[i][d]) < 1e-3),
        `row ${i}`,
      );
    // The hashes go as one packed value: a malformed one is not asked, and does not shift the others.
    assert.deepEqual([...(await s.has(['not-a-hash', hashOf(7), 'ABC', hashOf(1199), hashOf(123456)]))].sort(), [hashOf(7), hashOf(1199)].sort());
    assert.deepEqual([...(await s.take(['0123', hashOf(8)])).vectors.keys()], [hashOf(8)]);
    const again = await store().open();
    assert.equal(again.rows, 1200);
    assert.equal(again.dimensions, 256);
  });

  it('keeps each vector in its row, even at 4,000 dimensions: nothing goes to the TOAST table', async () => {
    // A store of its own: this one's dimension is fixed by the first rows given.
    const large = await startPgliteServer();
    const s = new TeamStore({ url: large.url, model: MODEL, chunker: CHUNKER });
    const c = new pg.Client({ connectionString: large.url });
    try {
      await s.open();
      const vectors = Array.from({ length: 20 }, (_, i) => randomVector(4000, i + 1));
      assert.equal(
        await s.give(
          vectors.map((_, i) => hashOf(i)),
          vectors,
        ),
        20,
      );
      await c.connect();
      const [column] = (
        await c.query<{ attstorage: string }>(
          `select attstorage from pg_attribute where attrelid = 'model_gateway.vectors'::regclass and attname = 'embedding'`,
        )
      ).rows;
      assert.equal(column.attstorage, 'p', 'stored plain: in the row, uncompressed');
      const [sizes] = (
        await c.query<{ toast: string; heap: string }>(
          `select pg_relation_size(reltoastrelid) as toast, pg_relation_size(oid) as heap from pg_class where oid = 'model_gateway.vectors'::regclass`,
        )
      ).rows;
      assert.equal(Number(sizes.toast), 0, 'the TOAST table holds nothing');
      assert.ok(Number(sizes.heap) >= 20 * 8000, `the rows hold the vectors (${sizes.heap} bytes)`);
      const got = await s.take([hashOf(3), hashOf(19)]);
      assert.ok(got.vectors.get(hashOf(19))!.every((x, d) => Math.abs(x - vectors[19][d]) < 1e-3));
    } finally {
      await c.end().catch(() => undefined);
      await s.close();
      await large.stop();
    }
  });

  it('two clients adding the same rows at once lose nothing and duplicate nothing', async () => {
    const a = store();
    const b = store();
    const hashes = Array.from({ length: 900 }, (_, i) => hashOf(10_000 + i));
    const vectors = hashes.map((_, i) => randomVector(256, 10_000 + i));
    // a adds 0..599, b adds 300..899: 300 rows overlap, both at once.
    const [na, nb] = await Promise.all([a.give(hashes.slice(0, 600), vectors.slice(0, 600)), b.give(hashes.slice(300), vectors.slice(300))]);
    assert.equal(na + nb, 900, `${na} + ${nb}`);
    const [{ n, distinct }] = await sql<{ n: string; distinct: string }>(
      `select count(*) as n, count(distinct hash) as distinct from model_gateway.vectors where hash >= '\\x00000000000000000000000000002710'::bytea`,
    );
    assert.equal(Number(n), 900);
    assert.equal(Number(distinct), 900);
    assert.equal((await a.take(hashes)).vectors.size, 900);
  });

  it('refuses a store made for another model, chunker or dimension, naming both', async () => {
    await assert.rejects(
      store({ model: 'text-embedding-3-small' }).open(),
      (e: Error) =>
        e instanceof TeamStoreError && e.problem === 'refused' && e.message.includes(`"${MODEL}"`) && e.message.includes('"text-embedding-3-small"'),
    );
    await assert.rejects(
      store({ chunker: chunkerId(500) }).open(),
      (e: Error) => /cut as/.test(e.message) && e.message.includes(CHUNKER) && e.message.includes(chunkerId(500)),
    );
    await assert.rejects(store().give([hashOf(1)], [randomVector(512, 1)]), /256-dimension vectors .* 512: nothing was added/);
  });

  it('leaves out a row it cannot use (a corrupted vector) rather than trusting it', async () => {
    await sql(`insert into model_gateway.vectors values ('\\x000000000000000000000000000bad00'::bytea, array_fill(0, array[256])::halfvec)`);
    const got = await store().take(['000000000000000000000000000bad00', hashOf(1)]);
    assert.equal(got.unusable, 1);
    assert.deepEqual([...got.vectors.keys()], [hashOf(1)]);
  });

  it('reads through COPY in binary: raw bytes and NULLs as they are, a cut or oversized answer refused; a statement failing midway rejects and the connection goes on', async () => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      // Bytes that are not UTF-8 come back as they are (a text result would have mangled them).
      const bytes = await copyOut(
        c,
        `copy (select '\\xff00c3'::bytea as a, null::bytea as b, 'é'::text as c from generate_series(1, 3)) to stdout (format binary)`,
      );
      const { rows, at } = binaryCopyFields(bytes, 3);
      assert.equal(rows, 3);
      for (let r = 0; r < 3; r++) {
        assert.deepEqual([...bytes.subarray(at[6 * r], at[6 * r + 1])], [0xff, 0x00, 0xc3]);
        assert.deepEqual([at[6 * r + 2], at[6 * r + 3]], [-1, -1]);
        assert.equal(bytes.toString('utf8', at[6 * r + 4], at[6 * r + 5]), 'é');
      }
      assert.throws(() => binaryCopyFields(bytes, 2), /row of 3 fields where 2/);
      for (const cut of [bytes.length - 1, bytes.length - 3, 40, 19])
        assert.throws(() => binaryCopyFields(bytes.subarray(0, cut), 3), /cut short/, `cut at ${cut}`);
      assert.throws(() => binaryCopyFields(Buffer.from('a,b\n'), 2), /not a binary COPY answer/);
      // An answer larger than the caller allows is refused once it ends, and the connection goes on.
      const copy3 = `copy (select '\\xff00c3'::bytea as a, null::bytea as b, 'é'::text as c from generate_series(1, 3)) to stdout (format binary)`;
      assert.equal((await copyOut(c, copy3, undefined, bytes.length)).length, bytes.length);
      await assert.rejects(copyOut(c, copy3, undefined, bytes.length - 1), new RegExp(`larger than the ${bytes.length - 1} bytes`));
      // A statement the server refuses midway rejects, and the same connection answers the next one.
      await assert.rejects(copyOut(c, 'copy (select 1 / (3 - i) from generate_series(1, 5) i) to stdout (format binary)'), /division by zero/);
      assert.deepEqual((await c.query('select 41 + 1 as x')).rows, [{ x: 42 }]);
    } finally {
      await c.end();
    }
  });

  it("under a client's query_timeout, a COPY answered in time leaves no timer armed, and one that is not answered in time is refused", async () => {
    // The team store's clients have a query timeout: node-postgres arms a timer per statement,
    // cleared through the statement's callback once the answer is in.
    const c = new pg.Client({ connectionString: server.url, query_timeout: 30_000 });
    await c.connect();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    try {
      const ten = 'copy (select 1::int4 from generate_series(1, 10)) to stdout (format binary)';
      // A first statement, so that what the connection itself arms is counted before.
      await copyOut(c, ten);
      const before = timers();
      for (let i = 0; i < 8; i++) assert.ok((await copyOut(c, ten)).length > 0);
      await assert.rejects(copyOut(c, 'copy (select 1 / 0) to stdout (format binary)'), /division by zero/);
      assert.ok(timers() <= before, `${timers() - before} more timers armed after nine statements answered`);
    } finally {
      await c.end();
    }
    const slow = new pg.Client({ connectionString: server.url, query_timeout: 300 });
    await slow.connect();
    try {
      await assert.rejects(copyOut(slow, 'copy (select pg_sleep(1.5)) to stdout (format binary)'), /Query read timeout/);
    } finally {
      await slow.end().catch(() => undefined);
    }
  });

  it('read-only never writes, even where the role may', async () => {
    const s = store({ readOnly: true });
    assert.equal((await s.open()).writable, false);
    assert.equal(await s.give([hashOf(777_777)], [randomVector(256, 3)]), 0);
    assert.equal((await s.take([hashOf(777_777)])).vectors.size, 0);
  });

  it('searches in the store through an HNSW index: the nearest stored vector first', async () => {
    const s = store();
    await s.makeSearchable();
    assert.equal((await store().open()).searchable, true);
    const target = randomVector(256, 42);
    const hits = await s.nearest(target, 5);
    assert.equal(hits[0].hash, hashOf(41));
    assert.ok(hits[0].score > 0.99);
    assert.equal(hits.length, 5);
  });

  it('a store that goes down is reported as unreachable, without the password, and stays down for that client', async () => {
    const s = store({ password: 'sekret-pass-1' });
    await s.open();
    await server.pause();
    try {
      await assert.rejects(
        s.take([hashOf(1)]),
        (e: Error) => e instanceof TeamStoreError && e.problem === 'unreachable' && !e.message.includes('sekret-pass-1'),
      );
    } finally {
      await server.resume();
    }
    await assert.rejects(s.take([hashOf(1)]), (e: Error) => e instanceof TeamStoreError && e.problem === 'unreachable');
    assert.equal((await store().take([hashOf(1)])).vectors.size, 1);
  });
});

describe('shared embeddings: teammates over the same repository', function () {
  this.timeout(90_000);
  const ctx = useEmulator();
  let server: PgliteServer;
  let root: string;
  const dirs: string[] = [];
  const stores: TeamStore[] = [];
  const indexes: SemanticIndex[] = [];
  before(async () => {
    server = await startPgliteServer();
    root = mkdtempSync(join(tmpdir(), 'mg-team-repo-'));
    mkdirSync(join(root, 'src'));
    for (let i = 0; i < 30; i++)
      writeFileSync(
        join(root, 'src', `part${i}.ts`),
        `// part ${i}: ${i % 3 === 0 ? 'parses invoices' : i % 3 === 1 ? 'renders charts' : 'retries requests'}\nexport function part${i}(x: number): number {\n  return x * ${i} + ${i * 7};\n}\n`,
      );
  });
  after(async () => {
    for (const i of indexes) await i.close();
    for (const s of stores) await s.close();
    await server?.stop();
    for (const d of [root, ...dirs]) rmSync(d, { recursive: true, force: true });
  });

  /** A teammate: an index of their own (a fresh local folder) over the same repository and store. */
  function teammate(o: { readOnly?: boolean } = {}) {
    const { client } = clientFor(ctx.emu);
    const embed: EmbedFn = (texts, signal, onDone) =>
      client.embeddings.createBatched(MODEL, texts, { batchSize: 16, concurrency: 2, signal, onProgress: (d) => onDone?.(d) });
    const storeDir = mkdtempSync(join(tmpdir(), 'mg-team-local-'));
    dirs.push(storeDir);
    const shared = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER, readOnly: o.readOnly });
    stores.push(shared);
    const failures: unknown[] = [];
    const index = new SemanticIndex({
      folders: [{ name: 'repo', path: root }],
      excludes: [],
      storeDir,
      model: MODEL,
      embed,
      shared,
      onSharedFailure: (e) => failures.push(e),
    });
    indexes.push(index);
    return { index, client, failures };
  }
  const top = async (t: ReturnType<typeof teammate>, text: string) =>
    t.index.search((await t.client.embeddings.create({ model: MODEL, input: text })).data[0].embedding, 3).map((h) => `${h.chunk.file}:${h.chunk.start}`);

  it("the first teammate embeds and fills the store; the second's first build makes no embedding request and answers the same", async () => {
    const a = teammate();
    const before = ctx.emu.stats.embeddingRequests;
    const sa = await a.index.update();
    assert.ok(sa.embedded > 0 && sa.embedded === sa.chunks, JSON.stringify(sa));
    assert.equal(sa.toStore, sa.chunks);
    const b = teammate({ readOnly: true });
    const mid = ctx.emu.stats.embeddingRequests;
    assert.ok(mid > before);
    const sb = await b.index.update();
    assert.equal(ctx.emu.stats.embeddingRequests, mid, 'no embedding request');
    assert.equal(sb.embedded, 0);
    assert.equal(sb.requests, 0);
    assert.equal(sb.fromStore, sb.chunks);
    assert.equal(sb.toStore, 0);
    for (const q of ['parses invoices', 'retries requests', 'part 7 renders charts']) assert.deepEqual(await top(b, q), await top(a, q), q);
  });

  it('a newcomer asks the store for at most two waves beyond what it has stored (a fast store does not pile every vector up on the host)', async () => {
    const big = mkdtempSync(join(tmpdir(), 'mg-team-big-'));
    dirs.push(big);
    // 4,200 one-chunk files: five waves of at least 1,024 chunks.
    for (let i = 0; i < 4200; i++) writeFileSync(join(big, `m${i}.ts`), `export const value${i} = ${i}; // module ${i}\n`);
    const { client } = clientFor(ctx.emu);
    const embed: EmbedFn = (texts, signal, onDone) =>
      client.embeddings.createBatched(MODEL, texts, { batchSize: 256, concurrency: 4, signal, onProgress: (d) => onDone?.(d) });
    const local = () => {
      const storeDir = mkdtempSync(join(tmpdir(), 'mg-team-local-'));
      dirs.push(storeDir);
      return storeDir;
    };
    const store = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER });
    stores.push(store);
    const filler = new SemanticIndex({ folders: [{ name: 'big', path: big }], excludes: [], storeDir: local(), model: MODEL, embed, shared: store });
    indexes.push(filler);
    assert.equal((await filler.update()).toStore, 4200);
    // The newcomer: each time it asks the store, how many vectors it had stored by then.
    let stored = 0;
    const storedAtTake: number[] = [];
    const newcomer = new SemanticIndex({
      folders: [{ name: 'big', path: big }],
      excludes: [],
      storeDir: local(),
      model: MODEL,
      embed,
      // A store far away: each answer takes a second, while the scan forms every wave in about one.
      shared: {
        take: async (hashes) => {
          storedAtTake.push(stored);
          await new Promise((r) => setTimeout(r, 1000));
          return store.take(hashes);
        },
        give: (hashes, vectors) => store.give(hashes, vectors),
      },
    });
    indexes.push(newcomer);
    const before = ctx.emu.stats.embeddingRequests;
    const stats = await newcomer.update(undefined, undefined, (p) => void (p.phase === 'embed' && (stored = p.done)));
    assert.equal(stats.fromStore, 4200);
    assert.equal(ctx.emu.stats.embeddingRequests, before, 'no embedding request');
    assert.ok(storedAtTake.length >= 5, JSON.stringify(storedAtTake));
    storedAtTake.forEach((n, k) => assert.ok(n >= (k - 2) * 1024, `wave ${k} was asked for with ${n} vectors stored: ${JSON.stringify(storedAtTake)}`));
  });

  it('a changed file embeds only its changed chunks; a teammate then takes them', async () => {
    const a = teammate();
    await a.index.update();
    writeFileSync(
      join(root, 'src', 'part4.ts'),
      '// part 4: now sends invoices by mail\nexport function part4(to: string): string {\n  return `mail ${to}`;\n}\n',
    );
    const before = ctx.emu.stats.embeddingRequests;
    const s = await a.index.update([join(root, 'src', 'part4.ts')]);
    assert.equal(s.embedded, 1);
    assert.equal(s.toStore, 1);
    assert.equal(ctx.emu.stats.embeddingRequests, before + 1);
    const b = teammate();
    const sb = await b.index.update();
    assert.equal(sb.embedded, 0);
    assert.equal(ctx.emu.stats.embeddingRequests, before + 1);
  });

  it('the store stopped mid-build: the build finishes locally, reports it once, and adds nothing half-done', async () => {
    // New files nobody embedded yet: the build takes what the store has, then must embed and give these.
    for (let i = 0; i < 60; i++) writeFileSync(join(root, 'src', `late${i}.ts`), `export const late${i} = ${i}; // added later, number ${i}\n`);
    const a = teammate();
    const real = a.index['o'].shared!;
    let took = 0;
    // The store goes down right after the build's first answer from it, before anything is given back.
    (a.index['o'] as { shared: typeof real }).shared = {
      take: async (hashes) => {
        const got = await real.take(hashes);
        took += got.vectors.size;
        await server.pause();
        return got;
      },
      give: (hashes, vectors) => real.give(hashes, vectors),
    };
    try {
      const s = await a.index.update();
      assert.ok(took > 0, 'the store answered first');
      assert.equal(a.failures.length, 1);
      assert.match(s.storeFailure ?? '', /cannot be reached/);
      assert.equal(s.fromStore, took);
      assert.equal(s.toStore, 0);
      assert.equal(s.embedded, 60);
      assert.equal(a.index.size.chunks, s.chunks, 'every chunk indexed');
      assert.equal((await top(a, 'added later number 12'))[0], 'src/late12.ts:1');
    } finally {
      await server.resume();
    }
    // Back up: none of the new rows went in, so the next teammate embeds exactly those.
    const b = teammate();
    const sb = await b.index.update();
    assert.equal(sb.embedded, 60);
    assert.equal(sb.toStore, 60);
  });

  it('the database holds no chunk text and no path: every column of every table read', async () => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      const tables = (await c.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = 'model_gateway'`)).rows.map(
        (r) => r.table_name,
      );
      assert.deepEqual(tables.sort(), ['store', 'vectors']);
      let cells = 0;
      for (const t of tables) {
        const rows = (await c.query({ text: `select * from model_gateway.${t}`, rowMode: 'array' })).rows as unknown[][];
        for (const row of rows)
          for (const cell of row) {
            cells++;
            const text = Buffer.isBuffer(cell) ? cell.toString('latin1') : String(cell);
            for (const needle of ['part', 'invoices', 'src/', 'retries', 'export function', 'late1'])
              assert.ok(!text.includes(needle), `${t} holds "${needle}": ${text.slice(0, 80)}`);
          }
      }
      assert.ok(cells > 100, `${cells} cells read`);
    } finally {
      await c.end();
    }
  });
});

describe('model-gateway-index, the command line that fills a team store', function () {
  this.timeout(90_000);
  const ctx = useEmulator();
  let server: PgliteServer;
  let repo: string;
  before(async () => {
    server = await startPgliteServer();
    repo = mkdtempSync(join(tmpdir(), 'mg-cli-repo-'));
    mkdirSync(join(repo, 'lib'));
    for (let i = 0; i < 12; i++) writeFileSync(join(repo, 'lib', `unit${i}.py`), `# unit ${i}\ndef unit_${i}(x):\n    return x * ${i}\n`);
    writeFileSync(join(repo, '.env'), 'API_TOKEN=never-embedded\n');
  });
  after(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });
  const run = async (args: string[], env: NodeJS.ProcessEnv = { MODEL_GATEWAY_API_KEY: DEMO_KEY }) => {
    const progress: string[] = [];
    const result: string[] = [];
    const r = await runIndexCli(args, env, { progress: (l) => progress.push(l), result: (l) => result.push(l) });
    return { ...r, progress: progress.join('\n'), out: result.join('\n') };
  };
  const base = () => ['--store', server.url, '--gateway', ctx.emu.url, '--model', MODEL];

  it('fills the store from a folder, then a second run takes everything and embeds nothing', async () => {
    const before = ctx.emu.stats.embeddingRequests;
    const first = await run([...base(), '--batch-size', '5', repo]);
    assert.equal(first.stats.files, 12, 'the .env file is never read');
    assert.equal(first.stats.embedded, 12);
    assert.equal(first.stats.toStore, 12);
    assert.equal(ctx.emu.stats.embeddingRequests - before, 3);
    assert.ok(first.promptTokens > 0);
    assert.match(first.out, /taken from the store 0, embedded 12 in 3 requests \([\d,]+ tokens\), added to the store 12/);
    assert.match(first.out, /cost (\$[\d.]+|unknown \(the gateway lists no price)/);
    assert.match(first.progress, /store postgres@127\.0\.0\.1:\d+\/postgres: 0 vectors of embed-emu-256/);
    const second = await run([...base(), repo]);
    assert.equal(second.stats.embedded, 0);
    assert.equal(second.stats.fromStore, 12);
    assert.equal(ctx.emu.stats.embeddingRequests - before, 3);
    assert.match(second.out, /store now 12 vectors/);
  });

  it('refuses what it cannot do safely, saying what to change: no key, a password on the command line, a missing folder argument', async () => {
    await assert.rejects(run([...base(), repo], {}), (e: Error) => e instanceof UsageError && /MODEL_GATEWAY_API_KEY/.test(e.message));
    await assert.rejects(
      run(['--store', 'postgres://ci:hunter2@127.0.0.1:1/x', '--gateway', ctx.emu.url, repo]),
      (e: Error) => /holds a password/.test(e.message) && !e.message.includes('hunter2'),
    );
    await assert.rejects(run([...base()]), (e: Error) => e instanceof UsageError && /Give exactly one folder/.test(e.message));
    await assert.rejects(run([...base(), '--concurrency', '0', repo]), /--concurrency must be a whole number/);
  });

  it('runs as a program: exit code 2 and the usage on a bad call, the key never printed', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'src', 'cli', 'indexCli.ts'), '--gateway', ctx.emu.url, repo], {
      env: { ...process.env, MODEL_GATEWAY_API_KEY: 'sk-cli-secret-123' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /Missing --store/);
    assert.ok(!`${r.stdout}${r.stderr}`.includes('sk-cli-secret-123'));
  });
});

describe('search in the team store: no vectors on this machine', function () {
  this.timeout(120_000);
  const ctx = useEmulator();
  let server: PgliteServer;
  let root: string;
  const dirs: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  let teammate: SemanticIndex;
  before(async () => {
    server = await startPgliteServer();
    root = mkdtempSync(join(tmpdir(), 'mg-store-search-'));
    mkdirSync(join(root, 'src'));
    const topics = [
      'parses invoices into lines',
      'renders a bar chart of spend',
      'retries a request after a pause',
      'hashes passwords with a salt',
      'formats dates for the log',
      'reads the config file',
      'sorts users by name',
      'sends the weekly email',
    ];
    topics.forEach((t, i) =>
      writeFileSync(join(root, 'src', `m${i}.ts`), `// This module ${t}.\nexport function m${i}(input: string): string {\n  return input + ' ${t}';\n}\n`),
    );
    // A teammate fills the store (a local index with shared embeddings), with one more file than this window will have.
    writeFileSync(
      join(root, 'src', 'private.ts'),
      '// This module retries a request after a pause, with jitter and a budget.\nexport const privateRetry = 1;\n',
    );
    const local = mkdtempSync(join(tmpdir(), 'mg-store-search-local-'));
    dirs.push(local);
    const fill = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER });
    teammate = new SemanticIndex({
      folders: [{ name: 'repo', path: root }],
      excludes: [],
      storeDir: local,
      model: MODEL,
      embed: embedder().embed,
      shared: fill,
    });
    closers.push(
      () => teammate.close(),
      () => fill.close(),
    );
    const filled = await teammate.update();
    assert.equal(filled.toStore, filled.chunks);
    await fill.makeSearchable();
    rmSync(join(root, 'src', 'private.ts'));
  });
  after(async () => {
    for (const c of closers) await c();
    await server?.stop();
    for (const d of [root, ...dirs]) rmSync(d, { recursive: true, force: true });
  });
  const embedder = () => {
    const { client } = clientFor(ctx.emu);
    const embed: EmbedFn = (texts, signal, onDone) =>
      client.embeddings.createBatched(MODEL, texts, { batchSize: 16, concurrency: 2, signal, onProgress: (d) => onDone?.(d) });
    return { client, embed };
  };

  it('a window searching in the store embeds nothing it finds there, answers as the local index does, and shows only chunks it holds', async () => {
    const { client, embed } = embedder();
    const a = teammate;
    const sa = { chunks: a.size.chunks };

    const store = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER, readOnly: true });
    closers.push(() => store.close());
    const b = new StoreSearchIndex({ folders: [{ name: 'repo', path: root }], excludes: [], model: MODEL, embed, store });
    closers.push(() => b.close());
    const before = ctx.emu.stats.embeddingRequests;
    assert.equal(await b.load(), 'loaded');
    assert.equal(ctx.emu.stats.embeddingRequests, before, 'the scan embeds nothing');
    assert.equal(b.size.chunks, sa.chunks - 1);
    assert.equal(b.withoutVectors, 0);
    const vector = async (q: string) => (await client.embeddings.create({ model: MODEL, input: q })).data[0].embedding;
    for (const q of ['sends the weekly email', 'hashes passwords with a salt']) {
      const inStore = await b.search(await vector(q), 3);
      assert.deepEqual(
        inStore.map((h) => h.chunk.file),
        a
          .search(await vector(q), 4)
          .filter((h) => h.chunk.file !== 'src/private.ts')
          .slice(0, 3)
          .map((h) => h.chunk.file),
        q,
      );
    }
    // The store's nearest chunk for this is the teammate's private.ts, which this machine does not hold: never shown.
    const hits = await b.search(await vector('This module retries a request after a pause, with jitter and a budget.'), 5);
    assert.ok(hits.length > 0 && hits.every((h) => h.chunk.file !== 'src/private.ts'), JSON.stringify(hits));
    assert.equal(hits[0].chunk.file, 'src/m2.ts');
  });

  it('a file only this window has is keyword-only while it may not write, and searchable by meaning once a writer adds it', async () => {
    const { client, embed } = embedder();
    writeFileSync(join(root, 'src', 'fresh.ts'), '// This module plays a chime when a job completes.\nexport const chime = 1;\n');
    const reader = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER, readOnly: true });
    const writer = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER });
    closers.push(
      () => reader.close(),
      () => writer.close(),
    );
    const b = new StoreSearchIndex({ folders: [{ name: 'repo', path: root }], excludes: [], model: MODEL, embed, store: reader });
    await b.load();
    const s1 = await b.update();
    assert.equal(s1.toStore, 0);
    assert.equal(s1.embedded, 0, 'a window that may not write pays for no embedding it cannot keep');
    assert.equal(b.withoutVectors, 1);
    assert.equal(b.keywordSearch('chime', 3)[0]?.item.file, 'src/fresh.ts');
    const w = new StoreSearchIndex({ folders: [{ name: 'repo', path: root }], excludes: [], model: MODEL, embed, store: writer });
    const s2 = await w.update();
    assert.equal(s2.embedded, 1);
    assert.equal(s2.toStore, 1);
    assert.equal(w.withoutVectors, 0);
    const q = (await client.embeddings.create({ model: MODEL, input: 'This module plays a chime when a job completes.' })).data[0].embedding;
    assert.equal((await w.search(q, 1))[0].chunk.file, 'src/fresh.ts');
  });

  it('a window that opened with chunks the store lacked embeds them at its next build, when it may write', async () => {
    const { client, embed } = embedder();
    writeFileSync(join(root, 'src', 'late.ts'), '// This module waters the plants every morning.\nexport const water = 1;\n');
    const writer = new TeamStore({ url: server.url, model: MODEL, chunker: CHUNKER });
    closers.push(() => writer.close());
    const w = new StoreSearchIndex({ folders: [{ name: 'repo', path: root }], excludes: [], model: MODEL, embed, store: writer });
    const before = ctx.emu.stats.embeddingRequests;
    await w.load();
    assert.equal(ctx.emu.stats.embeddingRequests, before, 'opening embeds nothing');
    assert.equal(w.withoutVectors, 1);
    // Nothing changed on disk: the build still embeds the chunk the store lacks, and only that one.
    const built = await w.update();
    assert.equal(built.embedded, 1);
    assert.equal(built.toStore, 1);
    assert.equal(w.withoutVectors, 0);
    const q = (await client.embeddings.create({ model: MODEL, input: 'This module waters the plants every morning.' })).data[0].embedding;
    assert.equal((await w.search(q, 1))[0].chunk.file, 'src/late.ts');
    assert.equal((await w.update()).embedded, 0, 'a second build has nothing left to embed');
  });
});
