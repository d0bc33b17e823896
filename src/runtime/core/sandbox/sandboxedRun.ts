/**
 * One command line run inside the operating system's sandbox (Linux: bubblewrap), with a private
 * /tmp, an environment without credentials, and the network only through the host proxy (the
 * person's allowed hosts, and those approved for this command).
 *
 * Why bubblewrap directly and not `@anthropic-ai/sandbox-runtime`: the boundary is a few dozen
 * arguments we can read and test line by line; the package (0.0.x, changing weekly) would add its
 * dependencies and seccomp helpers to a .vsix that has 5 KB left of its budget, and its proxy is
 * the same idea as `hostProxy.ts`. The reasons are in docs/architecture.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { bubblewrapArgs, controlPaths, homeSecretPaths, PROXY_PORT, type SandboxBoundary } from './boundary';
import { repositoriesIn, workspaceSecretPaths } from './workspaceSecrets';
import type { PathGuard, ResolvedPath } from '../../../tools/pathGuard';
import { HostProxy } from './hostProxy';
import type { SandboxedOutcome } from '../commandCall';
import { CappedOutput } from '../output';
import { runProcess, type ProcessRunResult } from '../processRun';

export type SandboxSupport = { available: true; bwrap: string; socat?: string } | { available: false; reason: string };

function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    // Absolute folders only: a relative one (`.`, `node_modules/.bin`) would find a workspace's own bwrap.
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Whether commands can run sandboxed here: bubblewrap on the PATH and allowed to make the
 * namespaces (a container without user namespaces refuses). Checked by running `true` in it.
 */
export async function probeSandbox(platform: NodeJS.Platform = process.platform): Promise<SandboxSupport> {
  if (platform !== 'linux')
    return {
      available: false,
      reason:
        platform === 'win32'
          ? 'Windows has no sandbox for commands here (in WSL it works: open the folder in WSL)'
          : `the sandbox is built on Linux's bubblewrap; ${platform} is not supported yet`,
    };
  const bwrap = onPath('bwrap');
  if (!bwrap) return { available: false, reason: 'bubblewrap is not installed (Debian and Ubuntu: sudo apt-get install bubblewrap)' };
  const ok = await new Promise<string | undefined>((resolve) =>
    execFile(
      bwrap,
      ['--die-with-parent', '--unshare-all', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'],
      { timeout: 10_000 },
      (err, _o, stderr) => resolve(err ? (stderr.trim() || err.message).split('\n')[0] : undefined),
    ),
  );
  if (ok !== undefined) return { available: false, reason: `bubblewrap cannot make its namespaces here (${ok})` };
  const socat = onPath('socat');
  return { available: true, bwrap, ...(socat ? { socat } : {}) };
}

/** Names of variables that carry credentials, or a way to reach a program outside (an agent's socket, VS Code's IPC). */
const SECRET_VARIABLE =
  /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEY$|_PAT$|AUTH|COOKIE|SESSION)|^(AWS_|AZURE_|GOOGLE_|GCLOUD_|GH_|GITHUB_|GITLAB_|NPM_CONFIG__|VSCODE_|ELECTRON_|MODEL_GATEWAY|OPENAI_|ANTHROPIC_|SSH_|GPG_|DBUS_|KRB5|DOCKER_|KUBECONFIG$|GIT_ASKPASS$|SSH_ASKPASS$|DISPLAY$|WAYLAND_|XAUTHORITY$|XDG_RUNTIME_DIR$|NODE_OPTIONS$|NO_PROXY$|NPM_CONFIG_NOPROXY$|ALL_PROXY$|HTTPS?_PROXY$|BASH_ENV$|ENV$|PROMPT_COMMAND$)/i;

/** The environment a sandboxed command gets: the caller's without credentials, with its temp and caches in the private /tmp. */
export function sandboxEnvironment(env: NodeJS.ProcessEnv, proxy: boolean): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !SECRET_VARIABLE.test(k)) out[k] = v;
  out.TMPDIR = '/tmp';
  out.XDG_CACHE_HOME = '/tmp/.cache';
  out.npm_config_cache = '/tmp/.npm';
  out.npm_config_update_notifier = 'false';
  if (proxy) {
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'npm_config_proxy', 'npm_config_https_proxy']) out[k] = url;
    // Node 24's fetch follows the proxy variables only when asked to.
    out.NODE_USE_ENV_PROXY = '1';
  }
  return out;
}

export interface SandboxedRunOptions {
  support: Extract<SandboxSupport, { available: true }>;
  boundary: Omit<SandboxBoundary, 'runFolder'>;
  /** Hosts the command may reach through the proxy (the person's list and what they approved now). */
  allowHosts: readonly string[];
  shell?: string;
  signal?: AbortSignal;
  timeoutMs: number;
  onData(text: string): void;
  env?: NodeJS.ProcessEnv;
}

export interface SandboxedRunResult extends ProcessRunResult {
  /** Hosts the command tried and the proxy refused. */
  refusedHosts: string[];
  /** Hosts it reached through the proxy. */
  reachedHosts: string[];
  /** The `.git` folders or files the command made, removed after it. */
  removedRepositories: string[];
}

/** The read-only paths made as empty folders for runs (they were absent), and how many runs now hold each. */
const placeholders = new Map<string, number>();

