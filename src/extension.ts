import type * as vscode from 'vscode';
import type { AccountTree } from './account/host/tree';
import type { AgentToolbox } from './runtime/host/toolbox';
import type { EditorInsight } from './editor/host/feature';
import type { Customizations } from './customization/host/customizations';
import type { McpHub } from './mcp/host/hub';
import type { VideoJobs } from './assets/host/videoJobs';
import type { CompletionsFeature } from './completions/host/feature';
import type { ScmFeature } from './scm/host/feature';
import type { AgentSessions } from './sessions/host/agentSessions';
import type { ChatController } from './chat/host/panel';
import type { LanguageModelSupport } from './lm/host/feature';
import type { LmAccess } from './lm/host/access';
import type { SearchService } from './search/host/searchService';
import { FeatureHost } from './shell/featureHost';
import { useDisplayLanguage } from './shell/language';
import { listenerCounts } from './shell/listeners';
import { Services } from './shell/services';
import type { WorkspaceOverrideNotice } from './shell/workspaceOverrides';
import type { UsagePanel } from './usage/host/panel';
import type { StatusBar } from './usage/host/statusBar';

/** Set by the bundle's first and last lines (esbuild.js); absent when run from source. */
declare const MODEL_GATEWAY_BUNDLE_START: number | undefined;
declare const MODEL_GATEWAY_BUNDLE_END: number | undefined;

export interface ExtensionApi {
  /** Milliseconds activate() took. */
  activationMs: number;
  /** For the integration tests only (MODEL_GATEWAY_TEST=1): internals to assert on. */
  testing?: {
    services: Services;
    status: StatusBar;
    usage: UsagePanel;
    accountTree: AccountTree;
    chat: ChatController;
    search: SearchService;
    videoJobs: VideoJobs;
    newVideoJobs: () => VideoJobs;
    languageModels: LanguageModelSupport;
    overrides: WorkspaceOverrideNotice;
    lmAccess: LmAccess;
    agent: AgentToolbox;
    mcp: McpHub;
    completions: CompletionsFeature;
    scm: ScmFeature;
    editor: EditorInsight;
    customizations: Customizations;
    sessions: AgentSessions;
    listeners: () => Record<string, number>;
  };
}

/** Wiring only: the platform's services, then each feature in the order of what it needs. */
/** How src/boot.ts loaded this bundle (absent when something else loads it, as the tests from source do). */
export interface BootReport {
  /** From VS Code's call of activate() to the bundle's load (the next turn of the event loop). */
  waitMs: number;
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
  // The features' modules are initialised here, after the first await, rather than when the
  // bundle loads: the part of activation that holds the extension host without a break (what
  // VS Code reports) is then only the platform's own services.
  const [features] = await Promise.all([loadFeatures(), services.credentials.load()]);
  const {
    activatePlatform,
    activateSearch,
    activateLanguageModels,
    activateCompletions,
    activateUsage,
    activateAccount,
    activateAgent,
    activateMcp,
    activateEditor,
    activateCustomizations,
    activateChat,
    activateAssets,
    activateScm,
    activateSessions,
    VideoJobs,
  } = features;
  await services.updateContextKeys();
  const host = new FeatureHost(services, context);

  const { overrides } = activatePlatform(host);
  const search = activateSearch(host);
  const languageModels = activateLanguageModels(host, search);
  const completions = activateCompletions(host, search);
  const { status, usage } = activateUsage(host, languageModels.access, completions.provider.spendSource());
  const scm = activateScm(host);
  usage.ownSpend = () => Object.fromEntries([completions.nextEditSpend, ...scm.spend].map((s) => [s.series, s.spendByDay()]));
  const accountTree = activateAccount(host);
  const agent = activateAgent(host);
  const mcp = activateMcp(host, agent, usage);
  const editor = activateEditor(host, agent);
  const customizations = activateCustomizations(host, agent);
  const chat = activateChat(host, search, agent, editor);
  const { videoJobs } = activateAssets(host, agent);
  const sessions = activateSessions(host);

  host.startDeferred();
  const activationMs = performance.now() - started;
  const bundleMs =
    typeof MODEL_GATEWAY_BUNDLE_START === 'number' && typeof MODEL_GATEWAY_BUNDLE_END === 'number'
      ? `${(MODEL_GATEWAY_BUNDLE_END - MODEL_GATEWAY_BUNDLE_START).toFixed(1)} ms`
      : 'not measured';
  const loading = boot
    ? `; loading the bundle before it ${boot.loadMs.toFixed(1)} ms, of which compiling ${boot.compileMs.toFixed(1)} ms ${boot.cacheUsed ? 'from the code cache' : 'without a code cache'}, begun ${boot.waitMs.toFixed(1)} ms after VS Code called activate()`
    : '';
  services.log.info(
    `activated in ${activationMs.toFixed(1)} ms (its synchronous part ${synchronous.toFixed(1)} ms; the bundle's top-level code ${bundleMs}${loading})`,
  );
  const testing = {
    services,
    status,
    usage,
    accountTree,
    chat,
    search,
    videoJobs,
    newVideoJobs: () => new VideoJobs(services, context.workspaceState),
    languageModels: languageModels.support,
    overrides,
    lmAccess: languageModels.access,
    agent,
    mcp,
    completions,
    scm,
    editor,
    customizations,
    sessions,
    listeners: listenerCounts,
  };
  return { activationMs, testing: process.env.MODEL_GATEWAY_TEST === '1' ? testing : undefined };
}

export function deactivate(): void {}

/** Every feature's entry point, each module initialised on this first call. */
async function loadFeatures() {
  const [platform, search, lm, completions, usage, account, agent, mcp, editor, customization, chat, assets, videoJobs, scm, sessions] = await Promise.all([
    import('./shell/feature.js'),
    import('./search/host/feature.js'),
    import('./lm/host/feature.js'),
    import('./completions/host/feature.js'),
    import('./usage/host/feature.js'),
    import('./account/host/feature.js'),
    import('./agent/host/feature.js'),
    import('./mcp/host/feature.js'),
    import('./editor/host/feature.js'),
    import('./customization/host/feature.js'),
    import('./chat/host/feature.js'),
    import('./assets/host/feature.js'),
    import('./assets/host/videoJobs.js'),
    import('./scm/host/feature.js'),
    import('./sessions/host/feature.js'),
  ]);
  return {
    ...platform,
    ...search,
    ...lm,
    ...completions,
    ...usage,
    ...account,
    ...agent,
    ...mcp,
    ...editor,
    ...customization,
    ...chat,
    ...assets,
    ...videoJobs,
    ...scm,
    ...sessions,
  };
}
