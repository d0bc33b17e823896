import { isIP } from 'node:net';
import pg from 'pg';
import { isLoopback } from '../../../common/loopback';
import { binaryCopyFields, binaryCopySize, copyOut, type CopyScratch } from './copyOut';
import { decodeHalfvecRows, encodeHalfvec } from '../vectors/halfFloat';
import { Slicer } from '../slices';

/**
 * A team's store of embeddings in PostgreSQL with pgvector: one embedding model, one dimension,
 * one chunker, and rows of (content hash, vector). It holds no chunk text and no path: a client
 * gets a vector only by asking for a hash it computed from its own files, and uses a search
 * result only for a hash it holds.
 */

/** The schema this code reads and writes; a store made by a newer one is refused. */
export const STORE_SCHEMA_VERSION = 1;
const SCHEMA = 'model_gateway';
/**
 * Rows read per statement: a read's answer is some 1.5 MB at 1,536 dimensions, parsed without a
 * long pause. Vectors come through COPY in binary (`copyOut.ts`): against PGlite, 100,000 of them
 * took 2.8–3.7 s of the server's CPU, where base64 text (node-postgres reads results as text
 * only) took 3.5–5.0 s, and this process's share fell from 1.0–1.3 s to 0.7–0.9 s.
 */
const TAKE_BATCH = 500;
const GIVE_BATCH = 500;

export type TeamStoreProblem = 'unreachable' | 'sign-in' | 'refused' | 'not-set-up' | 'cannot-search' | 'failed';

/**
 * What to change, in the words of where the person is: the extension names its settings and
 * commands (`teamStoreLink.ts`), the command line its flags and environment variables
 * (`indexCli.ts`). Each is a sentence or two, appended to what went wrong.
 */
export interface TeamStoreAdvice {
  /** The server asks for a password and none was given. */
  givePassword: string;
  /** The server refused the user or the password. */
  checkSignIn: string;
  /** The server's certificate did not verify. */
  trustCa: string;
  /** TLS was asked of a server that does not offer it. */
  connectWithoutTls: string;
  /** The store holds vectors of another model than the one asked. */
  otherModel(storeModel: string, ourModel: string): string;
  /** The store was made by a newer version. */
  update: string;
  /** Who asks, in the message that names both models ("this window's search"). */
  asker: string;
  /** The store is not set up and this client only reads. */
  readOnlyHere: string;
}

/** A store that cannot be used, with a message that says why and what to do. */
export class TeamStoreError extends Error {
  constructor(
    readonly problem: TeamStoreProblem,
    message: string,
  ) {
    super(message);
    this.name = 'TeamStoreError';
  }
}

/** Advice in no surface's words (benchmarks, tests); the extension and the command line give their own. */
export const PLAIN_ADVICE: TeamStoreAdvice = {
  givePassword: 'Give the password for this user.',
  checkSignIn: 'Check the user in the address and its password.',
  trustCa: 'Trust its CA, or use sslmode=disable only for a server on a private network.',
  connectWithoutTls: 'Connect without TLS only on a private network: add ?sslmode=disable to the address.',
  otherModel: (storeModel, ourModel) => `Use "${storeModel}" to share it, or a store for "${ourModel}".`,
  update: 'Update Model Gateway.',
  asker: 'this client',
  readOnlyHere: 'this client only reads it.',
};

export interface TeamStoreOptions {
  /** `postgres://user@host:port/database`, without a password (`?sslmode=disable|require|verify-full` read). */
  url: string;
  password?: string;
  /** Certificates to trust for TLS (the gateway's own list). */
  ca?: string[];
  /** False only when the person turned certificate checks off. */
  rejectUnauthorized?: boolean;
  /** Never writes, even where the role may. */
  readOnly?: boolean;
  /** What messages tell the person to change (settings and commands, or flags and variables); plain words by default. */
  advice?: TeamStoreAdvice;
  model: string;
  /** What cuts files into chunks (its version and size): equal hashes must mean equal chunking. */
  chunker: string;
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
}

/**
 * How the store keeps its vectors: pgvector's `halfvec` where the database had pgvector when the
 * store was made, else `bytea` holding the same bytes (halfvec's binary form). A bytea store shares
 * embeddings as well; only search in the store needs pgvector.
 */
