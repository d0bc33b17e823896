import { join } from 'node:path';
import * as vscode from 'vscode';
import { chatSettings, searchSettings, workspaceExcludeGlobs } from '../../shell/config';
import { showGatewayError } from '../../shell/errors';
import type { GatewayFeature } from '../../shell/services';
import { chunkerId } from '../core/chunker';
import type { ToolDefinition } from '../../tools/workspaceTools';
import { fuseResults, whyMatched, type SearchResult } from '../core/hybrid';
import { IndexingStopped, IndexModelChanged, SemanticIndex, type EmbedFn, type IndexStats } from '../core/semanticIndex';
import { StoreSearchIndex } from '../core/team/storeSearchIndex';
import type { TeamStoreLink } from './teamStoreLink';
import { formatCount } from '../../common/locale';

/** Lines per chunk the index cuts (its chunker, part of every chunk's identity in a team store). */
const CHUNK_TOKENS = 300;

export type { SearchResult } from '../core/hybrid';

export const SEMANTIC_SEARCH_TOOL: ToolDefinition = {
  name: 'semantic_search',
  kind: 'read',
  description:
    'Find code by meaning, not exact text: returns the workspace chunks most related to a natural-language query, with their file and line range. Use it to locate where something is implemented; then read_file for details.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What to look for, in words (e.g. "where retries wait before the next attempt")' },
      max_results: { type: 'integer', description: 'How many chunks (default 5, at most 10)' },
    },
    required: ['query'],
  },
};

/**
 * Semantic search for the workspace: keeps the index (built on demand, loaded at start, updated by
 * a file watcher), answers queries (embeddings, then rerank), and shows its state in the status bar.
 */
export class SearchService implements vscode.Disposable {
  private index: SemanticIndex | StoreSearchIndex | undefined;
  private state: 'none' | 'loading' | 'ready' | 'indexing' = 'none';
  private readonly status = vscode.window.createStatusBarItem('modelGateway.search', vscode.StatusBarAlignment.Right, 99);
  private readonly disposables: vscode.Disposable[] = [];
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private workerLogged = false;
  /** Statistics of the last build or update (for tests and the log). */
  lastStats: IndexStats | undefined;

