import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { LinkLoopError, realTarget } from './realPath';

/** A tool failure whose message is meant for the model (it says what to do instead). */
export class ToolError extends Error {}

/** A file that may hold credentials: no tool reads or changes it; the person can attach it by hand. */
export class SecretFileError extends ToolError {
  override name = 'SecretFileError';
}

/**
 * Files that hold credentials or keys, refused on top of the ignore rules (matched in any letter
 * case, in any folder; a folder entry hides everything below it). `modelGateway.chat.secretFiles`
 * adds to the list, never removes from it.
 */
export const SECRET_FILES = [
  '.env*',
  '*.pem',
  '*.key',
  'id_rsa*',
  'id_ed25519*',
  '.npmrc',
  '.netrc',
  '.pypirc',
  '.git-credentials',
  '*.p12',
  '*.pfx',
  '.aws',
  '.ssh',
] as const;

const secretMatchers = new Map<string, (p: string) => boolean>();

/** Whether an absolute path (outside any workspace folder) names a secret file: the deny list, any folder level. */
export function isSecretPath(absPath: string, extraSecretFiles: readonly string[] = []): boolean {
  const posix = toPosix(absPath)
    .replace(/^[A-Za-z]:/, '')
    .replace(/^\/+/, '');
  // Asked on every change of the active editor's selection: the globs are compiled once per list.
  const key = extraSecretFiles.join('\0');
  let matcher = secretMatchers.get(key);
  if (!matcher) {
    matcher = globMatcher([...SECRET_FILES, ...extraSecretFiles], true);
    secretMatchers.clear();
    secretMatchers.set(key, matcher);
  }
  return matcher(posix);
}

