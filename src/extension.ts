import * as vscode from 'vscode';
import { registerAccountCommands } from './account/host/commands';
import { AccountTree } from './account/host/tree';
import { registerAssetCommands } from './assets/host';
import { VideoJobs } from './assets/host/videoJobs';
import { ChatController } from './chat/host/panel';
import { registerLanguageModels, type LanguageModelSupport } from './lm/host';
import { LmAccess } from './lm/host/access';
import { SearchService, semanticSearchCommand } from './search/host/searchService';
import { registerShellCommands } from './shell/commands';
import { Services } from './shell/services';
import { StatusBar } from './usage/host/statusBar';
import { WorkspaceOverrideNotice } from './shell/workspaceOverrides';
import { USAGE_VIEW_TYPE, UsagePanel } from './usage/host/panel';

export interface ExtensionApi {
  /** Milliseconds activate() took. */
  activationMs: number;
  /** For the integration tests only (MODEL_GATEWAY_TEST=1): internals to assert on. */
  testing?: { services: Services; status: StatusBar; usage: UsagePanel; accountTree: AccountTree; chat: ChatController; search: SearchService; videoJobs: VideoJobs; newVideoJobs: () => VideoJobs; languageModels: LanguageModelSupport; overrides: WorkspaceOverrideNotice; lmAccess: LmAccess };
}

export async function activate(context: vscode.ExtensionContext): Promise<ExtensionApi> {
  const started = performance.now();
  const services = new Services(context);
  context.subscriptions.push(services);
  await services.credentials.load();
  await services.updateContextKeys();

  const status = new StatusBar(services, context.globalState);
  const accountTree = new AccountTree(services);
  const search = new SearchService(services, context);
  const chat = new ChatController(services, context, search);
  const lmAccess = new LmAccess(services, context.globalState, context.extension.id);
  const usage = new UsagePanel(services, context, lmAccess);
  const overrides = new WorkspaceOverrideNotice(services);
  context.subscriptions.push(
    overrides,
    chat,
    usage,
    search,
    status,
    accountTree,
    vscode.window.createTreeView('modelGateway.account', { treeDataProvider: accountTree, showCollapseAll: true }),
    vscode.window.registerWebviewViewProvider('modelGateway.chat', chat),
    services.onDidChangeConnection(() => void status.refresh()),
    services.onDidSpend(() => void status.refresh()),
  );

  const reg = (id: string, fn: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  registerShellCommands(services, status, reg);
  registerAccountCommands(services, accountTree, reg);
  reg('modelGateway.usage.open', () => usage.open());
  context.subscriptions.push(vscode.window.registerWebviewPanelSerializer(USAGE_VIEW_TYPE, { deserializeWebviewPanel: async (panel) => void (await usage.restore(panel)) }));
  reg('modelGateway.usage.exportCsv', async () => {
    if (!usage.current) await usage.open();
    return usage.exportCsv();
  });
  reg('modelGateway.chat.new', () => chat.newConversation());
  reg('modelGateway.chat.condense', () => chat.condense());
  reg('modelGateway.chat.addContext', () => chat.addContext());
  reg('modelGateway.chat.pickModel', () => chat.pickModel());
  reg('modelGateway.chat.openInEditor', () => chat.openInEditor());
  reg('modelGateway.chat.acceptEdit', () => chat.decideActiveProposal(true));
  reg('modelGateway.chat.rejectEdit', () => chat.decideActiveProposal(false));
  reg('modelGateway.search.query', (initial?: unknown) => semanticSearchCommand(search, services, typeof initial === 'string' ? initial : undefined));
  reg('modelGateway.search.build', async () => {
    const loaded = await search.load();
    return search.build({ clean: loaded === 'model-changed' });
  });
  reg('modelGateway.search.rebuild', () => search.build({ clean: true, reason: 'Rebuilding the search index' }));
  const { videoJobs } = registerAssetCommands(services, context, reg);
  const languageModels = registerLanguageModels(services, lmAccess, search, reg);
  context.subscriptions.push(...languageModels.disposables);
  reg('modelGateway.topUp', () => {
    const base = services.settings().baseUrl;
    if (base) void vscode.env.openExternal(vscode.Uri.parse(base));
  });

  // The first connection check loads the gateway bundle, and a stored search index is loaded;
  // both run after activation returns.
  setTimeout(() => {
    void overrides.check();
    void status.refresh();
    void search.load().catch((err) => services.log.error('could not load the search index', err));
    videoJobs.resumeAll();
  }, 0);
  const activationMs = performance.now() - started;
  services.log.info(`activated in ${activationMs.toFixed(1)} ms`);
  return { activationMs, testing: process.env.MODEL_GATEWAY_TEST === '1' ? { services, status, usage, accountTree, chat, search, videoJobs, newVideoJobs: () => new VideoJobs(services, context.workspaceState), languageModels: languageModels.support, overrides, lmAccess } : undefined };
}

export function deactivate(): void {}