  constructor(
    private readonly services: GatewayFeature,
    private readonly context: vscode.ExtensionContext,
    private readonly team?: TeamStoreLink,
  ) {
    this.status.name = vscode.l10n.t('Model Gateway Search');
    this.status.command = 'modelGateway.search.query';
    const watcher = vscode.workspace.createFileSystemWatcher('**/*');
    const queue = (uri: vscode.Uri) => this.queue(uri);
    this.disposables.push(
      this.status,
      watcher,
      watcher.onDidChange(queue),
      watcher.onDidCreate(queue),
      watcher.onDidDelete(queue),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('modelGateway.defaultModels.embeddings') || e.affectsConfiguration('modelGateway.search')) this.forgetIndex();
      }),
    );
  }

  /** Drops the loaded index (its files closed, a fold in progress cancelled); the next use loads it again. */
  private forgetIndex(): void {
    void this.index?.close();
    this.index = undefined;
  }

  private model(): string {
    return this.services.settings().defaultModels.embeddings || 'text-embedding-3-small';
  }

  private folders() {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, path: f.uri.fsPath }));
  }

  private create(): SemanticIndex | StoreSearchIndex {
    const s = searchSettings();
    const model = this.model();
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    const chunker = chunkerId(CHUNK_TOKENS);
    // What both kinds of index read, and how they embed.
    const common = {
      folders: this.folders(),
      excludes: [...workspaceExcludeGlobs(), ...s.excludes],
      secretFiles: chatSettings().secretFiles,
      model,
      maxFileBytes: s.maxFileKB * 1024,
      chunkTokens: CHUNK_TOKENS,
      embed: ((texts, signal, onDone) =>
        this.services.client().embeddings.createBatched(model, texts, {
          batchSize: s.batchSize,
          concurrency: s.concurrency,
          signal,
          onProgress: (d) => onDone?.(d),
        })) satisfies EmbedFn,
    };
    const store = this.team?.storeSearch(model, chunker);
    if (store) return new StoreSearchIndex({ ...common, store, onStoreFailure: (err) => this.team?.failed(err) });
    return new SemanticIndex({
      ...common,
      storeDir: join(base.fsPath, 'search-index'),
      shared: this.team?.shared(model, chunker),
      onSharedFailure: (err) => this.team?.failed(err),
      // Said once per window: that the index's heavy writes run off the editor's thread (the worker's bundle is in place).
      onSnapshotWorker: () =>
        this.workerLogged || ((this.workerLogged = true), this.services.log.info('Search index: snapshots are written in a worker thread')),
      onBackgroundError: (err) =>
        this.services.log.warn(
          `Search index, work off the editor's thread: ${(err as Error)?.message ?? String(err)} (the index in use stays as it was; a fold that failed is tried again later)`,
        ),
    });
  }

  private render(progress?: string): void {
    const size = this.index?.size;
    if (this.state === 'indexing') {
      this.status.text = vscode.l10n.t('$(sync~spin) Indexing{0}', progress ? ` ${progress}` : '');
      this.status.tooltip = vscode.l10n.t('Model Gateway is indexing the workspace for semantic search');
    } else if (size && size.chunks > 0) {
      this.status.text = vscode.l10n.t('$(search) {0} chunks', formatCount(size.chunks));
      const team = this.team?.describe();
      this.status.tooltip = vscode.l10n.t(
        'Semantic search: {0} files, {1} chunks ({2}).{3} Click to search.',
        formatCount(size.files),
        formatCount(size.chunks),
        this.model(),
        team ? `\n${team}.` : '',
      );
    } else {
      this.status.hide();
      return;
    }
    this.status.show();
  }

  /** Whether the index is folding its log into a new snapshot (in a worker) right now. */
  folding(): boolean {
    return this.index instanceof SemanticIndex && this.index.isFolding;
  }

  /** Whether an index with content is loaded (the chat offers its tool then). */
  ready(): boolean {
    return this.state === 'ready' && (this.index?.size.chunks ?? 0) > 0;
  }

  /** Loads the stored index if there is one; 'missing' when there is none to load. */
  async load(): Promise<'loaded' | 'missing' | 'model-changed'> {
    if (this.index && this.state === 'ready') return 'loaded';
    if (this.folders().length === 0) return 'missing';
    this.forgetIndex();
    this.index = this.create();
    this.state = 'loading';
    const r = await this.index.load();
    this.state = r === 'loaded' ? 'ready' : 'none';
    this.render();
    if (r === 'model-changed') return 'model-changed';
    if (r === 'damaged') {
      this.services.log.warn('The stored search index was damaged; it will be rebuilt.');
      return 'missing';
    }
    return r === 'loaded' ? 'loaded' : 'missing';
  }

  /** Builds or updates the whole index, with a cancellable progress notification. */
  async build(options: { clean?: boolean; reason?: string } = {}): Promise<IndexStats | undefined> {
    const run = async () => {
      if (!this.index) this.index = this.create();
      if (options.clean) await this.index.clear();
      this.state = 'indexing';
      this.render();
      try {
        const stats = await vscode.window.withProgress(
          {
            location: vscode.ProgressLocation.Notification,
            title: options.reason ?? vscode.l10n.t('Indexing the workspace for semantic search'),
            cancellable: true,
          },
          async (progress, token) => {
            const abort = new AbortController();
            token.onCancellationRequested(() => abort.abort());
            let last = 0;
            return this.index!.update(undefined, abort.signal, (p) => {
              if (p.phase === 'embed' && p.total > 0) {
                const pct = Math.floor((p.done / p.total) * 100);
                progress.report({ message: vscode.l10n.t('{0} of {1} chunks', formatCount(p.done), formatCount(p.total)), increment: pct - last });
                last = pct;
                this.render(`${pct}%`);
              } else progress.report({ message: vscode.l10n.t('scanned {0} files', p.done) });
            });
          },
        );
        this.lastStats = stats;
        this.team?.recordBuild(stats);
        const team = this.team?.describe() ? `, ${stats.fromStore} from the team store, ${stats.toStore} added to it` : '';
        this.services.log.info(
          `search index: ${stats.files} files, ${stats.chunks} chunks, ${stats.embedded} embedded in ${stats.requests} requests${team}, ${stats.reused} reused, ${stats.ms} ms`,
        );
        this.state = 'ready';
        this.services.notifySpend();
        return stats;
      } catch (err) {
        this.state = (this.index?.size.chunks ?? 0) > 0 ? 'ready' : 'none';
        if (err instanceof IndexModelChanged) return this.build({ clean: true, reason: vscode.l10n.t('{0} Rebuilding the search index', err.message) });
        if (err instanceof IndexingStopped) {
          // Says how far it got and why, with the fix for the cause (a missing model, a refused key, …).
          const kept = err.embedded > 0 ? vscode.l10n.t('; the {0} embedded are kept and Build Index resumes from there', formatCount(err.embedded)) : '';
          showGatewayError(
            this.services,
            vscode.l10n.t('Indexing stopped after {0} of {1} chunks{2}', formatCount(err.embedded), formatCount(err.total), kept),
            err.cause,
          );
          return undefined;
        }
        showGatewayError(this.services, vscode.l10n.t('Could not index the workspace'), err);
        return undefined;
      } finally {
        if (this.state === 'indexing') this.state = 'none';
        this.render();
      }
    };
    const next = this.running.then(run, run);
    this.running = next;
    return next;
  }

  private queue(uri: vscode.Uri): void {
    if (uri.scheme !== 'file' || !this.ready()) return;
    this.pending.add(uri.fsPath);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), 1500);
  }

  /** Re-indexes the files changed since the last flush (debounced after watcher events). */
  async flush(): Promise<IndexStats | undefined> {
    clearTimeout(this.timer);
    const paths = [...this.pending];
    this.pending.clear();
    if (paths.length === 0 || !this.index) return undefined;
    const run = async () => {
      try {
        const stats = await this.index!.update(paths);
        this.lastStats = stats;
        this.team?.recordBuild(stats, 'update');
        if (stats.embedded > 0) this.services.log.info(`search index: ${paths.length} changed paths, ${stats.embedded} chunks embedded`);
        this.render();
        return stats;
      } catch (err) {
        if (err instanceof IndexModelChanged) return this.build({ clean: true, reason: vscode.l10n.t('{0} Rebuilding the search index', err.message) });
        this.services.log.error('search index update failed', err);
        return undefined;
      }
    };
    const next = this.running.then(run, run);
    this.running = next;
    return next;
  }

  /**
   * Hybrid search: embeddings and keywords (BM25 over identifiers) fused by reciprocal rank, an
   * identifier's definitions first; then the rerank model (when set) orders the rest.
   */
  async query(text: string, k = 10, signal?: AbortSignal): Promise<SearchResult[]> {
    if (!this.index || !this.ready()) return [];
    const client = this.services.client();
    const s = searchSettings();
    const n = Math.max(k, s.candidates);
    const embedded = await client.embeddings.create({ model: this.index.model, input: text }, { signal });
    await this.index.keywordsReady;
    const fused = fuseResults(await this.index.search(embedded.data[0].embedding, n), this.index.keywordSearch(text, n), n);
    const withText = await Promise.all(fused.map(async (h) => ({ ...h, preview: await this.index!.chunkText(h.chunk) })));
    const live = withText.filter((h) => h.preview.trim());
    const rerankModel = this.services.settings().defaultModels.rerank;
    let ordered: SearchResult[] = live;
    const pinned = live.filter((h) => h.defines);
    const rest = live.filter((h) => !h.defines);
    if (rerankModel && rest.length > 0) {
      try {
        const r = await client.rerank.create(
          { model: rerankModel, query: text, documents: rest.map((h) => `${h.chunk.file}\n${h.preview}`), top_n: Math.min(k, rest.length) },
          { signal },
        );
        ordered = [...pinned, ...r.results.map((x) => ({ ...rest[x.index], rerankScore: x.relevance_score }))];
      } catch (err) {
        this.services.log.error('rerank failed; showing the fused order', err);
      }
    }
    return ordered.slice(0, k);
  }

  /**
   * Chunks that share identifiers with `text`, from the keyword half of the index only (local, no
   * request, no cost: inline completions ask on every pause). Empty until the index is loaded.
   */
  async keywordSnippets(text: string, k: number, exceptFile?: string): Promise<{ path: string; text: string }[]> {
    const index = this.index;
    if (!index || !this.ready() || !text.trim()) return [];
    await index.keywordsReady;
    const hits = index
      .keywordSearch(text, k + 2)
      .filter((h) => h.item.file !== exceptFile)
      .slice(0, k);
    const texts = await Promise.all(hits.map((h) => index.chunkText(h.item)));
    return hits.map((h, i) => ({ path: `${h.item.file}:${h.item.start}`, text: texts[i] })).filter((s) => s.text.trim());
  }

  /** The chat tool's answer: the best chunks with their locations. */
  async toolAnswer(args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    const q = typeof args.query === 'string' ? args.query.trim() : '';
    if (!q) throw new Error('Missing the "query" argument.');
    const n = Math.min(10, Math.max(1, Number(args.max_results) || 5));
    const results = await this.query(q, n, signal);
    if (results.length === 0) return `No indexed code matches "${q}".`;
    return results
      .map((r, i) => {
        const preview = r.preview.split('\n').slice(0, 30).join('\n');
        return `${i + 1}. ${r.chunk.file}:${r.chunk.start}-${r.chunk.end} (${whyMatched(r)})\n\`\`\`\n${preview}\n\`\`\``;
      })
      .join('\n\n');
  }

  async absolutePath(file: string): Promise<string | undefined> {
    return this.index?.absolutePath(file);
  }

  /** What the team store holds for this workspace's model, and what the last build did with it. */
  async teamStatus(): Promise<string> {
    const text = (await this.team?.status(this.model(), chunkerId(CHUNK_TOKENS))) ?? vscode.l10n.t('No team store.');
    this.render();
    return text;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.forgetIndex();
    for (const d of this.disposables) d.dispose();
  }
}

