import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatCost } from '../common/money';
import { GatewayClient } from '../gateway/client';
import { chunkerId } from '../search/core/chunker';
import { SemanticIndex, type IndexStats } from '../search/core/semanticIndex';
import { TeamStore, type TeamStoreAdvice } from '../search/core/team/teamStore';

/** What the store's messages tell a CI log to change: this command's flags and variables. */
export const CLI_ADVICE: TeamStoreAdvice = {
  givePassword: 'Set PGPASSWORD to the password of the user in --store.',
  checkSignIn: 'Check the user in --store and the password in PGPASSWORD.',
  trustCa: 'Trust its CA with --ca <file.pem>, or add ?sslmode=disable to --store only for a server on a private network.',
  connectWithoutTls: 'Connect without TLS only on a private network: add ?sslmode=disable to --store.',
  otherModel: (storeModel, ourModel) => `Run with --model ${storeModel} to share it, or point --store at a store for "${ourModel}".`,
  update: 'Update model-gateway-index (the same version as the extension).',
  asker: 'this run (--model)',
  readOnlyHere: '--read-only was given.',
};

/**
 * `model-gateway-index`: fills a team store from a folder (a CI job after each merge), with the
 * same chunker, hashes and store code as the extension and no VS Code. The gateway key and the
 * store password come from the environment, never from the command line (it shows in `ps`).
 */

const USAGE = `Usage: model-gateway-index --store postgres://user@host:5432/db --gateway https://gateway.example.com [options] <folder>

Fills the team store with the embeddings of <folder>: vectors the store has are taken, the rest are
embedded through the gateway and added. Prints progress, then what was taken, embedded and spent.

Options:
  --store <url>          the team store (no password in it)
  --gateway <url>        the gateway's base URL
  --model <id>           embedding model (default text-embedding-3-small; the store must be for it)
  --exclude <glob>       a glob never indexed (repeatable), besides .gitignore
  --batch-size <n>       texts per embeddings request (default 64)
  --concurrency <n>      embeddings requests at once (default 4)
  --search-index         also build the store's HNSW index (for search in the store)
  --read-only            a dry run: count what the store has and what would be embedded;
                         embed nothing, add nothing (the only run a role that may only read
                         is allowed)
  --ca <file>            a PEM certificate to trust for the store's TLS (repeatable)
  -h, --help

Environment:
  MODEL_GATEWAY_API_KEY  the gateway key (required)
  PGPASSWORD             the store's password (if it has one)
`;

export interface CliResult {
  stats: IndexStats;
  promptTokens: number;
  dollars: number | undefined;
  storeRows: number;
  /** A dry run's chunks the store lacks (0 otherwise). */
  wouldEmbed: number;
}

