/**
 * The git a background agent needs, through the `git` command line: a worktree on a new branch,
 * what it changed against its base, a commit of its work, a merge into the person's branch, and
 * the worktree's removal. Every call names its folder; nothing here runs a shell.
 */
import { execFile } from 'node:child_process';

export class GitError extends Error {
  override name = 'GitError';
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** Runs git in `cwd`; rejects with what git wrote to stderr. */
export function git(cwd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' } }, (err, stdout, stderr) => {
      if (err) reject(new GitError(`git ${args[0]} failed: ${(stderr || err.message).trim().split('\n').slice(-3).join(' ')}`, stderr));
      else resolve(stdout);
    });
  });
}

/** The repository's top folder, or undefined when `dir` is in none (or git is missing). */
export async function repositoryOf(dir: string): Promise<string | undefined> {
  try {
    return (await git(dir, ['rev-parse', '--show-toplevel'])).trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function headCommit(repo: string): Promise<string> {
  return (await git(repo, ['rev-parse', 'HEAD'])).trim();
}

/** The checked-out branch's name (undefined on a detached HEAD). */
export async function currentBranch(repo: string): Promise<string | undefined> {
  try {
    return (await git(repo, ['symbolic-ref', '--short', '-q', 'HEAD'])).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A new worktree at `path` on a new branch from `base`. */
export async function addWorktree(repo: string, path: string, branch: string, base: string): Promise<void> {
  await git(repo, ['worktree', 'add', '-b', branch, path, base]);
}

export interface ChangedFile {
  /** git's letter: A(dded), M(odified), D(eleted), R(enamed). */
  status: string;
  path: string;
}

/** What the worktree changed against its base: committed and not (new files included). */
export async function changedFiles(worktree: string, base: string): Promise<ChangedFile[]> {
  await git(worktree, ['add', '-A']);
  const out = await git(worktree, ['diff', '--cached', '--name-status', '--no-renames', base]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [status, ...rest] = l.split('\t');
      return { status: status.charAt(0), path: rest.join('\t') };
    });
}

/** The file as it was at `rev` (undefined where it did not exist). */
export async function fileAt(worktree: string, rev: string, path: string): Promise<string | undefined> {
  try {
    return await git(worktree, ['show', `${rev}:${path}`]);
  } catch {
    return undefined;
  }
}

/** Commits everything in the worktree; false when there was nothing to commit. Uses the person's identity, or names the agent where none is set. */
export async function commitAll(worktree: string, message: string): Promise<boolean> {
  await git(worktree, ['add', '-A']);
  const staged = (await git(worktree, ['diff', '--cached', '--name-only'])).trim();
  if (!staged) return false;
  const email = await git(worktree, ['config', 'user.email']).then((s) => s.trim(), () => '');
  const identity = email ? [] : ['-c', 'user.name=Model Gateway agent', '-c', 'user.email=agent@model-gateway.invalid'];
  await git(worktree, [...identity, 'commit', '-q', '--no-verify', '-m', message]);
  return true;
}

export type MergeOutcome = { merged: true } | { merged: false; conflicts: string[] } | { merged: false; refused: string };

/**
 * Merges `branch` into what `repo` has checked out. Conflicts are left for the person to resolve
 * (their files carry the markers; `git merge --abort` takes it all back); a merge git refuses
 * (local changes it would overwrite) changes nothing.
 */
export async function mergeBranch(repo: string, branch: string, message: string): Promise<MergeOutcome> {
  const email = await git(repo, ['config', 'user.email']).then((s) => s.trim(), () => '');
  const identity = email ? [] : ['-c', 'user.name=Model Gateway agent', '-c', 'user.email=agent@model-gateway.invalid'];
  try {
    await git(repo, [...identity, 'merge', '--no-ff', '-m', message, branch]);
    return { merged: true };
  } catch (err) {
    const conflicts = (await git(repo, ['diff', '--name-only', '--diff-filter=U']).catch(() => ''))
      .split('\n')
      .filter(Boolean);
    if (conflicts.length > 0) return { merged: false, conflicts };
    return { merged: false, refused: err instanceof GitError ? err.stderr.trim() || err.message : String(err) };
  }
}

/** Removes the worktree (its files too) and its branch. */
export async function removeWorktree(repo: string, path: string, branch: string): Promise<void> {
  await git(repo, ['worktree', 'remove', '--force', path]).catch(async (err: unknown) => {
    // Already gone from disk: git still lists it until pruned.
    await git(repo, ['worktree', 'prune']);
    if (!(err instanceof GitError) || !/is not a working tree|does not exist/.test(err.stderr)) throw err;
  });
  await git(repo, ['branch', '-D', branch]).catch(() => undefined);
}

/** "3 insertions(+), 1 deletion(-)": git's count of what the worktree changed against its base. */
export async function lineStats(worktree: string, base: string): Promise<string> {
  await git(worktree, ['add', '-A']);
  const out = (await git(worktree, ['diff', '--cached', '--shortstat', base])).trim();
  return out.replace(/^\d+ files? changed,?\s*/, '') || '0 lines';
}
