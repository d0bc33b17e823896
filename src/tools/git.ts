/**
 * Every `git` the extension runs itself goes through here: git as the agent's tool, never the
 * agent's weapon. A model can write files in a worktree, so nothing git reads from the work tree
 * may choose a command to run:
 * - the repository is named (`--git-dir`, `--work-tree`), never found from a `.git` file in the work
 *   tree (in a worktree or a submodule `.git` is a file an agent could point at a folder it wrote);
 * - `core.fsmonitor` is off and `core.hooksPath` names a place with no hooks (git would run either
 *   on `add`, `status`, `commit`, `merge`);
 * - diffs use no external diff driver nor text conversion (`--no-ext-diff --no-textconv` is added by
 *   `diffArgs`);
 * - no `GIT_*` variable of the extension host's environment redirects it.
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

/** A repository as git is told it: where its objects and config are, and its files. */
export interface GitPlace {
  /** The absolute git folder (`git rev-parse --absolute-git-dir`); a worktree's own, under the main repository's. */
  gitDir: string;
  /** The absolute top folder of its files. */
  workTree: string;
}

/**
 * Where hooks are looked up: a path that is no folder, so no hook exists there. (An empty folder of
 * our own would do the same, but would have to be made and kept; `/dev/null` and `NUL` always exist
 * and can never hold a file.)
 */
export const NO_HOOKS = process.platform === 'win32' ? 'NUL' : '/dev/null';

/** The options every git gets before its command. */
export const SAFE_CONFIG: readonly string[] = ['-c', 'core.fsmonitor=false', '-c', `core.hooksPath=${NO_HOOKS}`, '-c', 'core.untrackedCache=false'];

/** The environment without the variables that would point git elsewhere or add config. */
function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^GIT_/.test(k)) env[k] = v;
  return { ...env, ...extra, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };
}

function exec(cwd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: gitEnv(env) }, (err, stdout, stderr) => {
      const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c') ?? 'git';
      if (err) reject(new GitError(`git ${command} failed: ${(stderr || err.message).trim().split('\n').slice(-3).join(' ')}`, stderr));
      else resolve(stdout);
    });
  });
}

/** Runs git on a named repository, with the safe config; rejects with what git wrote to stderr. */
export function runGit(place: GitPlace, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return exec(place.workTree, [...SAFE_CONFIG, `--git-dir=${place.gitDir}`, `--work-tree=${place.workTree}`, ...args], env);
}

/**
 * The repository holding `dir` (undefined when none, or git is missing). This is the one call that
 * lets git find the repository itself: made on the person's folder before any agent wrote in it,
 * and its answer is what every later call names.
 */
export async function locateRepository(dir: string): Promise<GitPlace | undefined> {
  try {
    const [workTree, gitDir] = (await exec(dir, [...SAFE_CONFIG, 'rev-parse', '--show-toplevel', '--absolute-git-dir'])).trim().split('\n');
    return workTree && gitDir ? { workTree, gitDir } : undefined;
  } catch {
    return undefined;
  }
}

/** The options a diff gets so that no driver named in config or `.gitattributes` runs. */
export function diffArgs(...args: string[]): string[] {
  return ['diff', '--no-ext-diff', '--no-textconv', '--no-color', ...args];
}