/**
 * Makes each absent read-only path an empty folder, which bubblewrap then holds read-only: a
 * command must not create `.vscode/tasks.json` (a task that runs when the folder opens) or a `.git`
 * (a repository VS Code's git opens, with its config's commands) where there was none. The release
 * removes the folders no other run holds (left when the person put something in one meanwhile).
 * Synchronous, so that two runs starting together count each folder once.
 */
function holdPlaceholders(paths: readonly string[]): () => void {
  const held: string[] = [];
  for (const p of paths) {
    const holders = placeholders.get(p);
    if (holders === undefined) {
      try {
        mkdirSync(p);
      } catch {
        continue; // there already (held as it is), or its folder is absent
      }
    }
    placeholders.set(p, (holders ?? 0) + 1);
    held.push(p);
  }
  return () => {
    for (const p of held) {
      const holders = (placeholders.get(p) ?? 1) - 1;
      if (holders > 0) {
        placeholders.set(p, holders);
        continue;
      }
      placeholders.delete(p);
      try {
        rmdirSync(p);
      } catch {
        /* not empty any more: the person's now */
      }
    }
  };
}

export async function runSandboxed(line: string, o: SandboxedRunOptions): Promise<SandboxedRunResult> {
  const runFolder = await mkdtemp(join(tmpdir(), 'mg-sandbox-'));
  const proxy = o.support.socat ? new HostProxy(o.allowHosts) : undefined;
  const release = holdPlaceholders(o.boundary.readOnly);
  try {
    await proxy?.listen(join(runFolder, 'proxy.sock'));
    const shell = o.shell ?? (existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh');
    const args = bubblewrapArgs({ ...o.boundary, runFolder }, shell, line, proxy && o.support.socat ? { socat: o.support.socat } : undefined);
    const repositoriesBefore = new Set((await Promise.all(o.boundary.writable.map((w) => repositoriesIn(w)))).flat());
    const r = await runProcess(line, {
      cwd: o.boundary.cwd,
      argv: [o.support.bwrap, ...args],
      env: sandboxEnvironment(o.env ?? process.env, proxy !== undefined),
      timeoutMs: o.timeoutMs,
      onData: (t) => o.onData(t),
      ...(o.signal ? { signal: o.signal } : {}),
    });
    // A repository the command made (`git init sub`) goes: its config would run outside the sandbox.
    const made = (await Promise.all(o.boundary.writable.map((w) => repositoriesIn(w)))).flat().filter((p) => !repositoriesBefore.has(p));
    for (const p of made) await rm(p, { recursive: true, force: true });
    return { ...r, refusedHosts: [...(proxy?.refused ?? [])], reachedHosts: [...(proxy?.reached ?? [])], removedRepositories: made };
  } finally {
    release();
    await proxy?.close();
    await rm(runFolder, { recursive: true, force: true });
  }
}

/** A line run in the sandbox as the model gets it: its output collected (capped, cleaned), and what the sandbox did. */
export async function runSandboxedCommand(line: string, o: SandboxedRunOptions): Promise<SandboxedOutcome> {
  const output = new CappedOutput();
  const started = Date.now();
  const r = await runSandboxed(line, {
    ...o,
    onData: (t) => {
      output.append(t);
      o.onData(t);
    },
  });
  return {
    exitCode: r.exitCode,
    ...(r.ended ? { ended: r.ended } : {}),
    output: output.text(),
    via: 'process',
    ms: Date.now() - started,
    refusedHosts: r.refusedHosts,
    removedRepositories: r.removedRepositories,
  };
}

/** The places outside the workspace no command reads: the home's secret folders and files, the VS Code profile. */
export interface SandboxSecrets {
  home: string;
  /** The VS Code profile's folders (its secret storage among them). */
  profile: readonly string[];
  /** Folders the person lets commands write besides the workspace. */
  writable?: readonly string[];
  /** Folders commands may read that the sandbox would otherwise replace (under `/tmp`). */
  readable?: readonly string[];
}

/** What one command may touch: its guard's folders writable (their control files read-only), every secret place empty. */
export async function boundaryFor(guard: PathGuard, folder: ResolvedPath, secrets: SandboxSecrets): Promise<SandboxBoundary> {
  const roots = guard.folders.map((f) => f.path);
  const inWorkspace = await Promise.all(roots.map((r) => workspaceSecretPaths(r, guard.isSecret)));
  return {
    writable: [...roots, ...(secrets.writable ?? [])],
    readable: [...roots.flatMap(worktreeRepository), ...(secrets.readable ?? [])],
    readOnly: controlPaths(roots),
    hidden: [...homeSecretPaths(secrets.home), ...secrets.profile, ...inWorkspace.flatMap((s) => s.paths)],
    cwd: folder.abs,
  };
}

/**
 * A worktree's repository folders (its own under `.git/worktrees/`, and the common one), read-only
 * inside: its `.git` is a file that points there, and the repository may be under `/tmp`.
 */
function worktreeRepository(root: string): string[] {
  try {
    const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(join(root, '.git'), 'utf8'))?.[1]?.trim();
    if (!pointer) return [];
    const gitDir = resolve(root, pointer);
    const common = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    return [gitDir, resolve(gitDir, common)];
  } catch {
    return []; // not a worktree (a folder, or no .git)
  }
}
