/**
 * The change a commit message or a review reads, asked of git itself through the hardened runner
 * (`tools/git.ts`): first the list of changed files (`-z --name-status`: NUL-separated, never
 * quoted, whatever a name holds), each judged by the path guard on both sides of a rename, then
 * the diff of each file that may be shown, alone (`git diff … -- <its paths>`). A withheld file's
 * content is never asked of git, so how git writes a name (quoted, escaped, non-ASCII) cannot
 * carry its lines into another file's diff.
 */
import { diffArgs, runGit, type GitPlace } from '../../tools/git';
import { fileDiffOf, type FileDiff, type Withheld } from './diff';

/** The path guard's verdict on a path relative to the repository (a file that may no longer exist). */
export type Verdict = (path: string) => Promise<Withheld | undefined>;

export interface ChangedFile {
  /** git's status letter: A, M, D, R, C, T, U. */
  status: string;
  path: string;
  /** The old path of a rename or copy. */
  from?: string;
}

/** What is compared: `['--cached']` (staged), `[]` (unstaged), `['HEAD']` (the working tree), `[base, 'HEAD']`. */
export type DiffRange = readonly string[];

/** Renames found whatever `diff.renames` says in the repository's config: a rename is judged by both names. */
const RENAMES = '-M';

/** `git diff -z --name-status`: a status, then one path (two for a rename or copy), each ended by NUL. */
export function parseNameStatus(out: string): ChangedFile[] {
  const parts = out.split('\0');
  const files: ChangedFile[] = [];
  let i = 0;
  while (i < parts.length) {
    const status = parts[i++];
    if (!status) continue;
    const first = parts[i++];
    if (first === undefined) break;
    if (/^[RC]/.test(status)) {
      const second = parts[i++];
      if (second === undefined) break;
      files.push({ status: status[0], from: first, path: second });
    } else files.push({ status: status[0], path: first });
  }
  return files;
}

/** The files a range changes, in git's order. */
export async function changedFiles(place: GitPlace, range: DiffRange): Promise<ChangedFile[]> {
  return parseNameStatus(await runGit(place, diffArgs('-z', '--name-status', RENAMES, ...range, '--')));
}

/**
 * The pathspecs that name exactly this file: each of its paths taken literally (no glob, no magic),
 * and every other changed path below one of them left out (a file `cfg` deleted and a folder
 * `cfg/` added: `cfg` alone would also match `cfg/.env`).
 */
export function pathspecsOf(file: ChangedFile, all: readonly ChangedFile[]): string[] {
  const own = file.from !== undefined ? [file.from, file.path] : [file.path];
  const others = new Set(all.flatMap((f) => (f.from !== undefined ? [f.from, f.path] : [f.path])));
  const below = [...others].filter((q) => !own.includes(q) && own.some((o) => q.startsWith(`${o}/`)));
  return [...own.map((p) => `:(literal)${p}`), ...below.map((q) => `:(exclude,literal)${q}`)];
}

/**
 * A path that cannot be judged: its bytes were not UTF-8 (it is not what git wrote, and cannot be
 * named to git again), or it holds a line break (the path guard's globs do not match across one:
 * `a\nb/.env` would pass as no secret).
 */
const UNJUDGEABLE_NAME = /[\uFFFD\n\r\u2028\u2029]/;

async function verdictOf(file: ChangedFile, verdict: Verdict): Promise<Withheld | undefined> {
  const paths = file.from !== undefined ? [file.from, file.path] : [file.path];
  if (paths.some((p) => UNJUDGEABLE_NAME.test(p))) return 'excluded';
  const verdicts = await Promise.all(paths.map(verdict));
  return verdicts.includes('secret') ? 'secret' : verdicts.includes('excluded') ? 'excluded' : undefined;
}

/** How many per-file diffs run at once. */
const PARALLEL = 6;

/**
 * The change as files: a withheld one (secret, ignored or excluded, on either side of a rename)
 * with its name only, every other with its own diff. `listed`: the files when already asked.
 */
export async function readChange(place: GitPlace, range: DiffRange, verdict: Verdict, listed?: readonly ChangedFile[]): Promise<FileDiff[]> {
  const files = listed ?? (await changedFiles(place, range));
  const out: FileDiff[] = [];
  for (let at = 0; at < files.length; at += PARALLEL) {
    const batch = files.slice(at, at + PARALLEL);
    out.push(
      ...(await Promise.all(
        batch.map(async (f): Promise<FileDiff> => {
          const withheld = await verdictOf(f, verdict);
          if (withheld) return { path: f.path, from: f.from, text: '', added: 0, removed: 0, binary: false, withheld };
          const text = await runGit(place, diffArgs(RENAMES, ...range, '--', ...pathspecsOf(f, files)));
          // One file's diff, or nothing: anything else is not what was asked, and is not sent.
          if ((text.match(/^diff --(?:git|cc|combined) /gm) ?? []).length > 1)
            return { path: f.path, from: f.from, text: '', added: 0, removed: 0, binary: false, withheld: 'excluded' };
          return fileDiffOf(f.path, text, f.from);
        }),
      )),
    );
  }
  return out;
}

/** What a commit message describes: the staged change, or every change when nothing is staged. */
export async function commitChange(place: GitPlace, verdict: Verdict): Promise<{ staged: boolean; files: FileDiff[] }> {
  const staged = await changedFiles(place, ['--cached']);
  if (staged.length) return { staged: true, files: await readChange(place, ['--cached'], verdict, staged) };
  return { staged: false, files: await readChange(place, [], verdict) };
}

/** The messages of the last `count` commits, newest first (none in a repository without commits). */
export async function recentMessages(place: GitPlace, count: number): Promise<string[]> {
  const out = await runGit(place, ['log', '--no-show-signature', '-z', `--max-count=${count}`, '--format=%B']).catch(() => '');
  return out.split('\0').filter((m) => m.trim());
}

/**
 * Where this branch left `base` (a branch name from the scope: never taken as an option), or
 * undefined when there is no such branch.
 */
export async function mergeBase(place: GitPlace, base: string): Promise<string | undefined> {
  if (!/^[\w.][\w./-]*$/.test(base)) return undefined;
  const out = await runGit(place, ['merge-base', base, 'HEAD']).catch(() => '');
  return /^[0-9a-f]{40,64}$/.test(out.trim()) ? out.trim() : undefined;
}
