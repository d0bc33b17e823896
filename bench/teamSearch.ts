/**
 * Search in the team store on a real PostgreSQL server (`npm run bench -- team-search`): the plan
 * the server picks for the store's nearest-neighbour statement (EXPLAIN), recall@10 against the
 * exact answer and the time per query, at 20,000 and 100,000 rows of 1,536 dimensions.
 *
 * The server is Debian's (test/fixtures/realPostgres.ts) when pgvector is installed in it (built
 * from source: Debian's bookworm has no package); else PGlite, which says so. Two kinds of data:
 * "topics", rows near one of 2,000 centres as code chunks' embeddings cluster by subject, queries
 * near a centre and in no row; and "near-random", rows and queries with no structure, the hardest
 * case for a graph index.
 */
import pg from 'pg';
import { chunkerId } from '../src/search/core/chunker';
import { encodeHalfvec } from '../src/search/core/vectors/halfFloat';
import { TeamStore } from '../src/search/core/team/teamStore';
import { startPgliteServer } from '../test/fixtures/pgliteServer';
import { startRealPostgres } from '../test/fixtures/realPostgres';

const DIM = 1536;
/** Near-random data at 20,000 rows only: a graph index cannot help there, and a 100,000-row build takes minutes more. */
const SIZES = { topics: [20_000, 100_000], 'near-random': [20_000] } as const;
const QUERIES = 40;
const EF = [100, 400, 1000];

export interface TeamSearchPoint {
  data: 'topics' | 'near-random';
  rows: number;
  efSearch: number;
  plan: string;
  medianMs: number;
  p95Ms: number;
  recallAt10: number;
}

export interface TeamSearchResult {
  server: string;
  hnswBuildSeconds: Record<string, number>;
  points: TeamSearchPoint[];
}

function generator(seed: number) {
  let s = seed >>> 0;
  return () => {
    // xorshift32, then a rough normal from the sum of four uniforms.
    let sum = 0;
    for (let i = 0; i < 4; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      sum += (s >>> 0) / 2 ** 32;
    }
    return sum - 2;
  };
}

function vectors(kind: 'topics' | 'near-random', from: number, count: number, centres: Float32Array[]): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = from; i < from + count; i++) {
    const rnd = generator(i * 7919 + 17);
    const v = new Float32Array(DIM);
    const centre = kind === 'topics' ? centres[i % centres.length] : undefined;
    for (let d = 0; d < DIM; d++) v[d] = (centre ? centre[d] : 0) + rnd() * (centre ? 0.45 : 1);
    out.push(v);
  }
  return out;
}

