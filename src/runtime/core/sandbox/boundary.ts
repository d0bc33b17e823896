/**
 * What a sandboxed command may touch, and the bubblewrap invocation that holds it to that.
 *
 * The file system is read-only but for the workspace folders (or the worktree), the folders the
 * person added, and a private /tmp. The secret places are empty: the home's key and credential
 * folders and files, the VS Code profile and its secret storage, the workspace's secret files. The
 * workspace's own control files (`.vscode/`, `.git/`…) stay read-only inside it, and cannot be
 * made where they are absent: a command may change the project, not what runs the next time
 * someone opens it. No network but the loopback of a namespace of its own (and the host proxy's
 * bridge, when there is one); no other processes in sight; no capabilities; a session of its own
 * (no typing into the terminal).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';

export interface SandboxBoundary {
  /** Folders the command may write (the workspace's or the worktree's, and the person's extra ones). */
  writable: readonly string[];
  /**
   * Paths outside it the command may read though they are under a folder the sandbox replaces
   * (`/tmp`, `/run`, `/var/tmp`): a worktree's repository, say.
   */
  readable?: readonly string[];
  /**
   * Paths inside `writable` kept read-only (a file or a folder). An absent one is skipped here;
   * `runSandboxed` makes it an empty folder for the run first, so that a command cannot create it.
   */
  readOnly: readonly string[];
  /** Paths that must read as empty (folders) or as nothing (files); absent ones are skipped. */
  hidden: readonly string[];
  /** The folder the command starts in. */
  cwd: string;
  /** A folder of this run's own, bound at /run/model-gateway inside (the proxy's socket lives there). */
  runFolder?: string;
}

/** Where the run folder appears inside the sandbox. */
export const RUN_FOLDER_INSIDE = '/run/model-gateway';
/** The loopback port the proxy bridge listens on inside the sandbox. */
export const PROXY_PORT = 3128;

/** The home's places that hold keys, tokens and credentials (relative to the home folder). */
export const HOME_SECRETS = [
  '.ssh',
  '.aws',
  '.azure',
  '.gnupg',
  '.config/gh',
  '.config/hub',
  '.config/gcloud',
  '.config/code-server',
  '.config/Code',
  '.config/Code - Insiders',
  '.config/VSCodium',
  '.config/Cursor',
  '.config/op',
  // The Copilot extension's GitHub token.
  '.config/github-copilot',
  '.config/rclone',
  '.vscode-server',
  '.vscode-remote',
  '.local/share/code-server',
  '.local/share/keyrings',
  '.password-store',
  '.kube',
  '.docker',
  // Sockets that open a key agent or a container engine (root on the host) to whoever connects:
  // a Unix socket is reachable from the sandbox wherever the file system shows it.
  '.1password',
  '.colima',
  '.lima',
  '.rd',
  '.terraform.d',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.netrc',
  '.pypirc',
  '.git-credentials',
  '.bash_history',
  '.zsh_history',
  '.node_repl_history',
  '.psql_history',
  '.pgpass',
  '.my.cnf',
  'Library/Application Support/Code',
  'Library/Keychains',
] as const;

/**
 * A workspace folder's files that decide what runs later (a task on opening, a hook, git's own
 * commands): read-only inside. `.git` as a whole: its config and hooks alone are not enough, git
 * takes both from wherever a new `.git/commondir` names, and from `.git/modules/*` and
 * `.git/worktrees/*` (and a writable `.git` can be renamed away and made again). So commands that
 * write git's folder (commit, checkout, fetch) fail inside; status, diff and log work.
 */
export const WORKSPACE_CONTROL_FILES = ['.vscode', '.modelgateway', '.git', '.github', '.husky', '.devcontainer'] as const;

function kindOf(path: string): 'file' | 'folder' | undefined {
  // Followed through symlinks: bubblewrap mounts onto where a link points.
  let s;
  try {
    s = statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined; // not a folder on the way (`.git` a worktree's file), or unreadable: not there for the command either
  }
  return s ? (s.isDirectory() ? 'folder' : 'file') : undefined;
}

/** The paths of `HOME_SECRETS` under a home folder. */
export function homeSecretPaths(home: string): string[] {
  return HOME_SECRETS.map((rel) => join(home, rel));
}

/** The paths of `WORKSPACE_CONTROL_FILES` in each folder (`.git` a folder, or a worktree's file that says where its repository is). */
export function controlPaths(folders: readonly string[]): string[] {
  return folders.flatMap((f) => WORKSPACE_CONTROL_FILES.map((rel) => join(f, rel)));
}

/** bubblewrap's arguments for one command line run by `shell -c` (the order matters: later mounts cover earlier ones). */
export function bubblewrapArgs(b: SandboxBoundary, shell: string, line: string, bridge?: { socat: string }): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // Sockets of other programs (VS Code's IPC, ssh-agent, D-Bus, Docker) live here: out of reach.
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/run',
    '--tmpfs',
    '/var/tmp',
  ];
  for (const p of b.hidden) {
    const kind = kindOf(p);
    if (kind === 'folder') args.push('--tmpfs', p);
    else if (kind === 'file') args.push('--ro-bind', '/dev/null', p);
  }
  for (const r of b.readable ?? []) if (kindOf(r)) args.push('--ro-bind', r, r);
  for (const w of b.writable) if (kindOf(w) === 'folder') args.push('--bind', w, w);
  for (const p of b.readOnly) if (kindOf(p)) args.push('--ro-bind', p, p);
  // The hidden paths again, in case a writable folder was bound over them (a secret file in the workspace).
  for (const p of b.hidden) {
    const kind = kindOf(p);
    if (!b.writable.some((w) => p.startsWith(`${w}/`))) continue;
    if (kind === 'folder') args.push('--tmpfs', p);
    else if (kind === 'file') args.push('--ro-bind', '/dev/null', p);
  }
  if (b.runFolder) args.push('--bind', b.runFolder, RUN_FOLDER_INSIDE);
  args.push('--chdir', b.cwd, '--');
  if (!bridge || !b.runFolder) return [...args, shell, '-c', line];
  // The bridge to the host proxy, then the line. The wait is bounded: a command that starts
  // before the bridge listens would find no proxy and fail as if it had no network.
  const script = [
    `${quote(bridge.socat)} TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${RUN_FOLDER_INSIDE}/proxy.sock 2>/dev/null &`,
    `i=0; while [ $i -lt 200 ] && ! grep -q ':0C38 ' /proc/net/tcp 2>/dev/null; do i=$((i+1)); sleep 0.005; done`,
    `exec ${quote(shell)} -c ${quote(line)}`,
  ].join('\n');
  return [...args, '/bin/sh', '-c', script];
}

/** A word for /bin/sh, quoted. */
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