/** Runs the command line; `out` takes progress and the summary (stderr and stdout when run as a program). */
export async function runIndexCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: { progress: (line: string) => void; result: (line: string) => void },
): Promise<CliResult> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      store: { type: 'string' },
      gateway: { type: 'string' },
      model: { type: 'string', default: 'text-embedding-3-small' },
      exclude: { type: 'string', multiple: true, default: [] },
      'batch-size': { type: 'string', default: '64' },
      concurrency: { type: 'string', default: '4' },
      'search-index': { type: 'boolean', default: false },
      'read-only': { type: 'boolean', default: false },
      ca: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError(USAGE, 0);
  if (!values.store || !values.gateway || positionals.length !== 1)
    throw new UsageError(
      `${!values.store ? 'Missing --store. ' : ''}${!values.gateway ? 'Missing --gateway. ' : ''}${positionals.length !== 1 ? 'Give exactly one folder. ' : ''}\n\n${USAGE}`,
    );
  const apiKey = env.MODEL_GATEWAY_API_KEY;
  if (!apiKey) throw new UsageError('Set MODEL_GATEWAY_API_KEY to the gateway key (it is never taken from the command line).');
  const positive = (name: string, v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a whole number of at least 1 (got "${v}").`);
    return n;
  };
  const batchSize = positive('batch-size', values['batch-size']);
  const concurrency = positive('concurrency', values.concurrency);
  const folder = resolve(positionals[0]);
  const model = values.model;
  const { readFileSync } = await import('node:fs');
  const ca = values.ca.length > 0 ? [...(await import('node:tls')).rootCertificates, ...values.ca.map((f) => readFileSync(f, 'utf8'))] : undefined;

  const client = new GatewayClient({ baseUrl: values.gateway, apiKey, network: ca ? { ca } : undefined });
  const dryRun = values['read-only'];
  if (dryRun && values['search-index']) throw new UsageError('--search-index builds an index in the store, and --read-only writes nothing: give one of them.');
  const store = new TeamStore({
    url: values.store,
    password: env.PGPASSWORD || undefined,
    ca,
    readOnly: dryRun,
    model,
    chunker: chunkerId(300),
    advice: CLI_ADVICE,
  });
  // The local index is this run's only: a temporary folder, removed at the end.
  const scratch = mkdtempSync(join(tmpdir(), 'model-gateway-index-'));
  let promptTokens = 0;
  let storeFailure: unknown;
  /** A dry run's chunks that a writer would embed, and their characters. */
  const wouldEmbed = { chunks: 0, chars: 0 };
  const index = new SemanticIndex({
    folders: [{ name: basename(folder), path: folder }],
    excludes: values.exclude,
    storeDir: scratch,
    model,
    chunkTokens: 300,
    embed: async (texts, signal, onDone) => {
      if (dryRun) {
        // Counted, never sent: the dry run costs nothing (the vectors stay missing).
        wouldEmbed.chunks += texts.length;
        for (const t of texts) wouldEmbed.chars += t.length;
        return { vectors: [], requests: 0 };
      }
      const r = await client.embeddings.createBatched(model, texts, { batchSize, concurrency, signal, onProgress: (d) => onDone?.(d) });
      promptTokens += r.promptTokens;
      return r;
    },
    shared: store,
    onSharedFailure: (err) => (storeFailure = err),
    snapshots: 'inline',
  });
  try {
    const state = await store.open();
    out.progress(
      `store ${state.where}: ${state.rows.toLocaleString('en-US')} vectors of ${state.model}${state.writable ? '' : ' (read-only)'}${state.vectors === 'bytea' ? ' (kept as bytea: the database has no pgvector; search in the store needs it)' : ''}`,
    );
    // A role that may only read would embed the whole folder through the gateway and keep nothing.
    if (!state.writable && !dryRun)
      throw new UsageError(
        `The team store ${state.where}: this role can only read the store: nothing embedded. Grant it INSERT on model_gateway.vectors (docs/team-store.md, "The database"), or run with --read-only for a dry run.`,
        2,
      );
    let last = 0;
    const stats = await index.update(undefined, undefined, (p) => {
      const now = Date.now();
      if (now - last < 1000) return;
      last = now;
      out.progress(
        p.phase === 'scan'
          ? `scanned ${p.done.toLocaleString('en-US')} files`
          : `vectors ${p.done.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')}`,
      );
    });
    if (storeFailure !== undefined) throw storeFailure instanceof Error ? storeFailure : new Error('the team store failed');
    if (dryRun) {
      out.result(
        [
          `dry run (--read-only): nothing embedded, nothing added`,
          `files ${stats.files.toLocaleString('en-US')}, chunks ${stats.chunks.toLocaleString('en-US')}`,
          `in the store ${stats.fromStore.toLocaleString('en-US')}; a writer would embed ${wouldEmbed.chunks.toLocaleString('en-US')} (${wouldEmbed.chars.toLocaleString('en-US')} characters)`,
        ].join('\n'),
      );
      return { stats, promptTokens: 0, dollars: 0, storeRows: (await store.describeState()).rows, wouldEmbed: wouldEmbed.chunks };
    }
    if (values['search-index']) {
      out.progress('building the store’s HNSW index');
      await store.makeSearchable();
    }
    const prices = await client.account.usage.pricing().catch(() => undefined);
    const price = prices?.find((p) => p.model === model && !p.unknown)?.inputPerMTok;
    const dollars = price === undefined ? undefined : (promptTokens * price) / 1e6;
    const storeRows = (await store.describeState()).rows;
    out.result(
      [
        `files ${stats.files.toLocaleString('en-US')}, chunks ${stats.chunks.toLocaleString('en-US')}`,
        `taken from the store ${stats.fromStore.toLocaleString('en-US')}, embedded ${stats.embedded.toLocaleString('en-US')} in ${stats.requests.toLocaleString('en-US')} requests (${promptTokens.toLocaleString('en-US')} tokens), added to the store ${stats.toStore.toLocaleString('en-US')}`,
        `cost ${dollars === undefined ? `unknown (the gateway lists no price for ${model}; ${promptTokens.toLocaleString('en-US')} tokens)` : formatCost(dollars)}`,
        `store now ${storeRows.toLocaleString('en-US')} vectors; ${(stats.ms / 1000).toFixed(1)} s`,
      ].join('\n'),
    );
    return { stats, promptTokens, dollars, storeRows, wouldEmbed: 0 };
  } finally {
    await index.close();
    await store.close();
    await client.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

if (require.main === module) {
  runIndexCli(process.argv.slice(2), process.env, { progress: (l) => process.stderr.write(`${l}\n`), result: (l) => process.stdout.write(`${l}\n`) }).then(
    () => process.exit(0),
    (err: unknown) => {
      const usage = err instanceof UsageError ? err : undefined;
      (usage?.exitCode === 0 ? process.stdout : process.stderr).write(`${usage ? '' : 'model-gateway-index: '}${(err as Error)?.message ?? String(err)}\n`);
      process.exit(usage ? usage.exitCode : 1);
    },
  );
}
