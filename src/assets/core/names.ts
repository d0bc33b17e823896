import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** A readable file name part from a prompt: `a red fox at dawn` → `a-red-fox-at-dawn`. */
export function slug(text: string, max = 40): string {
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
  return s || 'image';
}

/** `dir/base.ext`, or `dir/base-2.ext`, `-3`… when taken: results never overwrite a file. */
export function uniquePath(dir: string, base: string, ext: string): string {
  let p = join(dir, `${base}${ext}`);
  for (let i = 2; existsSync(p); i++) p = join(dir, `${base}-${i}${ext}`);
  return p;
}
