import * as vscode from 'vscode';
// zod/mini: the tree-shakable build, so activation does not load the whole schema library.
import * as z from 'zod/mini';
import { booleanSetting, numberSetting, stringSetting } from './settingsSchema';

import { JOBS, type Job } from '../common/jobs';

export { JOBS, type Job };

const Settings = z.object({
  baseUrl: z.catch(z.string().check(z.trim()), ''),
  userId: z.catch(z.string().check(z.trim(), z.regex(/^\d*$/)), ''),
  defaultModels: z.catch(z.record(z.string(), z.string()), {}),
  extraHeaders: z.catch(z.record(z.string(), z.string()), {}),
  modelOverrides: z.catch(z.record(z.string(), z.unknown()), {}),
});

/** Headers that carry credentials: never taken from settings (they live in secret storage). */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'new-api-user',
  'cookie',
  'proxy-authorization',
  'host',
  'content-length',
  'content-type',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** What a model can do where the gateway does not say: set per model (or id glob) in settings. */
export interface ModelOverride {
  contextWindow?: number;
  maxOutputTokens?: number;
  imageInput?: boolean;
  toolCalling?: boolean;
  /** The wire format the model speaks (else from the gateway's endpoint list, else chat completions). */
  api?: 'chat' | 'messages' | 'responses' | 'gemini';
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Send a tool round's reasoning back as `reasoning_content` (default: where the model streamed it so). */
  reasoningBack?: boolean;
  /** How inline completions ask this model (else learned: fill-in-the-middle, then prompt only, then chat). */
  completions?: 'fim' | 'prompt' | 'chat';
}

const Override = z.catch(
  z.object({
    contextWindow: z.optional(z.number().check(z.int(), z.positive())),
    maxOutputTokens: z.optional(z.number().check(z.int(), z.positive())),
    imageInput: z.optional(z.boolean()),
    toolCalling: z.optional(z.boolean()),
    api: z.optional(z.enum(['chat', 'messages', 'responses', 'gemini'])),
    reasoningEffort: z.optional(z.enum(['minimal', 'low', 'medium', 'high'])),
    reasoningBack: z.optional(z.boolean()),
    completions: z.optional(z.enum(['fim', 'prompt', 'chat'])),
  }),
  {},
);

export interface GatewaySettings {
  baseUrl: string;
  /** Where the base URL came from. */
  baseUrlSource: 'setting' | 'environment' | 'none';
  userId: string;
  timeoutMs: number;
  /** Longest silence inside a streamed answer before it is reported as stalled. */
  streamIdleTimeoutMs: number;
  lowBalanceDollars: number;
  defaultModels: Record<Job, string>;
  /** Extra headers for every gateway request (credential headers are dropped). */
  extraHeaders: Record<string, string>;
  /** Per-model capability overrides, keyed by model id or a `*` glob. */
  modelOverrides: Record<string, ModelOverride>;
}

/** A setting's value from the user settings only (never a workspace's or folder's). */
export function userValue(c: vscode.WorkspaceConfiguration, key: string): unknown {
  return c.inspect(key)?.globalValue;
}

/**
 * A list setting whose entries add restrictions (exclude globs): every level's entries together,
 * so a workspace can add to the user's list but never replace it with a shorter one.
 */
export function unionOfLevels(c: vscode.WorkspaceConfiguration, key: string): string[] {
  const i = c.inspect<unknown>(key);
  const levels = [i?.defaultValue, i?.globalValue, i?.workspaceValue, i?.workspaceFolderValue];
  const all = levels.flatMap((v): unknown[] => (Array.isArray(v) ? (v as unknown[]) : [])).filter((g): g is string => typeof g === 'string' && g.trim() !== '');
  return [...new Set(all)];
}

