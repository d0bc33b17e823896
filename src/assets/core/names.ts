import { lstatSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { inside } from '../../tools/pathGuard';
import { realTarget } from '../../tools/realPath';

/**
 * A readable file name part from a prompt: `a red fox at dawn` → `a-red-fox-at-dawn`. Letters,
 * digits, `_` and `-` only: every part of a file name that comes from the gateway (a title, a
 * button's label, a seed) goes through here, so none can hold a `/`, `..` or NUL. `fallback` when
 * nothing is left.
 */
export function slug(text: string, max = 40, fallback = 'image'): string {
  const full = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/[\s_-]+/g, '-');
  let s = full.slice(0, max);
  // Cut at a word end rather than inside a word, when there is one.
  if (full.length > max && full[max] !== '-' && s.includes('-')) s = s.slice(0, s.lastIndexOf('-'));
  s = s.replace(/^-+|-+$/g, '');
  return s || fallback;
}

/** Whether anything is at `path`: a file, a folder, or a link (even one that leads nowhere). */
function taken(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `dir/base.ext`, or `dir/base-2.ext`, `-3`… when taken: results never overwrite a file (nor a link planted in their place). */
export function uniquePath(dir: string, base: string, ext: string): string {
  let p = join(dir, `${base}${ext}`);
  for (let i = 2; taken(p); i++) p = join(dir, `${base}-${i}${ext}`);
  return p;
}

/** A result's file name that would land outside the assets folder: refused before anything is written. */
export class UnsafeFileNameError extends Error {
  override name = 'UnsafeFileNameError';
}

/**
 * The path for a new result in `dir` (the assets folder), as `uniquePath` names it, checked where
 * it really lands: its real location, links followed (a dangling one too), must be inside the real
 * `dir`. The parts of `base` that come from the gateway go through `slug` first; this is the last
 * check, and refuses (`UnsafeFileNameError`) rather than write elsewhere.
 */
export async function resultPath(dir: string, base: string, ext: string): Promise<string> {
  const path = uniquePath(dir, base, ext);
  const [target, folder] = await Promise.all([realTarget(path), realpath(dir)]);
  if (!inside(target.path, folder) || target.path === folder) {
    throw new UnsafeFileNameError(`Refused to save "${`${base}${ext}`.slice(0, 120)}": it would land outside the assets folder (${dir}). Nothing was written.`);
  }
  return path;
}
