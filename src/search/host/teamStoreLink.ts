import * as vscode from 'vscode';
import { userValue } from '../../shell/config';
import { booleanSetting, stringSetting } from '../../shell/settingsSchema';
import { registerSecret } from '../../shell/redact';
import type { InteractiveFeature } from '../../shell/services';
import type * as TeamStoreModule from '../../entries/teamStore-entry';
import type { IndexStats, SharedVectors } from '../core/semanticIndex';
import type { StoreSearch } from '../core/team/storeSearchIndex';
import { formatCount } from '../../common/locale';

type Module = typeof TeamStoreModule;
let loaded: Module | undefined;

/** The Postgres client's bundle (dist/teamStore.js beside extension.js), required when a store is first used. */
function loadTeamStore(): Module {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('./teamStore.js') as Module;
  return loaded;
}

export const TEAM_STORE_COMMANDS = {
  setPassword: 'modelGateway.search.setTeamStorePassword',
  status: 'modelGateway.search.teamStoreStatus',
} as const;

/** The button that runs the set-password command (one translated label, compared where it is pressed). */
export const SET_PASSWORD = (): string => vscode.l10n.t('Set Password');

/** What the store's messages tell the person to change: this extension's settings and commands. */
const EDITOR_ADVICE: TeamStoreModule.TeamStoreAdvice = {
  givePassword: 'Set it with "Model Gateway: Set Team Store Password".',
  checkSignIn: 'Check the user in modelGateway.search.teamStore and set the password with "Model Gateway: Set Team Store Password".',
  trustCa: 'Add its CA to modelGateway.tls.caFiles, or add ?sslmode=disable to modelGateway.search.teamStore only for a server on a private network.',
  connectWithoutTls: 'Connect without TLS only on a private network: add ?sslmode=disable to modelGateway.search.teamStore.',
  otherModel: (storeModel, ourModel) =>
    `Set modelGateway.defaultModels.embeddings to "${storeModel}" to share it, or point modelGateway.search.teamStore at a store for "${ourModel}".`,
  update: 'Update the extension.',
  asker: "this workspace's search",
  readOnlyHere: 'this window only reads it (modelGateway.search.teamStoreReadOnly).',
};

/** SecretStorage key of a store's password: bound to where it is (user, host, port, database), so it is never sent to another server. */
const passwordKey = (where: string) => `modelGateway.search.teamStorePassword:${where}`;

export interface TeamStoreSettings {
  url: string;
  readOnly: boolean;
  /** Queries' vector side runs in the store; this machine keeps no vectors. */
  searchInStore: boolean;
}

/**
 * The team store from the person's own settings only: a repository's settings could otherwise
 * point the index at a server of its choosing (the settings are also `application`-scoped).
 */
export function teamStoreSettings(): TeamStoreSettings | undefined {
  const c = vscode.workspace.getConfiguration('modelGateway.search');
  const url = stringSetting('modelGateway.search.teamStore', userValue(c, 'teamStore'));
  if (!url) return undefined;
  return {
    url,
    readOnly: booleanSetting('modelGateway.search.teamStoreReadOnly', userValue(c, 'teamStoreReadOnly')),
    searchInStore: booleanSetting('modelGateway.search.teamStoreSearch', userValue(c, 'teamStoreSearch')),
  };
}

type Store = InstanceType<Module['TeamStore']>;
type StoreState = Awaited<ReturnType<Store['open']>>;

/**
 * The window's link to the team store: one connection per store, model and chunker; the password
 * from SecretStorage; TLS with the gateway's certificates. The index takes it as `SharedVectors`:
 * when the store fails, the index goes on alone and the person is told once.
 */
export class TeamStoreLink implements vscode.Disposable {
  private store: { key: string; ready: Promise<Store> } | undefined;
  /** What the last connection said, or why it failed. */
  state: StoreState | undefined;
  failure: string | undefined;
  /** What the last build or update took from the store and gave it. */
  lastBuild: { took: number; gave: number; failure?: string } | undefined;
  private noticeShown = false;
  /** Stores this window was told it may only read (said once per store). */
  private readonlySaid = new Set<string>();

  constructor(
    private readonly services: InteractiveFeature,
    private readonly secrets: vscode.SecretStorage,
  ) {}

  /** The shared vectors for an index of this model and chunker, when a store is set. */
  shared(model: string, chunker: string): SharedVectors | undefined {
    const settings = teamStoreSettings();
    if (!settings) {
      void this.close();
      return undefined;
    }
    const connect = () => this.open(settings, model, chunker);
    return {
      take: async (hashes) => (await connect()).take(hashes),
      give: async (hashes, vectors) => (await connect()).give(hashes, vectors),
    };
  }

