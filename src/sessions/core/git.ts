/**
 * The git a background agent needs: a worktree on a new branch, what it changed against its base,
 * a commit of its work, a merge into the person's branch, and the worktree's removal. Every call
 * goes through the hardened runner (`tools/git.ts`): the repository is named, never found from the
 * worktree's `.git` file (which the agent's tools could otherwise reach), and no fsmonitor or hook
 * runs. Nothing here runs a shell.
 */
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { GitError, locateRepository, runGit, type GitPlace } from '../../tools/git';

export { GitError, locateRepository, type GitPlace };

/** Runs git on a named repository (the hardened runner). */
export const git = runGit;

export async function headCommit(repo: GitPlace): Promise<string> {
  return (await git(repo, ['rev-parse', 'HEAD'])).trim();
}

/** The checked-out branch's name (undefined on a detached HEAD). */
export async function currentBranch(repo: GitPlace): Promise<string | undefined> {
  try {
    return (await git(repo, ['symbolic-ref', '--short', '-q', 'HEAD'])).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A new worktree at `path` on a new branch from `base`. Its git folder is read from the main
 * repository's own records (never from the worktree), once, before any agent writes there.
 */
export async function addWorktree(repo: GitPlace, path: string, branch: string, base: string): Promise<GitPlace> {
  await git(repo, ['worktree', 'add', '-b', branch, path, base]);
  return worktreePlace(repo, path);
}

/**
 * A worktree's place, from the main repository's list of worktrees (`git worktree list
 * --porcelain` reads the main git folder's records), checked against the record git keeps in the
 * worktree's own git folder (`gitdir`, which points back at the worktree's `.git`).
 */
export async function worktreePlace(repo: GitPlace, path: string): Promise<GitPlace> {
  const common = resolve(repo.workTree, (await git(repo, ['rev-parse', '--git-common-dir'])).trim());
  const real = await realpath(path).catch(() => path);
  const same = async (p: string) => p === path || p === real || (await realpath(p).catch(() => p)) === real;
  const listedPaths = (await git(repo, ['worktree', 'list', '--porcelain']))
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
  let listed = false;
  for (const p of listedPaths) if (await same(p)) listed = true;
  if (!listed) throw new GitError(`git worktree: ${path} is not a worktree of ${repo.workTree}`, '');
  // git names a worktree's folder after the worktree's last segment (then adds a number when taken).
  const candidates = [basename(path), ...Array.from({ length: 9 }, (_, i) => `${basename(path)}${i + 1}`)];
  for (const name of candidates) {
    const gitDir = join(common, 'worktrees', name);
    const back = await readFile(join(gitDir, 'gitdir'), 'utf8').then(
      (t) => t.trim(),
      () => '',
    );
    if (back && (await same(dirname(back)))) return { gitDir, workTree: path };
  }
  throw new GitError(`git worktree: the git folder of ${path} was not found under ${common}`, '');
}

export interface ChangedFile {
  /** git's letter: A(dded), M(odified), D(eleted), R(enamed). */
  status: string;
  path: string;
}

/** What the worktree changed against its base: committed and not (new files included). */
export async function changedFiles(worktree: GitPlace, base: string): Promise<ChangedFile[]> {
  await git(worktree, ['add', '-A']);
  // NUL-separated: paths are never quoted (non-ASCII, tabs, quotes come through as they are).
  const fields = (await git(worktree, ['diff', '--cached', '--no-ext-diff', '--name-status', '--no-renames', '-z', base])).split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]) files.push({ status: fields[i].charAt(0), path: fields[i + 1] });
  return files;
}

/** The file as it was at `rev` (undefined where it did not exist). */
export async function fileAt(worktree: GitPlace, rev: string, path: string): Promise<string | undefined> {
  try {
    return await git(worktree, ['show', `${rev}:${path}`]);
  } catch {
    return undefined;
  }
}

/** The person's identity, or the agent's name where none is set. */
async function identity(place: GitPlace): Promise<string[]> {
  const email = await git(place, ['config', 'user.email']).then(
    (s) => s.trim(),
    () => '',
  );
  return email ? [] : ['-c', 'user.name=Model Gateway agent', '-c', 'user.email=agent@model-gateway.invalid'];
}

/** Commits everything in the worktree; false when there was nothing to commit. */
export async function commitAll(worktree: GitPlace, message: string): Promise<boolean> {
  await git(worktree, ['add', '-A']);
  const staged = (await git(worktree, ['diff', '--cached', '--name-only'])).trim();
  if (!staged) return false;
  await git(worktree, [...(await identity(worktree)), 'commit', '-q', '--no-verify', '-m', message]);
  return true;
}

export type MergeOutcome = { merged: true } | { merged: false; conflicts: string[] } | { merged: false; refused: string };

/**
 * Merges `branch` into what `repo` has checked out. Conflicts are left for the person to resolve
 * (their files carry the markers; `git merge --abort` takes it all back); a merge git refuses
 * (local changes it would overwrite) changes nothing.
 */
export async function mergeBranch(repo: GitPlace, branch: string, message: string): Promise<MergeOutcome> {
  try {
    await git(repo, [...(await identity(repo)), 'merge', '--no-ff', '--no-verify', '-m', message, branch]);
    return { merged: true };
  } catch (err) {
    const conflicts = (await git(repo, ['diff', '--name-only', '--diff-filter=U', '-z']).catch(() => '')).split('\0').filter(Boolean);
    if (conflicts.length > 0) return { merged: false, conflicts };
    return { merged: false, refused: err instanceof GitError ? err.stderr.trim() || err.message : String(err) };
  }
}

/** Removes the worktree (its files too) and its branch. */
export async function removeWorktree(repo: GitPlace, path: string, branch: string): Promise<void> {
  await git(repo, ['worktree', 'remove', '--force', path]).catch(async (err: unknown) => {
    // Already gone from disk: git still lists it until pruned.
    await git(repo, ['worktree', 'prune']);
    if (!(err instanceof GitError) || !/is not a working tree|does not exist/.test(err.stderr)) throw err;
  });
  await git(repo, ['branch', '-D', branch]).catch(() => undefined);
}

/** "3 insertions(+), 1 deletion(-)": git's count of what the worktree changed against its base. */
export async function lineStats(worktree: GitPlace, base: string): Promise<string> {
  await git(worktree, ['add', '-A']);
  const out = (await git(worktree, ['diff', '--cached', '--no-ext-diff', '--shortstat', base])).trim();
  return out.replace(/^\d+ files? changed,?\s*/, '') || '0 lines';
}
