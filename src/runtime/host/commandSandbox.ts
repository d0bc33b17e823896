/**
 * The sandbox as every surface that runs commands gets it: the person's settings (a workspace can
 * only narrow them), whether it works on this machine (checked once, said once when it does not),
 * and the boundary of one command: its folders writable, the secret places empty.
 */
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { PathGuard, ResolvedPath } from '../../tools/pathGuard';
import type { SandboxState, SandboxedOutcome } from '../core/commandCall';
import { boundaryFor, probeSandbox, runSandboxedCommand, type SandboxSupport } from '../core/sandbox/sandboxedRun';

const Strings = z.catch(z.array(z.string()), []);

export interface SandboxSettings {
  enabled: boolean;
  runUnasked: boolean;
  allowedHosts: string[];
  writableFolders: string[];
}

/** A workspace's list can only take entries away from the person's. */
function narrowed(user: string[], workspace: unknown): string[] {
  if (!Array.isArray(workspace)) return user;
  const keep = new Set(Strings.parse(workspace).map((s) => s.trim().toLowerCase()));
  return user.filter((u) => keep.has(u.trim().toLowerCase()));
}

/**
 * The settings. What widens (turning the sandbox off, running unasked, hosts, writable folders)
 * is the person's (user settings); a cloned repository's settings can turn the sandbox on, make it
 * ask, and take hosts and folders away, never the reverse.
 */
export function sandboxSettings(): SandboxSettings {
  const c = vscode.workspace.getConfiguration('modelGateway.agent.sandbox');
  const level = (key: string) => c.inspect<unknown>(key);
  const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  const enabled = level('enabled');
  const unasked = level('runUnasked');
  const hosts = level('allowedHosts');
  const folders = level('writableFolders');
  const wsBool = (i: ReturnType<typeof level>) => bool(i?.workspaceFolderValue) ?? bool(i?.workspaceValue);
  return {
    enabled: (bool(enabled?.globalValue) ?? true) || wsBool(enabled) === true,
    runUnasked: (bool(unasked?.globalValue) ?? true) && wsBool(unasked) !== false,
    allowedHosts: narrowed(narrowed(Strings.parse(hosts?.globalValue), hosts?.workspaceValue), hosts?.workspaceFolderValue)
      .map((h) => h.trim())
      .filter(Boolean),
    writableFolders: narrowed(narrowed(Strings.parse(folders?.globalValue), folders?.workspaceValue), folders?.workspaceFolderValue)
      .map((f) => f.trim().replace(/^~(?=\/|$)/, homedir()))
      .filter((f) => f.startsWith('/')),
  };
}

let support: Promise<SandboxSupport> | undefined;
let known: SandboxSupport | undefined;
let profile: string[] = [];
let tell: ((reason: string) => void) | undefined;
let told = false;

/**
 * Set once at activation: the VS Code profile's folders (its secret storage among them) that no
 * command may read, and how to tell the person once that commands run without a sandbox here.
 */
export function configureSandbox(o: { globalStorage: string; tellUnavailable: (reason: string) => void }): void {
  // <user data>/User/globalStorage/<publisher.extension>: the whole user data folder is hidden.
  profile = [o.globalStorage, dirname(dirname(dirname(o.globalStorage)))];
  tell = o.tellUnavailable;
}

/** Whether the sandbox works here (checked once per window). */
export function sandboxSupport(): Promise<SandboxSupport> {
  support ??= probeSandbox().then((s) => (known = s));
  return support;
}

/** The sandbox for a call now: on when the settings want it and it works here (said once when it does not). */
export async function sandboxState(): Promise<SandboxState> {
  const settings = sandboxSettings();
  if (!settings.enabled) return { on: false, runUnasked: false, allowedHosts: [] };
  const s = await sandboxSupport();
  if (!s.available && !told) {
    told = true;
    tell?.(s.reason);
  }
  return { on: s.available, runUnasked: settings.runUnasked, allowedHosts: settings.allowedHosts };
}

/** The last known answer, for what must decide without waiting (a tool card's first status). */
export function sandboxOnNow(): boolean {
  return known?.available === true && sandboxSettings().enabled;
}

/** Runs a line in the sandbox with this guard's boundary, its output collected for the model. */
export async function runInSandbox(
  guard: PathGuard,
  line: string,
  folder: ResolvedPath,
  hosts: readonly string[],
  o: { timeoutMs: number; signal?: AbortSignal; onData?: (text: string) => void },
): Promise<SandboxedOutcome> {
  const s = await sandboxSupport();
  if (!s.available) throw new Error(`the sandbox is not available here: ${s.reason}`);
  return runSandboxedCommand(line, {
    support: s,
    boundary: await boundaryFor(guard, folder, { home: homedir(), profile, writable: sandboxSettings().writableFolders }),
    allowHosts: hosts,
    timeoutMs: o.timeoutMs,
    onData: (t) => o.onData?.(t),
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