/** Reads the settings (validated; a bad value falls back to its default) with env fallbacks. */
export function readSettings(): GatewaySettings {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const raw = Settings.parse({
    baseUrl: userValue(c, 'baseUrl'),
    userId: userValue(c, 'userId'),
    // The completion model spends on every pause in typing: only the person's own settings choose it.
    defaultModels: Object.fromEntries(
      JOBS.map((j) => [j, (j === 'completion' ? userValue(c, `defaultModels.${j}`) : c.get<string>(`defaultModels.${j}`)) ?? '']),
    ),
    extraHeaders: userValue(c, 'extraHeaders'),
    modelOverrides: c.get('modelOverrides'),
  });
  const envUrl = process.env.MODEL_GATEWAY_BASE_URL?.trim() ?? '';
  const baseUrl = raw.baseUrl || envUrl;
  return {
    baseUrl,
    baseUrlSource: raw.baseUrl ? 'setting' : envUrl ? 'environment' : 'none',
    userId: raw.userId || (process.env.MODEL_GATEWAY_USER_ID?.trim() ?? ''),
    timeoutMs: numberSetting('modelGateway.requestTimeoutSeconds', c.get('requestTimeoutSeconds')) * 1000,
    streamIdleTimeoutMs: numberSetting('modelGateway.streamIdleTimeoutSeconds', c.get('streamIdleTimeoutSeconds')) * 1000,
    lowBalanceDollars: numberSetting('modelGateway.lowBalanceWarningDollars', c.get('lowBalanceWarningDollars')),
    defaultModels: Object.fromEntries(JOBS.map((j) => [j, raw.defaultModels[j] ?? ''])) as Record<Job, string>,
    extraHeaders: Object.fromEntries(Object.entries(raw.extraHeaders).filter(([k]) => HEADER_NAME.test(k) && !CREDENTIAL_HEADERS.has(k.toLowerCase()))),
    modelOverrides: Object.fromEntries(Object.entries(raw.modelOverrides).map(([k, v]) => [k, Override.parse(v)])),
  };
}

/** The override for a model: its exact id first, then the first glob (`*` for any text) that matches. */
export function modelOverride(overrides: Record<string, ModelOverride>, model: string): ModelOverride {
  if (overrides[model]) return overrides[model];
  for (const [pattern, o] of Object.entries(overrides)) {
    if (!pattern.includes('*')) continue;
    const re = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      'i',
    );
    if (re.test(model)) return o;
  }
  return {};
}

export async function setDefaultModel(job: Job, model: string): Promise<void> {
  await vscode.workspace.getConfiguration('modelGateway').update(`defaultModels.${job}`, model, vscode.ConfigurationTarget.Global);
}

export async function setBaseUrlSetting(url: string): Promise<void> {
  await vscode.workspace.getConfiguration('modelGateway').update('baseUrl', url, vscode.ConfigurationTarget.Global);
}

/** Checks a base URL as typed by a person; returns a message, or undefined when it is fine. */
export function baseUrlProblem(value: string): string | undefined {
  const v = value.trim();
  if (!v) return vscode.l10n.t('Enter the gateway address, for example https://gateway.example.com');
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return vscode.l10n.t('The address must start with http:// or https://');
  } catch {
    return vscode.l10n.t('This is not a valid URL (for example https://gateway.example.com)');
  }
  return undefined;
}

/** The globs of `files.exclude` and `search.exclude` that are switched on. */
export function workspaceExcludeGlobs(): string[] {
  const globs: string[] = [];
  for (const key of ['files.exclude', 'search.exclude']) {
    const map = vscode.workspace.getConfiguration().get<Record<string, unknown>>(key) ?? {};
    for (const [glob, on] of Object.entries(map)) if (on === true) globs.push(glob);
  }
  return globs;
}

const PriceOverrideSchema = z.object({
  input: z.number().check(z.nonnegative()),
  output: z.number().check(z.nonnegative()),
  cacheRead: z.optional(z.number().check(z.nonnegative())),
  cacheWrite: z.optional(z.number().check(z.nonnegative())),
});

/** Spend tracking: the user's own prices (a malformed entry is left out), the status bar, the forecast warning. */
export function usageSettings() {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const raw = c.get<unknown>('prices');
  const prices: Record<string, z.infer<typeof PriceOverrideSchema>> = {};
  if (raw && typeof raw === 'object') {
    for (const [model, v] of Object.entries(raw)) {
      const r = PriceOverrideSchema.safeParse(v);
      if (r.success) prices[model] = r.data;
    }
  }
  return {
    prices,
    todayInStatusBar: booleanSetting('modelGateway.usage.showTodayInStatusBar', c.get('usage.showTodayInStatusBar')),
    warnDaysLeft: numberSetting('modelGateway.usage.warnDaysLeft', c.get('usage.warnDaysLeft')),
  };
}

