import * as vscode from 'vscode';
// zod/mini: the tree-shakable build, so activation does not load the whole schema library.
import * as z from 'zod/mini';

export const JOBS = ['chat', 'embeddings', 'rerank', 'speech', 'transcription', 'image', 'video'] as const;
export type Job = (typeof JOBS)[number];

const Settings = z.object({
  baseUrl: z.catch(z.string().check(z.trim()), ''),
  userId: z.catch(z.string().check(z.trim(), z.regex(/^\d*$/)), ''),
  requestTimeoutSeconds: z.catch(z.number().check(z.minimum(5), z.maximum(3600)), 600),
  streamIdleTimeoutSeconds: z.catch(z.number().check(z.minimum(1), z.maximum(3600)), 60),
  lowBalanceWarningDollars: z.catch(z.number().check(z.minimum(0)), 1),
  defaultModels: z.catch(z.record(z.string(), z.string()), {}),
});

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
}

/** Reads the settings (validated; a bad value falls back to its default) with env fallbacks. */
export function readSettings(): GatewaySettings {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const raw = Settings.parse({
    baseUrl: c.get('baseUrl'),
    userId: c.get('userId'),
    requestTimeoutSeconds: c.get('requestTimeoutSeconds'),
    streamIdleTimeoutSeconds: c.get('streamIdleTimeoutSeconds'),
    lowBalanceWarningDollars: c.get('lowBalanceWarningDollars'),
    defaultModels: Object.fromEntries(JOBS.map((j) => [j, c.get<string>(`defaultModels.${j}`) ?? ''])),
  });
  const envUrl = process.env.MODEL_GATEWAY_BASE_URL?.trim() ?? '';
  const baseUrl = raw.baseUrl || envUrl;
  return {
    baseUrl,
    baseUrlSource: raw.baseUrl ? 'setting' : envUrl ? 'environment' : 'none',
    userId: raw.userId || (process.env.MODEL_GATEWAY_USER_ID?.trim() ?? ''),
    timeoutMs: raw.requestTimeoutSeconds * 1000,
    streamIdleTimeoutMs: raw.streamIdleTimeoutSeconds * 1000,
    lowBalanceDollars: raw.lowBalanceWarningDollars,
    defaultModels: Object.fromEntries(JOBS.map((j) => [j, raw.defaultModels[j] ?? ''])) as Record<Job, string>,
  };
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
  if (!v) return 'Enter the gateway address, for example https://gateway.example.com';
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'The address must start with http:// or https://';
  } catch {
    return 'This is not a valid URL (for example https://gateway.example.com)';
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
