import type * as vscode from 'vscode';
import { activateAccount } from './account/host/feature';
import type { AccountTree } from './account/host/tree';
import { activateAgent } from './agent/host/feature';
import type { AgentToolbox } from './agent/host/toolbox';
import { activateMcp } from './mcp/host/feature';
import { activateEditor, type EditorInsight } from './editor/host/feature';
import type { Customizations } from './customization/host/customizations';
import { activateCustomizations } from './customization/host/feature';
import type { McpHub } from './mcp/host/hub';
import { activateAssets } from './assets/host/feature';
import { VideoJobs } from './assets/host/videoJobs';
import { activateChat } from './chat/host/feature';
import { activateCompletions, type CompletionsFeature } from './completions/host/feature';
import type { ChatController } from './chat/host/panel';
import { activateLanguageModels, type LanguageModelSupport } from './lm/host/feature';
import type { LmAccess } from './lm/host/access';
import { activateSearch } from './search/host/feature';
import type { SearchService } from './search/host/searchService';
import { activatePlatform } from './shell/feature';
import { FeatureHost } from './shell/featureHost';
import { useDisplayLanguage } from './shell/language';
import { Services } from './shell/services';
import type { WorkspaceOverrideNotice } from './shell/workspaceOverrides';
import { activateUsage } from './usage/host/feature';
import type { UsagePanel } from './usage/host/panel';
import type { StatusBar } from './usage/host/statusBar';

/** Set by the bundle's first and last lines (esbuild.js); absent when run from source. */
declare const MODEL_GATEWAY_BUNDLE_START: number | undefined;
declare const MODEL_GATEWAY_BUNDLE_END: number | undefined;

export interface ExtensionApi {
  /** Milliseconds activate() took. */
  activationMs: number;
  /** For the integration tests only (MODEL_GATEWAY_TEST=1): internals to assert on. */
  testing?: { services: Services; status: StatusBar; usage: UsagePanel; accountTree: AccountTree; chat: ChatController; search: SearchService; videoJobs: VideoJobs; newVideoJobs: () => VideoJobs; languageModels: LanguageModelSupport; overrides: WorkspaceOverrideNotice; lmAccess: LmAccess; agent: AgentToolbox; mcp: McpHub; completions: CompletionsFeature; editor: EditorInsight; customizations: Customizations };
}

/** Wiring only: the platform's services, then each feature in the order of what it needs. */
/** How src/boot.ts loaded this bundle (absent when something else loads it, as the tests from source do). */
export interface BootReport {
  /** Reading, compiling and running the bundle's top-level code. */
  loadMs: number;
  compileMs: number;
  /** Whether V8 took the compiled code from the cache. */
  cacheUsed: boolean;
}

export async function activate(context: vscode.ExtensionContext, boot?: BootReport): Promise<ExtensionApi> {
  const started = performance.now();
  useDisplayLanguage();
  const services = new Services(context);
  context.subscriptions.push(services);
  const synchronous = performance.now() - started;
  await services.credentials.load();
  await services.updateContextKeys();
  const host = new FeatureHost(services, context);

  const { overrides } = activatePlatform(host);
  const search = activateSearch(host);
  const languageModels = activateLanguageModels(host, search);
  const completions = activateCompletions(host, search);
  const { status, usage } = activateUsage(host, languageModels.access, completions.provider.spendSource());
  const accountTree = activateAccount(host);
  const agent = activateAgent(host);
  const mcp = activateMcp(host, agent, usage);
  const editor = activateEditor(host, agent);
  const customizations = activateCustomizations(host, agent);
  const chat = activateChat(host, search, agent, editor);
  const { videoJobs } = activateAssets(host, agent);

  host.startDeferred();
  const activationMs = performance.now() - started;
  const bundleMs = typeof MODEL_GATEWAY_BUNDLE_START === 'number' && typeof MODEL_GATEWAY_BUNDLE_END === 'number' ? `${(MODEL_GATEWAY_BUNDLE_END - MODEL_GATEWAY_BUNDLE_START).toFixed(1)} ms` : 'not measured';
  const loading = boot ? `; loading the bundle before it ${boot.loadMs.toFixed(1)} ms, of which compiling ${boot.compileMs.toFixed(1)} ms ${boot.cacheUsed ? 'from the code cache' : 'without a code cache'}` : '';
  services.log.info(`activated in ${activationMs.toFixed(1)} ms (its synchronous part ${synchronous.toFixed(1)} ms; the bundle's top-level code ${bundleMs}${loading})`);
  const testing = { services, status, usage, accountTree, chat, search, videoJobs, newVideoJobs: () => new VideoJobs(services, context.workspaceState), languageModels: languageModels.support, overrides, lmAccess: languageModels.access, agent, mcp, completions, editor, customizations };
  return { activationMs, testing: process.env.MODEL_GATEWAY_TEST === '1' ? testing : undefined };
}

export function deactivate(): void {}