const hashOf = (kind: string, i: number) => `${kind === 'topics' ? 'a' : 'b'}${i.toString(16).padStart(31, '0')}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];

export async function runTeamSearchBench(say: (line: string) => void = (l) => console.error(l)): Promise<TeamSearchResult> {
  const real = await startRealPostgres().catch(() => undefined);
  let url: string;
  let server: string;
  let stop: () => Promise<void>;
  const hasVector = real ? (await real.admin<{ n: string }>(`select count(*) as n from pg_available_extensions where name = 'vector'`))[0].n === '1' : false;
  if (real && hasVector) {
    await real.admin('create database bench');
    await real.admin('create extension vector', 'bench');
    const [{ v, pgv }] = await real.admin<{ v: string; pgv: string }>(
      `select current_setting('server_version') as v, (select extversion from pg_extension where extname = 'vector') as pgv`,
      'bench',
    );
    server = `PostgreSQL ${v} (Debian's, on loopback), pgvector ${pgv}`;
    url = real.url('postgres', 'bench');
    stop = () => real.stop();
  } else {
    await real?.stop();
    const lite = await startPgliteServer();
    server = 'PGlite (no real server with pgvector here)';
    url = lite.url;
    stop = () => lite.stop();
  }
  say(`team-search: ${server}`);
  const password = real && hasVector ? real.adminPassword : undefined;
  const points: TeamSearchPoint[] = [];
  const hnswBuildSeconds: Record<string, number> = {};
  try {
    for (const kind of ['topics', 'near-random'] as const) {
      const centres = vectors('near-random', 1_000_000, 2_000, []);
      // One store per kind of data (a store's model is fixed): the model name tells them apart.
      const model = `bench-${kind}`;
      // Field by field: a connection string's missing password would override the one given.
      const u = new URL(url);
      const admin = new pg.Client({ host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username), database: u.pathname.slice(1), password });
      await admin.connect();
      await admin.query('drop schema if exists model_gateway cascade');
      const store = new TeamStore({ url, password, model, chunker: chunkerId(300), queryTimeoutMs: 3_600_000 });
      let filled = 0;
      try {
        for (const rows of SIZES[kind]) {
          await admin.query('drop index if exists model_gateway.vectors_embedding_hnsw');
          for (; filled < rows; filled += 2_000) {
            const vs = vectors(kind, filled, 2_000, centres);
            await store.give(
              vs.map((_, i) => hashOf(kind, filled + i)),
              vs,
            );
          }
          await admin.query('analyze model_gateway.vectors');
          say(`team-search: ${kind}, ${rows.toLocaleString('en-US')} rows stored; building the HNSW index`);
          const t0 = performance.now();
          const builder = new TeamStore({ url, password, model, chunker: chunkerId(300), queryTimeoutMs: 3_600_000 });
          await builder.makeSearchable();
          await builder.close();
          hnswBuildSeconds[`${kind}@${rows}`] = (performance.now() - t0) / 1000;
          await store.close();
          const queries = vectors(kind, 5_000_000, QUERIES, centres);
          // The exact top 10 of each query over the same stored halves: a scan of every row.
          const exact: Set<string>[] = [];
          for (const q of queries) {
            await admin.query('begin');
            await admin.query('set local enable_indexscan = off');
            const r = await admin.query<{ h: Buffer }>(`select hash as h from model_gateway.vectors order by embedding <=> $1::halfvec limit 10`, [
              encodeHalfvec(q),
            ]);
            await admin.query('commit');
            exact.push(new Set(r.rows.map((x) => x.h.toString('hex'))));
          }
          for (const ef of EF) {
            const plan = (await store.explainNearest(queries[0], 30, ef)).find((l) => /Scan/.test(l))?.trim() ?? '(no scan)';
            const times: number[] = [];
            let recall = 0;
            for (let q = 0; q < queries.length; q++) {
              const t = performance.now();
              // Search in the store asks for 30 at least (storeSearchIndex.ts) and keeps the best 10.
              const hits = await store.nearest(queries[q], 30, ef);
              times.push(performance.now() - t);
              recall += hits.slice(0, 10).filter((h) => exact[q].has(h.hash)).length / 10;
            }
            const point = { data: kind, rows, efSearch: ef, plan, medianMs: median(times), p95Ms: p95(times), recallAt10: recall / queries.length };
            points.push(point);
            say(
              `team-search: ${kind} ${rows} ef ${ef}: ${plan}; median ${point.medianMs.toFixed(1)} ms, p95 ${point.p95Ms.toFixed(1)} ms, recall@10 ${point.recallAt10.toFixed(3)}`,
            );
          }
        }
      } finally {
        await store.close();
        await admin.end();
      }
    }
  } finally {
    await stop();
  }
  return { server, hnswBuildSeconds, points };
}

export function teamSearchText(r: TeamSearchResult): string[] {
  const lines = [
    `\nSearch in the team store: ${r.server}, ${DIM} dimensions, ${QUERIES} queries each, nearest 30 kept to 10 (targets at 100,000 rows with ef_search 400, the store's: the HNSW index in the plan, recall@10 ≥ 0.95, p95 ≤ 50 ms)`,
  ];
  for (const p of r.points) {
    const target =
      p.data === 'topics' && p.rows === 100_000 && p.efSearch === 400
        ? ` (${/hnsw/.test(p.plan) && p.recallAt10 >= 0.95 && p.p95Ms <= 50 ? 'met' : 'NOT met'})`
        : '';
    lines.push(
      `  ${p.data.padEnd(11)} ${p.rows.toLocaleString('en-US').padStart(7)} rows, ef_search ${String(p.efSearch).padStart(4)}: median ${p.medianMs.toFixed(1)} ms, p95 ${p.p95Ms.toFixed(1)} ms, recall@10 ${p.recallAt10.toFixed(3)}; ${p.plan}${target}`,
    );
  }
  lines.push(
    `  HNSW builds: ${Object.entries(r.hnswBuildSeconds)
      .map(([k, s]) => `${k} ${s.toFixed(0)} s`)
      .join(', ')}`,
  );
  return lines;
}