/** Results grouped by file (files in the order of their best result), each saying why it matched. */
function groupedItems(results: SearchResult[]): (vscode.QuickPickItem & { result?: SearchResult })[] {
  const files: string[] = [];
  for (const r of results) if (!files.includes(r.chunk.file)) files.push(r.chunk.file);
  return files.flatMap((file) => [
    { label: file, kind: vscode.QuickPickItemKind.Separator },
    ...results
      .filter((r) => r.chunk.file === file)
      .map((r) => ({
        // The whole path in the row too: a separator's label is not shown for the first group everywhere.
        label: `$(${r.defines ? 'symbol-function' : 'file-code'}) ${file}:${r.chunk.start}-${r.chunk.end}`,
        description: whyMatched(r),
        detail: r.preview.replace(/\s+/g, ' ').trim().slice(0, 160),
        alwaysShow: true,
        result: r,
      })),
  ]);
}

/** The "Semantic Search" command: a quick pick that queries as you type. */
export async function semanticSearchCommand(search: SearchService, services: GatewayFeature, initial?: string): Promise<SearchResult[] | undefined> {
  if (!services.isConfigured()) {
    void vscode.window
      .showErrorMessage(vscode.l10n.t('Set the gateway URL and API key first.'), vscode.l10n.t('Set API Key'))
      .then((c) => c && vscode.commands.executeCommand('modelGateway.setApiKey'));
    return undefined;
  }
  const loaded = await search.load();
  if (loaded === 'model-changed') {
    void vscode.window.showInformationMessage(vscode.l10n.t('The embedding model changed since the index was built: rebuilding it.'));
    await search.build({ clean: true, reason: vscode.l10n.t('The embedding model changed: rebuilding the search index') });
  } else if (loaded === 'missing') {
    const build = vscode.l10n.t('Build Index');
    const choice =
      typeof initial === 'string'
        ? build
        : await vscode.window.showInformationMessage(
            vscode.l10n.t('The workspace has no semantic search index yet. Build it now? (Its files are sent to the embedding model.)'),
            build,
          );
    if (choice !== build) return undefined;
    await search.build();
  }
  if (!search.ready()) return undefined;
  const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { result?: SearchResult }>();
  pick.title = vscode.l10n.t('Semantic Search');
  pick.placeholder = vscode.l10n.t('Describe what you are looking for (e.g. "where retries wait before the next attempt")');
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  let latest = 0;
  let controller: AbortController | undefined;
  let debounce: NodeJS.Timeout | undefined;
  let lastResults: SearchResult[] = [];
  const run = async (text: string) => {
    const id = ++latest;
    controller?.abort();
    controller = new AbortController();
    if (text.trim().length < 3) {
      pick.items = [];
      return;
    }
    pick.busy = true;
    try {
      const results = await search.query(text, 10, controller.signal);
      if (id !== latest) return;
      lastResults = results;
      pick.items = groupedItems(results);
    } catch (err) {
      if (id === latest && (err as Error)?.name !== 'AbortError') showGatewayError(services, vscode.l10n.t('Semantic search failed'), err);
    } finally {
      if (id === latest) pick.busy = false;
    }
  };
  pick.onDidChangeValue((v) => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void run(v), 250);
  });
  pick.onDidAccept(async () => {
    const r = pick.selectedItems[0]?.result;
    if (!r) return;
    pick.hide();
    const abs = await search.absolutePath(r.chunk.file);
    if (!abs) return;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
    const range = new vscode.Range(r.chunk.start - 1, 0, Math.max(r.chunk.start - 1, r.chunk.end - 1), 0);
    await vscode.window.showTextDocument(doc, { selection: range, preview: true });
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
  if (initial) {
    pick.value = initial;
    await run(initial);
  }
  return lastResults;
}
