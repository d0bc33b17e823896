/**
 * The secret files of a workspace folder (the path guard's list: `.env*`, keys, `.npmrc`…), found
 * before each sandboxed command so that the command reads them as empty, as the file tools refuse
 * them. Dependency and VCS folders are not walked; the walk stops at a bound and says so.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Folders not walked: packages and build output hold no secrets of the project's own. */
const SKIPPED = new Set(['node_modules', '.git', '.hg', '.svn', 'target', 'dist', 'build', 'out', '.next', '.venv', 'venv', '__pycache__']);

export interface SecretWalk {
  paths: string[];
  /** The bound was reached: files past it were not looked at. */
  truncated: boolean;
}

export async function workspaceSecretPaths(root: string, isSecret: (rel: string) => boolean, maxEntries = 50_000): Promise<SecretWalk> {
  const paths: string[] = [];
  const queue: string[] = [''];
  let seen = 0;
  while (queue.length > 0) {
    const rel = queue.shift()!;
    let entries;
    try {
      entries = await readdir(join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > maxEntries) return { paths, truncated: true };
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (isSecret(childRel)) paths.push(join(root, childRel));
      else if (e.isDirectory() && !SKIPPED.has(e.name)) queue.push(childRel);
    }
  }
  return { paths, truncated: false };
}

/**
 * The repositories in a folder: every `.git` (a folder, or the file of a worktree or submodule) at
 * any depth but inside dependencies, up to a bound. A sandboxed command must not leave a new one:
 * VS Code's git opens the repositories it finds in the workspace and runs git there, outside the
 * sandbox, with that repository's config (`core.fsmonitor` is a command).
 */
export async function repositoriesIn(root: string, maxEntries = 50_000): Promise<string[]> {
  const found: string[] = [];
  const queue: string[] = [root];
  let seen = 0;
  while (queue.length > 0) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > maxEntries) return found;
      if (e.name === '.git') found.push(join(dir, e.name));
      else if (e.isDirectory() && e.name !== 'node_modules') queue.push(join(dir, e.name));
    }
  }
  return found;
}