  /** The store to search in, when the person chose search in the store. */
  storeSearch(model: string, chunker: string): StoreSearch | undefined {
    const settings = teamStoreSettings();
    if (!settings?.searchInStore) return undefined;
    // A store kept as bytea (its database had no pgvector) shares vectors but cannot search:
    // search stays on this machine, with the vectors taken from it.
    if (this.state?.vectors === 'bytea' && this.state.where === this.whereOf(settings.url)) return undefined;
    const connect = () => this.open(settings, model, chunker);
    return {
      has: async (hashes) => (await connect()).has(hashes),
      give: async (hashes, vectors) => (await connect()).give(hashes, vectors),
      writable: async () => (await connect()).writable(),
      nearest: async (query, k) => (await connect()).nearest(query, k),
    };
  }

  /** The connection for these settings: made once (callers at the same moment share it), the previous one closed. */
  private open(settings: TeamStoreSettings, model: string, chunker: string): Promise<Store> {
    const key = JSON.stringify([settings.url, settings.readOnly, model, chunker]);
    if (this.store?.key !== key) {
      const previous = this.store;
      const ready = (async () => {
        await previous?.ready.then((s) => s.close()).catch(() => undefined);
        const m = loadTeamStore();
        const { where } = m.parseStoreUrl(settings.url);
        const password = (await this.secrets.get(passwordKey(where))) || undefined;
        if (password) registerSecret(password);
        const network = this.services.network().options;
        const store = new m.TeamStore({
          url: settings.url,
          password,
          ca: network.ca,
          rejectUnauthorized: network.rejectUnauthorized,
          readOnly: settings.readOnly,
          model,
          chunker,
          advice: EDITOR_ADVICE,
        });
        try {
          this.state = await store.open();
          this.failure = undefined;
          if (!this.state.writable && !settings.readOnly) this.sayReadOnly(this.state.where);
          return store;
        } catch (err) {
          this.failure = (err as Error)?.message ?? String(err);
          throw err;
        }
      })();
      this.store = { key, ready };
      // A connection that failed is not kept: the next caller tries again.
      ready.catch(() => {
        if (this.store?.ready === ready) this.store = undefined;
      });
    }
    return this.store.ready;
  }

  private whereOf(url: string): string | undefined {
    try {
      return loadTeamStore().parseStoreUrl(url).where;
    } catch {
      return undefined;
    }
  }

