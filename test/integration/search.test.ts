import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, emulatorRequests, until, connectToEmulator } from './helpers';

/** Embedding requests the emulator has served. */
async function embeddingRequests(): Promise<number> {
  return (await emulatorRequests()).filter((p) => p === 'POST /v1/embeddings').length;
}

describe('semantic search in a real VS Code', () => {
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.embeddings', 'embed-emu-256', vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.rerank', 'rerank-emu', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await settings().update('defaultModels.embeddings', undefined, vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.rerank', undefined, vscode.ConfigurationTarget.Global);
  });

  it('builds the index of the workspace and answers a query, reranked', async () => {
    const { testing } = await api();
    assert.equal(await testing.search.load(), 'missing');
    const before = await embeddingRequests();
    const stats = await vscode.commands.executeCommand<{ files: number; chunks: number; embedded: number; requests: number }>('modelGateway.search.build');
    assert.ok(stats && stats.files >= 3, JSON.stringify(stats));
    assert.equal(stats.embedded, stats.chunks);
    assert.equal((await embeddingRequests()) - before, stats.requests);
    const results = await testing.search.query('greet a person by name hello', 3);
    assert.equal(results[0].chunk.file, 'src/greet.ts');
    assert.ok(results[0].rerankScore !== undefined, 'reranked');
    assert.match(results[0].preview, /Hello, \$\{name\}/);
    // The chat's semantic_search tool answers from the same index, with locations.
    const answer = await testing.search.toolAnswer({ query: 'greet a person by name hello', max_results: 2 });
    assert.match(answer, /^1\. src\/greet\.ts:1-3 \(relevance \d\.\d{2} · similarity \d\.\d{2}[^)]*\)\n```\nexport function greet/);
  });

  it('re-embeds only the file that changed (the file watcher), nothing else', async () => {
    const { testing } = await api();
    const before = await embeddingRequests();
    const previous = testing.search.lastStats;
    writeFileSync(
      join(folder(), 'src', 'math.ts'),
      'export const add = (a: number, b: number): number => a + b;\nexport const subtract = (a: number, b: number): number => a - b;\n',
    );
    // A late watcher event for an earlier change can make an update of its own first (embedding
    // nothing): the update awaited is the first that embedded anything.
    let seen = previous;
    const stats = await until('the update that embedded src/math.ts', () => {
      const latest = testing.search.lastStats;
      if (latest === seen) return undefined;
      seen = latest;
      return latest && latest.embedded > 0 ? latest : undefined;
    });
    assert.equal(stats.embedded, 1);
    assert.equal((await embeddingRequests()) - before, 1, 'one request in all: no other update embedded anything');
    const results = await testing.search.query('function subtract a b number', 2);
    assert.equal(results[0].chunk.file, 'src/math.ts');
  });

  it('an exact identifier finds its definition first (keywords fused with the embeddings), also for a file added since the build', async () => {
    const { testing } = await api();
    const previous = testing.search.lastStats;
    writeFileSync(
      join(folder(), 'src', 'report.ts'),
      Array.from({ length: 6 }, (_, i) => `export const line${i} = invoiceTotal([${i}, ${i + 1}]); // invoiceTotal of line ${i}`).join('\n') + '\n',
    );
    writeFileSync(
      join(folder(), 'src', 'billing.ts'),
      'export function invoiceTotal(lines: number[]): number {\n  return lines.reduce((s, x) => s + x, 0);\n}\n',
    );
    await until('the watcher update', () =>
      testing.search.lastStats !== previous && (testing.search.lastStats?.files ?? 0) >= 2 ? testing.search.lastStats : undefined,
    );
    await until('both new files indexed', async () =>
      (await testing.search.query('invoiceTotal', 5)).some((r) => r.chunk.file === 'src/billing.ts') ? true : undefined,
    );
    const results = await testing.search.query('invoiceTotal', 5);
    assert.equal(results[0].chunk.file, 'src/billing.ts');
    assert.equal(results[0].defines, 'invoicetotal');
    assert.ok(
      results.some((r) => r.chunk.file === 'src/report.ts' && r.matched?.includes('invoicetotal')),
      'the uses follow, found by their words',
    );
    const answer = await testing.search.toolAnswer({ query: 'invoiceTotal', max_results: 2 });
    assert.match(answer, /^1\. src\/billing\.ts:1-3 \(defines invoicetotal/);
  });

  it('rebuilds cleanly when the embedding model changes', async () => {
    const { testing } = await api();
    await settings().update('defaultModels.embeddings', 'text-embedding-3-small', vscode.ConfigurationTarget.Global);
    assert.equal(await testing.search.load(), 'model-changed');
    const stats = await vscode.commands.executeCommand<{ chunks: number; embedded: number }>('modelGateway.search.build');
    assert.ok(stats && stats.embedded === stats.chunks && stats.chunks > 0);
    assert.equal((await testing.search.query('greet a person by name hello', 1))[0].chunk.file, 'src/greet.ts');
  });
});