/** The chat's settings, validated against their declared limits (`settingsSchema.ts`). */
export function chatSettings() {
  const c = vscode.workspace.getConfiguration('modelGateway.chat');
  const agent = vscode.workspace.getConfiguration('modelGateway.agent');
  return {
    pattern: stringSetting('modelGateway.chat.messagesFormatPattern', c.get('messagesFormatPattern')),
    maxSteps: numberSetting('modelGateway.chat.maxToolSteps', c.get('maxToolSteps')),
    maxCostDollars: numberSetting('modelGateway.chat.maxCostPerTurnDollars', c.get('maxCostPerTurnDollars')),
    cacheTtl: c.get<string>('promptCacheTtl') === '1h' ? ('1h' as const) : ('5m' as const),
    extraExcludes: unionOfLevels(c, 'toolExcludes'),
    secretFiles: unionOfLevels(c, 'secretFiles'),
    inlineDiffMaxLines: numberSetting('modelGateway.chat.inlineDiffMaxLines', c.get('inlineDiffMaxLines')),
    attachActiveEditor: booleanSetting('modelGateway.chat.attachActiveEditor', c.get('attachActiveEditor')),
    // The user's alone: a cloned repository's settings could otherwise send every tool with every request, on the person's bill.
    findTools: booleanSetting('modelGateway.chat.findTools', userValue(c, 'findTools')),
    // The user's alone, like the others that decide where requests go and how many run at once.
    subagentModel: stringSetting('modelGateway.agent.subagentModel', userValue(agent, 'subagentModel')).trim(),
    maxParallelSubagents: numberSetting('modelGateway.agent.maxParallelSubagents', userValue(agent, 'maxParallelSubagents')),
  };
}
export type ChatSettings = ReturnType<typeof chatSettings>;

export function searchSettings() {
  const c = vscode.workspace.getConfiguration('modelGateway.search');
  return {
    batchSize: numberSetting('modelGateway.search.batchSize', c.get('batchSize')),
    concurrency: numberSetting('modelGateway.search.concurrency', c.get('concurrency')),
    maxFileKB: numberSetting('modelGateway.search.maxFileKB', c.get('maxFileKB')),
    candidates: numberSetting('modelGateway.search.candidates', c.get('candidates')),
    excludes: unionOfLevels(c, 'excludes'),
  };
}

export function assetSettings() {
  const c = vscode.workspace.getConfiguration('modelGateway.assets');
  return {
    folder: stringSetting('modelGateway.assets.folder', c.get('folder')),
    videoPollSeconds: numberSetting('modelGateway.assets.videoPollSeconds', c.get('videoPollSeconds')),
    /** The most one download (a video, image, song, speech) may hold; the setting is named in the error past it. */
    downloadLimit: {
      maxBytes: numberSetting('modelGateway.assets.maxDownloadMegabytes', c.get('maxDownloadMegabytes')) * 1024 * 1024,
      setting: 'modelGateway.assets.maxDownloadMegabytes',
    },
  };
}

const ModelList = z.catch(z.array(z.string().check(z.trim(), z.minLength(1))), []);
const Chains = z.catch(z.record(z.string(), z.array(z.string())), {});

/** The fallback chains and their limits: the person's own settings only (a repository never sets where requests go). */
export function fallbackSettings(): {
  chains: Record<string, string[]>;
  defaultChain: string[];
  rateLimitWaitMs: number;
  firstTokenMs: number;
  completions: string[];
} {
  const c = vscode.workspace.getConfiguration('modelGateway');
  return {
    chains: Chains.parse(userValue(c, 'fallbackModels')),
    defaultChain: ModelList.parse(userValue(c, 'fallbackDefault')),
    rateLimitWaitMs: numberSetting('modelGateway.fallbackRateLimitWaitSeconds', userValue(c, 'fallbackRateLimitWaitSeconds')) * 1000,
    firstTokenMs: numberSetting('modelGateway.fallbackFirstTokenSeconds', userValue(c, 'fallbackFirstTokenSeconds')) * 1000,
    completions: ModelList.parse(userValue(c, 'completions.fallbackModels')),
  };
}