export type VectorColumn = 'halfvec' | 'bytea';

export interface TeamStoreState {
  /** Where it is, for people: `user@host:port/database`. */
  where: string;
  model: string;
  chunker: string;
  /** Unknown until the first vector is stored. */
  dimensions: number | undefined;
  rows: number;
  writable: boolean;
  /** Whether the store has its nearest-neighbour index (search in the store needs it). */
  searchable: boolean;
  vectors: VectorColumn;
}

/** The connection settings of a store's URL; a password in it is refused (it would sit in settings). */
export function parseStoreUrl(url: string): { config: pg.ClientConfig; where: string; tls: 'off' | 'on' } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TeamStoreError('refused', `The team store's address is not a URL: write it as postgres://user@host:5432/database.`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new TeamStoreError('refused', `The team store's address starts with ${u.protocol}; it must be postgres://user@host:5432/database.`);
  if (u.password)
    throw new TeamStoreError(
      'refused',
      `The team store's address holds a password. Remove it from the address (settings are not secret) and use "Model Gateway: Set Team Store Password", or PGPASSWORD for the command line.`,
    );
  if (!u.hostname) throw new TeamStoreError('refused', 'The team store address names no host.');
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const user = decodeURIComponent(u.username) || 'postgres';
  const sslmode = u.searchParams.get('sslmode') ?? undefined;
  if (sslmode && !['disable', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(sslmode))
    throw new TeamStoreError('refused', `The team store's sslmode "${sslmode}" is not one of disable, require, verify-full.`);
  // TLS with certificate checks, unless the server is on this machine or the address says disable:
  // `require` is read as verify-full (a careful client does not send a password to anyone who answers).
  const tls = sslmode === 'disable' || (sslmode === undefined && isLoopback(u.hostname)) || (sslmode === 'prefer' && isLoopback(u.hostname)) ? 'off' : 'on';
  const port = u.port ? Number(u.port) : 5432;
  return { config: { host: u.hostname.replace(/^\[|\]$/g, ''), port, database, user }, where: `${user}@${u.hostname}:${port}/${database}`, tls };
}

/** The nearest-neighbour statement: $1 the query's halfvec. */
const NEAREST = (k: number) => `select hash, embedding <=> $1::halfvec as d from ${SCHEMA}.vectors order by embedding <=> $1::halfvec limit ${Math.floor(k)}`;

/** Whether the vectors have an HNSW index (ours, or one an administrator made under another name). */
const hasHnswIndex = async (client: pg.Client) =>
  ((await client.query(`select 1 from pg_indexes where schemaname = '${SCHEMA}' and tablename = 'vectors' and indexdef ilike '%using hnsw%'`)).rowCount ?? 0) >
  0;

const hashBytes = (hash: string) => Buffer.from(hash, 'hex');

const HASH_BYTES = 16;
const HASH_TEXT = /^[0-9a-f]{32}$/;

/**
 * Hashes sent as one bytea of 16 bytes each, split by the server (`IN_PACKED`): node-postgres
 * writes an array as text, one escaped literal per element, which the server then parses; one
 * binary value made `has` 1.5 times as fast against PGlite. A malformed hash cannot be stored, so it is not asked.
 */
function packHashes(hashes: readonly string[]): Buffer {
  const valid = hashes.filter((h) => HASH_TEXT.test(h));
  const out = Buffer.allocUnsafe(valid.length * HASH_BYTES);
  valid.forEach((h, i) => out.write(h, i * HASH_BYTES, HASH_BYTES, 'hex'));
  return out;
}
const IN_PACKED = `any(array(select substring($1::bytea from i * ${HASH_BYTES} + 1 for ${HASH_BYTES}) from generate_series(0, length($1::bytea) / ${HASH_BYTES} - 1) i))`;
/**
 * The same within a statement that takes no parameters (COPY): the hashes as a hex literal, which
 * holds only hex digits (`packHashes` made it) and which the planner decodes once.
 */
const inPacked = (packed: Buffer) => IN_PACKED.replaceAll('$1::bytea', `decode('${packed.toString('hex')}', 'hex')`);

/** Whether an error is the connection's rather than the statement's (the store is down). */
function connectionLost(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  if (typeof code === 'string' && /^(ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|57P0|08)/.test(code)) return true;
  const m = (err as Error)?.message ?? '';
  return /Connection terminated|timeout|not queryable|Client has encountered a connection error/i.test(m);
}

export class TeamStore {
  private client: pg.Client | undefined;
  private state: TeamStoreState | undefined;
  private readonly where: string;
  private lost: TeamStoreError | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** Where `take`'s answers are read into, one at a time (operations on the connection are). */
  private readonly copyScratch: CopyScratch = { bytes: Buffer.allocUnsafe(1 << 16) };

  private readonly advice: TeamStoreAdvice;

  constructor(private readonly o: TeamStoreOptions) {
    this.where = parseStoreUrl(o.url).where;
    this.advice = o.advice ?? PLAIN_ADVICE;
  }

  /** Connects, creates or checks the schema, and says what the store holds. */
  async open(): Promise<TeamStoreState> {
    if (this.state) return this.state;
    const { config, tls } = parseStoreUrl(this.o.url);
    const client = new pg.Client({
      ...config,
      // Asked only when the server wants a password: a missing one is said at once (pg would
      // otherwise look for a .pgpass file, which the bundle leaves out).
      password: () =>
        this.o.password
          ? Promise.resolve(this.o.password)
          : Promise.reject(new TeamStoreError('sign-in', `The team store ${this.where} asks for a password, and none is set. ${this.advice.givePassword}`)),
      ssl:
        tls === 'on'
          ? { ca: this.o.ca, rejectUnauthorized: this.o.rejectUnauthorized !== false, servername: isIP(config.host ?? '') ? undefined : config.host }
          : false,
      connectionTimeoutMillis: this.o.connectTimeoutMs ?? 5000,
      query_timeout: this.o.queryTimeoutMs ?? 60_000,
      application_name: 'model-gateway',
    });
    // An idle connection that breaks must not throw out of the event loop.
    client.on('error', (err) => (this.lost ??= this.describe(err)));
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw this.describe(err);
    }
    this.client = client;
    try {
      this.state = await this.prepare(client);
      return this.state;
    } catch (err) {
      await this.close();
      throw err instanceof TeamStoreError ? err : this.describe(err);
    }
  }

  private async prepare(client: pg.Client): Promise<TeamStoreState> {
    // Read from the catalog's tables with a statement's own snapshot: `to_regclass` looks names up
    // in the session's cache, which may not yet see a table another connection made a moment ago
    // (two first fills at once: the one that waited for the lock then tried to make it again).
    const exists = async (name: 'store' | 'vectors') =>
      (
        await client.query<{ e: boolean }>(
          `select exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = '${SCHEMA}' and c.relname = '${name}') as e`,
        )
      ).rows[0].e;
    const hasVectorExtension = async () => (await client.query(`select 1 from pg_extension where extname = 'vector'`)).rowCount === 1;
    if (!(await exists('store'))) {
      if (this.o.readOnly)
        throw new TeamStoreError(
          'not-set-up',
          `The team store ${this.where} is not set up yet, and ${this.advice.readOnlyHere} Someone who may write fills it first (a build with the store set, or model-gateway-index from CI).`,
        );
      await this.inTransaction(client, async () => {
        await client.query(`select pg_advisory_xact_lock(hashtext('${SCHEMA}'))`);
        if (await exists('store')) return;
        // pgvector where the database has it and this role may enable it; otherwise the vectors are
        // kept as bytea (a managed database whose administrator has not enabled pgvector).
        if (!(await hasVectorExtension())) {
          await client.query('savepoint vector_extension');
          await client.query('create extension if not exists vector').then(
            () => client.query('release savepoint vector_extension'),
            () => client.query('rollback to savepoint vector_extension'),
          );
        }
        // Made by an administrator already, where roles may not create schemas (see docs/team-store.md).
        const hasSchema = (await client.query(`select 1 from pg_namespace where nspname = '${SCHEMA}'`)).rowCount === 1;
        if (!hasSchema) await client.query(`create schema ${SCHEMA}`);
        await client.query(
          `create table ${SCHEMA}.store (
            singleton boolean primary key default true check (singleton),
            schema_version integer not null,
            model text not null,
            chunker text not null,
            dimensions integer,
            created_at timestamptz not null default now())`,
        );
        await client.query(`insert into ${SCHEMA}.store (schema_version, model, chunker) values ($1, $2, $3)`, [
          STORE_SCHEMA_VERSION,
          this.o.model,
          this.o.chunker,
        ]);
      });
    }
    const meta = (
      await client.query<{ schema_version: number; model: string; chunker: string; dimensions: number | null }>(
        `select schema_version, model, chunker, dimensions from ${SCHEMA}.store`,
      )
    ).rows[0];
    if (!meta)
      throw new TeamStoreError('refused', `The team store ${this.where} has no description row (${SCHEMA}.store is empty): it was not made by Model Gateway.`);
    if (meta.schema_version > STORE_SCHEMA_VERSION)
      throw new TeamStoreError(
        'refused',
        `The team store ${this.where} was made by a newer Model Gateway (schema ${meta.schema_version}; this one reads ${STORE_SCHEMA_VERSION}). ${this.advice.update}`,
      );
    if (meta.model !== this.o.model)
      throw new TeamStoreError(
        'refused',
        `The team store ${this.where} holds vectors of "${meta.model}", and ${this.advice.asker} uses "${this.o.model}". ${this.advice.otherModel(meta.model, this.o.model)}`,
      );
    if (meta.chunker !== this.o.chunker)
      throw new TeamStoreError(
        'refused',
        `The team store ${this.where} was filled with chunks cut as "${meta.chunker}", and these are cut as "${this.o.chunker}": their hashes would never match. Use the same version and chunk size as the team.`,
      );
    const dimensions = meta.dimensions ?? undefined;
    const hasRows = dimensions !== undefined && (await exists('vectors'));
    const rows = hasRows ? Number((await client.query<{ n: string }>(`select count(*) as n from ${SCHEMA}.vectors`)).rows[0].n) : 0;
    const may = hasRows
      ? (await client.query<{ ok: boolean }>(`select has_table_privilege('${SCHEMA}.vectors', 'INSERT') as ok`)).rows[0].ok
      : (await client.query<{ ok: boolean }>(`select has_schema_privilege('${SCHEMA}', 'CREATE') and has_table_privilege('${SCHEMA}.store', 'UPDATE') as ok`))
          .rows[0].ok;
    const vectors: VectorColumn = hasRows
      ? (
          await client.query<{ t: string }>(
            `select t.typname as t from pg_attribute a join pg_type t on t.oid = a.atttypid where a.attrelid = '${SCHEMA}.vectors'::regclass and a.attname = 'embedding'`,
          )
        ).rows[0]?.t === 'halfvec'
        ? 'halfvec'
        : 'bytea'
      : (await hasVectorExtension())
        ? 'halfvec'
        : 'bytea';
    const searchable = hasRows && vectors === 'halfvec' && (await hasHnswIndex(client));
    return { where: this.where, model: meta.model, chunker: meta.chunker, dimensions, rows, writable: may && !this.o.readOnly, searchable, vectors };
  }

  private async inTransaction<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
    // Read committed, whatever the server's default: each statement after the advisory lock must
    // see what the connection that held it committed.
    await client.query('begin isolation level read committed');
    try {
      const out = await work();
      await client.query('commit');
      return out;
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  private async ready(): Promise<{ client: pg.Client; state: TeamStoreState }> {
    if (this.lost) throw this.lost;
    const state = await this.open();
    return { client: this.client!, state };
  }

  /** A failure as a `TeamStoreError` whose message names the store and the fix (never the password). */
  private describe(err: unknown): TeamStoreError {
    if (err instanceof TeamStoreError) return err;
    const e = err as { code?: string; message?: string };
    const why = (e?.message ?? String(err)).replaceAll(this.o.password || '\u0000', '***');
    if (e?.code === '28P01' || e?.code === '28000')
      return new TeamStoreError('sign-in', `The team store ${this.where} refused the sign-in (${why}). ${this.advice.checkSignIn}`);
    if (e?.code === '42501')
      return new TeamStoreError(
        'refused',
        `The team store ${this.where} refused this role (${why}). It may need the extension and schema made by an administrator (see the docs), or write access.`,
      );
    if (e?.code === '3D000') return new TeamStoreError('refused', `The team store's database does not exist (${why}).`);
    // pg's words when the server answers a TLS request with "no".
    if (/does not support SSL/i.test(why))
      return new TeamStoreError(
        'unreachable',
        `The team store ${this.where} does not offer TLS, and TLS was asked for (sslmode=require or verify-full, or a server not on this machine). ${this.advice.connectWithoutTls}`,
      );
    if (/self.signed|certificate|SSL|TLS/i.test(why))
      return new TeamStoreError('unreachable', `The team store ${this.where} failed the TLS check (${why}). ${this.advice.trustCa}`);
    if (connectionLost(err)) return new TeamStoreError('unreachable', `The team store ${this.where} cannot be reached (${why}).`);
    return new TeamStoreError('failed', `The team store ${this.where} failed: ${why}`);
  }

  /**
   * One operation at a time on the connection: a search's transaction must not take in another
   * caller's inserts (and node-postgres stops queueing concurrent queries in its next major).
   */
  private run<T>(work: (client: pg.Client, state: TeamStoreState) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const { client, state } = await this.ready();
      try {
        return await work(client, state);
      } catch (err) {
        const failure = this.describe(err);
        if (failure.problem === 'unreachable') this.lost = failure;
        throw failure;
      }
    });
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /**
   * The vectors the store holds for these hashes (32 hex digits each). A row that cannot be used
   * (another dimension, a value that is not finite, a zero vector) is left out: it is embedded
   * again as if it were missing.
   */
  async take(hashes: readonly string[]): Promise<{ vectors: Map<string, Float32Array>; unusable: number }> {
    return this.run(async (client, state) => {
      const vectors = new Map<string, Float32Array>();
      let unusable = 0;
      if (state.dimensions === undefined || hashes.length === 0) return { vectors, unusable };
      for (let at = 0; at < hashes.length; at += TAKE_BATCH) {
        // The rows found, through COPY in binary: each its 16-byte hash, then its vector in halfvec's
        // binary form (an int16 count of halves, an unused int16, the halves), as raw bytes.
        const packed = packHashes(hashes.slice(at, at + TAKE_BATCH));
        // At most one row per hash asked (the hash is the key), each of this store's dimension
        // (halfvec's binary form: two int16s, then the halves).
        const maxBytes = binaryCopySize(packed.length / HASH_BYTES, [HASH_BYTES, 4 + 2 * state.dimensions]);
        const bytes = await copyOut(
          client,
          `copy (select hash, embedding from ${SCHEMA}.vectors where hash = ${inPacked(packed)}) to stdout (format binary)`,
          this.copyScratch,
          maxBytes,
        );
        const { rows, at: fields } = binaryCopyFields(bytes, 2);
        // One buffer per answer, each vector a view of it: a newcomer pulls 100,000 vectors, and
        // as many separate arrays made the collector pause the host for 200 ms.
        const starts = new Int32Array(rows);
        const ends = new Int32Array(rows);
        for (let row = 0; row < rows; row++) {
          starts[row] = fields[4 * row + 2];
          ends[row] = fields[4 * row + 3];
        }
        const { pool, problems } = decodeHalfvecRows(bytes, starts, ends, state.dimensions);
        const slices = new Slicer(4);
        for (let row = 0; row < rows; row++) {
          const hashStart = fields[4 * row];
          const hashEnd = fields[4 * row + 1];
          if (hashEnd - hashStart !== HASH_BYTES || problems[row] !== undefined) unusable++;
          else vectors.set(bytes.toString('hex', hashStart, hashEnd), pool.subarray(row * state.dimensions, (row + 1) * state.dimensions));
          if (row % 128 === 127) await slices.maybeYield();
        }
      }
      return { vectors, unusable };
    });
  }

  /** Which of these hashes the store has a vector for (search in the store asks, and pulls nothing). */
  async has(hashes: readonly string[]): Promise<Set<string>> {
    return this.run(async (client, state) => {
      const found = new Set<string>();
      if (state.dimensions === undefined) return found;
      for (let at = 0; at < hashes.length; at += TAKE_BATCH) {
        const r = await client.query<{ hash: Buffer }>(`select hash from ${SCHEMA}.vectors where hash = ${IN_PACKED}`, [
          packHashes(hashes.slice(at, at + TAKE_BATCH)),
        ]);
        for (const row of r.rows) found.add(row.hash.toString('hex'));
      }
      return found;
    });
  }

  /**
   * Adds vectors the store lacks: each statement is one transaction (all its rows or none), and a
   * hash already there is left as it is (two teammates adding the same rows at once lose nothing
   * and duplicate nothing). Returns the rows added; nothing when the store is read-only.
   */
  async give(hashes: readonly string[], vectors: readonly Float32Array[]): Promise<number> {
    if (hashes.length === 0) return 0;
    return this.run(async (client, state) => {
      if (!state.writable) return 0;
      const dim = vectors[0].length;
      if (state.dimensions === undefined) await this.fixDimensions(client, state, dim);
      if (dim !== state.dimensions)
        throw new TeamStoreError(
          'refused',
          `The team store ${this.where} holds ${state.dimensions}-dimension vectors of "${state.model}", and the gateway now returns ${dim}: nothing was added.`,
        );
      let added = 0;
      for (let at = 0; at < hashes.length; at += GIVE_BATCH) {
        const params: Buffer[] = [];
        const rows: string[] = [];
        for (let i = at; i < Math.min(hashes.length, at + GIVE_BATCH); i++) {
          if (vectors[i].length !== dim) continue;
          params.push(hashBytes(hashes[i]), encodeHalfvec(vectors[i]));
          rows.push(`($${params.length - 1}::bytea, $${params.length}::${state.vectors})`);
        }
        if (rows.length === 0) continue;
        const r = await client.query(`insert into ${SCHEMA}.vectors (hash, embedding) values ${rows.join(', ')} on conflict (hash) do nothing`, params);
        added += r.rowCount ?? 0;
      }
      state.rows += added;
      return added;
    });
  }

  /** Records the store's dimension and makes its table: the first writer does, the others wait and read it. */
  private async fixDimensions(client: pg.Client, state: TeamStoreState, dim: number): Promise<void> {
    if (!Number.isInteger(dim) || dim < 1 || dim > 4000)
      throw new TeamStoreError('refused', `A ${dim}-dimension vector cannot be kept in a halfvec column (1 to 4,000).`);
    await this.inTransaction(client, async () => {
      await client.query(`select pg_advisory_xact_lock(hashtext('${SCHEMA}'))`);
      const now = (await client.query<{ dimensions: number | null }>(`select dimensions from ${SCHEMA}.store`)).rows[0].dimensions;
      if (now !== null) {
        state.dimensions = now;
        return;
      }
      // halfvec's binary form in a bytea where the database has no pgvector: an int16 count, an
      // unused int16, then the halves (what COPY gives for a halfvec, so `take` reads both alike).
      const column = state.vectors === 'halfvec' ? `halfvec(${dim})` : `bytea check (octet_length(embedding) = ${4 + 2 * dim})`;
      await client.query(`create table if not exists ${SCHEMA}.vectors (hash bytea primary key check (octet_length(hash) = 16), embedding ${column} not null)`);
      // Each vector in its row: pgvector's types are stored out of line once a row passes 2 KB
      // (about 1,000 dimensions and up), and every vector taken then cost a second index lookup
      // and two more page reads. Uncompressed in the row, a halfvec(4000) row still fits a page.
      await client.query(`alter table ${SCHEMA}.vectors alter column embedding set storage plain`);
      await client.query(`update ${SCHEMA}.store set dimensions = $1`, [dim]);
      state.dimensions = dim;
    });
  }

  /** Makes the nearest-neighbour index search in the store needs (HNSW over cosine distance). */
  async makeSearchable(): Promise<void> {
    await this.run(async (client, state) => {
      if (state.searchable) return;
      if (state.dimensions === undefined)
        throw new TeamStoreError('not-set-up', `The team store ${this.where} holds no vectors yet: fill it before searching in it.`);
      if (state.vectors !== 'halfvec') throw this.needsPgvector();
      // The graph built in memory (pgvector writes it out page by page otherwise, many times
      // slower); `set local` ends with the transaction. Minutes on a large store: a day's read
      // timeout for this one statement. Under the store's lock, checked in the catalog's table:
      // two CI jobs asking at once would otherwise both build it, and one fail on its name.
      await this.inTransaction(client, async () => {
        await client.query(`select pg_advisory_xact_lock(hashtext('${SCHEMA}'))`);
        if (await hasHnswIndex(client)) return;
        await client.query(`set local maintenance_work_mem = '512MB'`);
        await client.query({
          text: `create index vectors_embedding_hnsw on ${SCHEMA}.vectors using hnsw (embedding halfvec_cosine_ops)`,
          query_timeout: 86_400_000,
        } as pg.QueryConfig);
      });
      state.searchable = true;
    });
  }

  /**
   * The stored hashes nearest to a query vector (cosine similarity), through the HNSW index;
   * `efSearch` candidates are kept while searching (at least k). 400: on a real server at 100,000
   * rows of 1,536 dimensions that cluster by subject, recall@10 0.997 with a p95 of 24 ms, where
   * 1,000 took 52 ms for the same recall (`npm run bench -- team-search`).
   */
  async nearest(query: ArrayLike<number>, k: number, efSearch = 400): Promise<{ hash: string; score: number }[]> {
    return this.run(async (client, state) => {
      if (state.dimensions === undefined) return [];
      if (state.vectors !== 'halfvec') throw this.needsPgvector();
      if (query.length !== state.dimensions)
        throw new TeamStoreError('refused', `The query's vector has ${query.length} dimensions and the store's ${state.dimensions}.`);
      return this.inTransaction(client, async () => {
        await this.nearestSettings(client, state, k, efSearch);
        const r = await client.query<{ hash: Buffer; d: number }>(NEAREST(k), [encodeHalfvec(query)]);
        return r.rows.map((row) => ({ hash: row.hash.toString('hex'), score: 1 - Number(row.d) }));
      });
    });
  }

  /**
   * The settings of a nearest-neighbour query, for this transaction only. The planner weighs the
   * HNSW scan's cost by ef_search and may pick a scan of every row instead (seen at 20,000 rows with
   * ef_search 1,000 on a real server): exact, but seconds at a million rows. Where the index
   * exists it is used (pgvector's README gives this way); with ef_search at least the rows, the
   * index's answer is exact as well.
   */
  private async nearestSettings(client: pg.Client, state: TeamStoreState, k: number, efSearch: number): Promise<void> {
    // The index may have been made by another client (CI's --search-index) since this one connected.
    state.searchable ||= await hasHnswIndex(client);
    await client.query(`set local hnsw.ef_search = ${Math.max(k, Math.min(1000, Math.floor(efSearch)))}`);
    if (state.searchable) await client.query('set local enable_seqscan = off');
  }

  /** The plan of `nearest`'s statement, as the server would run it now (tests and the bench print it). */
  async explainNearest(query: ArrayLike<number>, k: number, efSearch = 400): Promise<string[]> {
    return this.run(async (client, state) => {
      if (state.vectors !== 'halfvec') throw this.needsPgvector();
      return this.inTransaction(client, async () => {
        await this.nearestSettings(client, state, k, efSearch);
        const r = await client.query<{ 'QUERY PLAN': string }>(`explain ${NEAREST(k)}`, [encodeHalfvec(query)]);
        return r.rows.map((row) => row['QUERY PLAN'].replace(/'\[[^\]]*\]'/g, "'[…]'"));
      });
    });
  }

  private needsPgvector(): TeamStoreError {
    return new TeamStoreError(
      'cannot-search',
      `The team store ${this.where} keeps its vectors as bytea: its database had no pgvector when the store was made. It shares embeddings all the same; search in it needs pgvector (an administrator runs "create extension vector", then the store is made again), so search stays on this machine.`,
    );
  }

  /** Whether this client may add rows (the role may insert, and the settings do not say read-only). */
  async writable(): Promise<boolean> {
    return (await this.ready()).state.writable;
  }

  async describeState(): Promise<TeamStoreState> {
    return { ...(await this.ready()).state };
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.state = undefined;
    await c?.end().catch(() => undefined);
  }
}