  /**
   * The role may only read this store: search goes on with what is there, and what this machine
   * embeds stays here. Said once per store and window (a person who chose read-only is not told).
   */
  private sayReadOnly(where: string): void {
    if (this.readonlySaid.has(where)) return;
    this.readonlySaid.add(where);
    const message = vscode.l10n.t(
      'Team store {0}: this role may only read it. Search uses the vectors it holds; what this machine embeds stays on this machine.',
      where,
    );
    this.services.log.info(message);
    this.services.recordNotice('info', message);
    void vscode.window
      .showInformationMessage(message, vscode.l10n.t('Open Settings'))
      .then((choice) => choice && vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.search.teamStoreReadOnly'));
  }

  /** A run's store failure: logged, and shown once per window (the index goes on without the store). */
  failed(err: unknown): void {
    const message = (err as Error)?.message ?? String(err);
    // The next run connects again (a store that was down may be back).
    void this.close();
    this.failure = message;
    this.services.log.warn(`Team store: ${message} (the search index goes on with this machine's embeddings)`);
    this.services.recordNotice('warning', vscode.l10n.t('Team store: {0}', message));
    if (this.noticeShown) return;
    this.noticeShown = true;
    const problem = (err as { problem?: string })?.problem;
    const signIn = problem === 'sign-in';
    void vscode.window
      .showWarningMessage(
        vscode.l10n.t("{0} Semantic search goes on with this machine's embeddings.", message),
        signIn ? SET_PASSWORD() : vscode.l10n.t('Open Settings'),
      )
      .then((choice) => {
        if (choice === undefined) return;
        if (signIn) void vscode.commands.executeCommand(TEAM_STORE_COMMANDS.setPassword);
        else void vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.search.teamStore');
      });
  }

  /** A build's figures; a watcher's update adds to those of the build before it. */
  recordBuild(stats: IndexStats, kind: 'build' | 'update' = 'build'): void {
    if (!teamStoreSettings()) return;
    const base = kind === 'update' && this.lastBuild ? this.lastBuild : { took: 0, gave: 0 };
    this.lastBuild = {
      took: base.took + stats.fromStore,
      gave: base.gave + stats.toStore,
      failure: stats.storeFailure ?? (kind === 'update' ? this.lastBuild?.failure : undefined),
    };
  }

  /** One line for the status bar's tooltip. */
  describe(): string | undefined {
    const settings = teamStoreSettings();
    if (!settings) return undefined;
    const build = this.lastBuild
      ? vscode.l10n.t(
          '; the last build (and the changes since) took {0} vectors from it and added {1}',
          formatCount(this.lastBuild.took),
          formatCount(this.lastBuild.gave),
        )
      : '';
    if (this.failure) return vscode.l10n.t('Team store: not in use ({0})', this.failure);
    if (!this.state) return vscode.l10n.t('Team store: {0} (not connected yet)', settings.url);
    const s = this.state;
    const searching = settings.searchInStore
      ? s.searchable
        ? vscode.l10n.t(', searched in place')
        : vscode.l10n.t(', searched in place (no HNSW index yet: each query scans every row; model-gateway-index --search-index makes one)')
      : '';
    const vectors = vscode.l10n.t('{0} vectors of {1}', formatCount(s.rows), s.model);
    return (
      (s.writable
        ? vscode.l10n.t('Team store: {0}, connected, {1}', s.where, vectors)
        : vscode.l10n.t('Team store: {0}, connected read-only, {1}', s.where, vectors)) +
      searching +
      build
    );
  }

  /** The status as a heading and lines (the Team Store Status dialog). */
  summary(): { title: string; lines: string[] } {
    const settings = teamStoreSettings();
    if (!settings)
      return {
        title: vscode.l10n.t('No team store is set'),
        lines: [
          vscode.l10n.t('Semantic search embeds on this machine alone. Set modelGateway.search.teamStore (user settings) to share embeddings with your team.'),
        ],
      };
    const s = this.state;
    const lines = [s && !s.writable ? vscode.l10n.t('Where: {0} (read-only)', s.where) : vscode.l10n.t('Where: {0}', s?.where ?? settings.url)];
    if (this.failure)
      return {
        title: vscode.l10n.t('Team store: not in use'),
        lines: [...lines, this.failure, vscode.l10n.t('Semantic search goes on with this machine’s embeddings.')],
      };
    if (!s) return { title: vscode.l10n.t('Team store: not connected yet'), lines };
    lines.push(
      s.dimensions
        ? vscode.l10n.t('Holds: {0} vectors of {1} ({2} dimensions)', formatCount(s.rows), s.model, s.dimensions)
        : vscode.l10n.t('Holds: {0} vectors of {1}', formatCount(s.rows), s.model),
    );
    if (this.lastBuild)
      lines.push(
        vscode.l10n.t('The last build and the changes since: took {0} vectors, added {1}', formatCount(this.lastBuild.took), formatCount(this.lastBuild.gave)),
      );
    if (s.vectors === 'bytea')
      lines.push(
        vscode.l10n.t(
          'Vectors: kept as bytea (its database has no pgvector): shared all the same; search in the store needs pgvector, so search runs on this machine',
        ),
      );
    else
      lines.push(
        settings.searchInStore
          ? s.searchable
            ? vscode.l10n.t('Search: in the store, through its HNSW index')
            : vscode.l10n.t('Search: in the store (no HNSW index yet: each query scans every row; model-gateway-index --search-index makes one)')
          : vscode.l10n.t('Search: on this machine, with the vectors taken from the store'),
      );
    return { title: vscode.l10n.t('Team store: connected'), lines };
  }

  /** "Set Team Store Password": asked in a password box, kept in SecretStorage for that store only. */
  async setPassword(): Promise<boolean> {
    const settings = teamStoreSettings();
    if (!settings) {
      void vscode.window
        .showInformationMessage(
          vscode.l10n.t('Set modelGateway.search.teamStore (in your user settings) to the store first: postgres://user@host:5432/database.'),
          vscode.l10n.t('Open Settings'),
        )
        .then((c) => c && vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.search.teamStore'));
      return false;
    }
    let where: string;
    try {
      where = loadTeamStore().parseStoreUrl(settings.url).where;
    } catch (err) {
      void vscode.window.showErrorMessage((err as Error).message);
      return false;
    }
    const value = await this.services.prompts.input({
      title: vscode.l10n.t('Password for the team store {0}', where),
      prompt: vscode.l10n.t('Kept in VS Code’s secret storage, sent only to this server. Leave empty to remove it.'),
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    if (value) {
      registerSecret(value);
      await this.secrets.store(passwordKey(where), value);
    } else await this.secrets.delete(passwordKey(where));
    await this.close();
    this.noticeShown = false;
    return true;
  }

  /** "Team Store Status": connects if needed and says what the store holds and what the last build did with it. */
  async status(model: string, chunker: string): Promise<string> {
    const settings = teamStoreSettings();
    if (!settings) return vscode.l10n.t('No team store is set (modelGateway.search.teamStore): semantic search embeds on this machine alone.');
    try {
      await this.open(settings, model, chunker);
    } catch (err) {
      this.failure = (err as Error)?.message ?? String(err);
    }
    return this.describe() ?? '';
  }

  async close(): Promise<void> {
    const s = this.store;
    this.store = undefined;
    this.state = undefined;
    await s?.ready.then((store) => store.close()).catch(() => undefined);
  }

  dispose(): void {
    void this.close();
  }
}