/** Bidirectional controls and invisible characters: a name holding them can read as another name. */
const DECEPTIVE_CHARS = /[\u200B-\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A path as shown to a person: deceptive characters written as `\u{…}` escapes. */
export function escapeDeceptive(path: string): string {
  return path.replace(new RegExp(DECEPTIVE_CHARS.source, 'gu'), (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** Matches paths (relative, `/`-separated) against globs as VS Code's excludes do: a bare name anywhere, a folder hides what is below. */
export function globMatcher(globList: readonly string[], nocase: boolean): (p: string) => boolean {
  const globs = globList.flatMap((g) => (g.startsWith('**/') || g.includes('/') ? [g] : [g, `**/${g}`]));
  if (globs.length === 0) return () => false;
  // One regular expression for the whole list (each glob's own, anchored, as an alternative), and
  // a glob written out literally matches that path too, as picomatch's matcher has it: a full
  // build's walk tested every path level against each glob in turn, a fifth of its thread's time.
  const anyGlob = new RegExp(globs.map((g) => `(?:${picomatch.makeRe(g, { dot: true, nocase }).source})`).join('|'), nocase ? 'i' : '');
  const literal = new Set(globs);
  const one = (path: string) => literal.has(path) || anyGlob.test(path);
  const matches = (path: string) => one(path) || one(`${path}/`);
  // A folder's answer is the same for every file below it: kept, so each path tests its last level only.
  const folders = new Map<string, boolean>();
  const folderMatches = (prefix: string) => {
    let hit = folders.get(prefix);
    if (hit === undefined) {
      hit = matches(prefix);
      if (folders.size >= 20_000) folders.clear();
      folders.set(prefix, hit);
    }
    return hit;
  };
  return (path) => {
    // A line break in a name: the globs' `.` and `*` do not cross one, so `a\nb/.env` would pass as
    // no match. Each is taken as another character of the name.
    // Names as Windows reads them: `key.pem.` and `key.pem ` are `key.pem`, `x.key::$DATA` is `x.key`
    // (refusing those spellings where they are other files costs nothing).
    const p = path
      .replace(/[\r\n\u2028\u2029]/g, '\u0001')
      .replace(/::\$DATA(?=\/|$)/gi, '')
      .replace(/(?<=[^/.])[. ]+(?=\/|$)/g, '');
    const parts = p.split('/');
    let prefix = parts[0];
    for (let i = 1; i < parts.length; i++) {
      if (folderMatches(prefix)) return true;
      prefix = `${prefix}/${parts[i]}`;
    }
    return matches(prefix);
  };
}

export interface WorkspaceFolderPath {
  name: string;
  /** Absolute file-system path. */
  path: string;
}

export interface ResolvedPath {
  abs: string;
  folder: WorkspaceFolderPath;
  /** Path relative to its folder, with `/` separators. */
  rel: string;
  /** How tools show it: relative, prefixed with the folder name in a multi-root workspace. */
  display: string;
  /**
   * Where it really is, relative to the folder holding its real location (`/`-separated): differs
   * from `rel` when a symbolic link leads there (`notes/memory.md` → `.modelgateway/memory.md`).
   * Rules about kinds of file (sensitive edits) ask both.
   */
  realRel?: string;
}

/**
 * Version-control folders, refused as any segment of a path, file or folder: in a worktree or a
 * submodule `.git` is a file naming the git folder, and a tool that could rewrite it would choose
 * what git runs (its config's fsmonitor, hooks) the next time anything runs git there.
 */
const VCS_NAMES = new Set(['.git', '.hg', '.svn']);

/** Whether a `/`-separated path has a version-control segment, in any letter case and as Windows reads names (trailing dots and spaces dropped, `GIT~1`). */
export function hasVcsSegment(path: string): boolean {
  return path.split('/').some((segment) => {
    const name = segment.toLowerCase().replace(/[. ]+$/, '');
    return VCS_NAMES.has(name) || /^(git|hg|svn)~\d+$/.test(name);
  });
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

/** Probes a folder: the same path in swapped letter case names the same folder. */
export async function isCaseInsensitiveFs(dir: string): Promise<boolean> {
  const swapped = dir.replace(/[a-zA-Z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
  if (swapped === dir) return false;
  try {
    const [a, b] = await Promise.all([stat(dir), stat(swapped)]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/**
 * A folder below `root` named by a setting (the assets folder), followed through symbolic links:
 * its real location must stay inside the real `root`, so a link in a cloned repository cannot
 * send generated files elsewhere. Returns the real path (it may not exist yet).
 */
export async function folderInside(root: string, name: string): Promise<string> {
  const cleaned = name.replace(/\\/g, '/').trim();
  if (!cleaned || cleaned.includes('\0') || isAbsolute(cleaned) || cleaned.split('/').includes('..')) {
    throw new ToolError(`The folder "${name}" must be a path inside the workspace folder, without "..".`);
  }
  let target: { path: string };
  try {
    target = await realTarget(resolve(root, cleaned));
  } catch (err) {
    throw new ToolError(
      err instanceof LinkLoopError ? `The folder "${name}" is a loop of symbolic links.` : `Cannot use the folder "${name}": ${(err as Error).message}`,
    );
  }
  const rootReal = await realpath(root).catch(() => root);
  if (!inside(target.path, rootReal))
    throw new ToolError(`The folder "${name}" leads outside the workspace through a symbolic link; nothing is written there.`);
  return target.path;
}

/** Whether `child` is `parent` or below it; only a whole `..` segment leaves (`..foo` is a name). */
export function inside(child: string, parent: string): boolean {
  const r = relative(parent, child);
  return r === '' || (r !== '..' && !r.startsWith(`..${sep}`) && !isAbsolute(r));
}

/**
 * Confines tool paths to the workspace folders: no `..` segments, no absolute paths outside, no
 * symlink that leads outside, and nothing ignored by `.gitignore` (root and nested), by the
 * exclude globs (`files.exclude`, `search.exclude`, extra ones), or version-control folders.
 */
export class PathGuard {
  private readonly folderReal = new Map<string, Promise<string>>();
  private readonly gitignores = new Map<string, Promise<Ignore | undefined>>();
  private readonly excluded: (p: string, nocase: boolean) => boolean;
  /** Secret files, in any letter case: refusing `.ENV` on a case-sensitive disk costs nothing. */
  readonly isSecret: (rel: string) => boolean;
  private readonly caseFolding = new Map<string, Promise<boolean>>();

  constructor(
    readonly folders: readonly WorkspaceFolderPath[],
    excludeGlobs: readonly string[] = [],
    extraSecretFiles: readonly string[] = [],
  ) {
    if (folders.length === 0) throw new ToolError('No folder is open in the workspace, so there are no files to work with.');
    // A glob that matches a folder hides everything below it, as in VS Code's files.exclude.
    const exact = globMatcher(excludeGlobs, false);
    const folded = globMatcher(excludeGlobs, true);
    this.excluded = (p, nocase) => (nocase ? folded : exact)(p);
    this.isSecret = globMatcher([...SECRET_FILES, ...extraSecretFiles], true);
  }

  /**
   * Resolves a path a model gave; throws a ToolError that explains the rule it broke.
   * `allowSecret`: the person attaches a secret file by hand, after confirming.
   */
  async resolve(requested: string, options: { allowMissing?: boolean; allowSecret?: boolean } = {}): Promise<ResolvedPath> {
    const raw = (requested ?? '').trim().replace(/\\/g, '/');
    if (!raw) throw new ToolError('The path is empty. Give a path relative to the workspace root, e.g. "src/index.ts".');
    if (raw.includes('\0')) throw new ToolError('The path contains a NUL character, which no file name can hold.');
    if (DECEPTIVE_CHARS.test(raw))
      throw new ToolError(
        `"${escapeDeceptive(raw)}" contains invisible or text-direction characters, which can make a name read as another; tools do not use such paths.`,
      );
    if (raw.split('/').includes('..')) throw new ToolError(`"${requested}" contains "..". Use a path inside the workspace, relative to its root.`);
    let folder: WorkspaceFolderPath | undefined;
    let abs: string;
    if (isAbsolute(raw)) {
      abs = resolve(raw);
      folder = this.folders.find((f) => inside(abs, f.path));
      if (!folder) throw new ToolError(`"${requested}" is outside the workspace. Use a path relative to the workspace root.`);
    } else {
      const first = raw.split('/')[0];
      const named = this.folders.length > 1 ? this.folders.find((f) => f.name === first) : undefined;
      folder = named ?? this.folders[0];
      const rest = named ? raw.split('/').slice(1).join('/') : raw;
      abs = resolve(folder.path, rest || '.');
      if (!inside(abs, folder.path)) throw new ToolError(`"${requested}" is outside the workspace.`);
    }
    const rel = toPosix(relative(folder.path, abs));
    const resolved: ResolvedPath = { abs, folder, rel, display: this.display(folder, rel) };
    const excluded = () => new ToolError(`"${requested}" is excluded (by .gitignore or the workspace's exclude settings), so tools may not use it.`);
    const secret = () =>
      new SecretFileError(
        `"${requested}" may hold credentials or keys (${SECRET_FILES.slice(0, 4).join(', ')}…), so tools may not read, list or change it. The person can attach it by hand if it is needed.`,
      );
    if (rel && !options.allowSecret && this.isSecret(rel)) throw secret();
    if (rel && (await this.isExcluded(resolved))) throw excluded();

    // Symbolic links: every component is followed to its real target (a dangling link too), which
    // must lie inside a workspace folder and obey the ignore rules there as well.
    let target: { path: string; exists: boolean };
    try {
      target = await realTarget(abs);
    } catch (err) {
      if (err instanceof LinkLoopError) throw new ToolError(`"${requested}" is a loop of symbolic links.`);
      throw new ToolError(`Cannot access "${requested}": ${(err as Error).message}`);
    }
    const landing = await this.folderHolding(target.path);
    if (!landing) throw new ToolError(`"${requested}" leads outside the workspace through a symbolic link.`);
    if (!target.exists && !options.allowMissing) throw new ToolError(`"${requested}" does not exist. Use list_dir or find_files to see what exists.`);
    const realRel = toPosix(relative(landing.real, target.path));
    if (realRel !== rel || landing.folder.name !== folder.name) {
      if (realRel && !options.allowSecret && this.isSecret(realRel)) throw secret();
      if (realRel && (await this.isExcluded({ folder: landing.folder, rel: realRel, abs: target.path }))) throw excluded();
    }
    // Operations use the real location, so that a link swapped later cannot redirect them.
    return { ...resolved, abs: target.path, ...(realRel !== rel ? { realRel } : {}) };
  }

  /** The workspace folder whose real location holds a real path, if any. */
  private async folderHolding(realPath: string): Promise<{ folder: WorkspaceFolderPath; real: string } | undefined> {
    for (const folder of this.folders) {
      const real = await this.realFolder(folder);
      if (inside(realPath, real)) return { folder: { ...folder, path: real }, real };
    }
    return undefined;
  }

  display(folder: WorkspaceFolderPath, rel: string): string {
    const r = rel || '.';
    return this.folders.length > 1 ? `${folder.name}/${r === '.' ? '' : r}` : r;
  }

  private realFolder(folder: WorkspaceFolderPath): Promise<string> {
    let p = this.folderReal.get(folder.path);
    if (!p) {
      p = realpath(folder.path).catch(() => folder.path);
      this.folderReal.set(folder.path, p);
    }
    return p;
  }

  /** Whether the folder's file system ignores letter case (then exclude globs do too). */
  private foldsCase(dir: string): Promise<boolean> {
    let p = this.caseFolding.get(dir);
    if (!p) {
      p = isCaseInsensitiveFs(dir);
      this.caseFolding.set(dir, p);
    }
    return p;
  }

  private gitignoreAt(dir: string): Promise<Ignore | undefined> {
    let p = this.gitignores.get(dir);
    if (!p) {
      p = readFile(join(dir, '.gitignore'), 'utf8').then(
        (text) => ignore().add(text),
        () => undefined,
      );
      this.gitignores.set(dir, p);
    }
    return p;
  }

  /** Whether tools skip a path (relative to its folder): a secret file, or one the ignore rules exclude. */
  async isIgnored(p: Pick<ResolvedPath, 'folder' | 'rel' | 'abs'>, isDir?: boolean): Promise<boolean> {
    if (p.rel && this.isSecret(p.rel)) return true;
    return this.isExcluded(p, isDir);
  }

  /** Whether the ignore rules exclude a path: VCS folders, exclude globs, .gitignore files. */
  private async isExcluded(p: Pick<ResolvedPath, 'folder' | 'rel' | 'abs'>, isDir?: boolean): Promise<boolean> {
    const rel = p.rel;
    if (!rel) return false;
    const dir =
      isDir ??
      (await stat(p.abs).then(
        (s) => s.isDirectory(),
        () => false,
      ));
    const asPath = dir ? `${rel}/` : rel;
    // Version-control folders and files in any letter case: on a case-insensitive file system
    // `.GIT/config` is `.git/config`, and refusing it on a case-sensitive one costs nothing.
    if (hasVcsSegment(asPath)) return true;
    if (this.excluded(rel, await this.foldsCase(p.folder.path))) return true;
    // Each .gitignore from the folder root down to the path's parent applies to what is below it.
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const base = join(p.folder.path, ...parts.slice(0, i));
      const ig = await this.gitignoreAt(base);
      if (!ig) continue;
      const sub = parts.slice(i).join('/');
      if (ig.ignores(dir ? `${sub}/` : sub)) return true;
      // A parent folder ignored by this .gitignore hides everything below it.
      for (let j = i + 1; j < parts.length; j++) if (ig.ignores(`${parts.slice(i, j).join('/')}/`)) return true;
    }
    return false;
  }
}
