import { lstat, readlink } from 'node:fs/promises';
import { parse, resolve, sep } from 'node:path';

/** Symbolic links followed before a path counts as a loop (Linux's own limit). */
const MAX_LINK_HOPS = 40;

export class LinkLoopError extends Error {}

/**
 * The real location a path leads to, following every symbolic link on the way, including a
 * final link whose target does not exist yet (`realpath` fails on those, and a write through
 * one lands wherever the link points). Components past the first missing one are appended as
 * they are: nothing below a missing folder can be a link.
 */
export async function realTarget(path: string): Promise<{ path: string; exists: boolean }> {
  let pending = splitAbsolute(resolve(path));
  let current = pending.root;
  let rest = pending.parts;
  let hops = 0;
  for (let i = 0; i < rest.length; i++) {
    const candidate = current === pending.root ? current + rest[i] : current + sep + rest[i];
    let info;
    try {
      info = await lstat(candidate);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      return { path: resolve(candidate, ...rest.slice(i + 1)), exists: false };
    }
    if (info.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) throw new LinkLoopError(`too many levels of symbolic links at ${candidate}`);
      const target = resolve(current, await readlink(candidate));
      pending = splitAbsolute(resolve(target, ...rest.slice(i + 1)));
      current = pending.root;
      rest = pending.parts;
      i = -1;
      continue;
    }
    current = candidate;
  }
  return { path: current, exists: true };
}

function splitAbsolute(abs: string): { root: string; parts: string[] } {
  const root = parse(abs).root;
  return { root, parts: abs.slice(root.length).split(sep).filter(Boolean) };
}
