import picomatch from 'picomatch';

/**
 * Files whose change alters how the editor or the machine behaves: tasks, launch and settings
 * files, workspace files, dev containers, CI workflows, git hook managers, the chat's own
 * memory and rules (`.modelgateway/`: read into every request's system prompt), and `package.json`
 * scripts. Their proposed edits always open the full diff with a warning, never an inline
 * preview, and are never approved without the person.
 */
const SENSITIVE_GLOBS: [string, string][] = [
  // In any folder: a nested one is live when that folder is opened (or added to the workspace).
  ['**/.vscode/**', 'it configures VS Code for this folder (tasks and launch configurations run commands; settings change what extensions do)'],
  ['**/*.code-workspace', 'it configures VS Code for this workspace (settings, tasks and launch configurations)'],
  ['.devcontainer/**', 'it defines the dev container (images, mounts and commands that run on your machine)'],
  ['.devcontainer.json', 'it defines the dev container (images, mounts and commands that run on your machine)'],
  ['.github/workflows/**', "it is a CI workflow (runs with the repository's secrets)"],
  ['.husky/**', 'it is a git hook (runs on your machine at every commit or push)'],
  ['.github/actions/**', "it is a CI action (runs inside workflows, with the repository's secrets)"],
  ['{.gitlab-ci.yml,.circleci/**,azure-pipelines.yml,Jenkinsfile,bitbucket-pipelines.yml}', "it is a CI pipeline (runs with the repository's secrets)"],
  [
    '{.pre-commit-config.yaml,lefthook.yml,lefthook.yaml,.lefthook.yml,.lefthook.yaml}',
    'it configures git hooks (they run on your machine at every commit or push)',
  ],
  ['**/.gitattributes', 'it chooses which filters and diff drivers git runs on these files'],
  ['.gitconfig', 'it is git configuration a repository can include (it can name commands git runs)'],
  [
    '{.envrc,mise.toml,.mise.toml,.tool-versions,.yarnrc.yml,.yarnrc,.pnpmfile.cjs}',
    'your shell or package manager reads it on its own (it can run commands or choose the program that runs)',
  ],
  ['.modelgateway/**', "it is the repository's memory or rules for the chat (read into every request's system prompt)"],
];
// Compiled on first use: at load they were a tenth of the shell's start-up.
let compiled: { match: (path: string) => boolean; why: string }[] | undefined;
const matchers = () => (compiled ??= SENSITIVE_GLOBS.map(([glob, why]) => ({ match: picomatch(glob, { dot: true, nocase: true }), why })));

/** Why an edit of this file needs a closer look (null for an ordinary file). `rel` is `/`-separated, relative to its folder. */
export function sensitiveEditReason(rel: string, before: string, after: string): string | null {
  for (const m of matchers()) if (m.match(rel)) return `This change needs a careful look: ${m.why}.`;
  if (/(^|\/)package\.json$/i.test(rel) && scriptsOf(before) !== scriptsOf(after)) {
    return "This change needs a careful look: it changes package.json scripts, hooks or dependencies (npm runs scripts on install, test and build, and a dependency's own on install).";
  }
  return null;
}

/** The parts of a package.json that choose what runs (scripts, hook managers' settings, dependencies), as text to compare; a file that does not parse counts as changed. */
function scriptsOf(text: string): string {
  try {
    const parsed = (text.trim() ? JSON.parse(text) : {}) as Record<string, unknown>;
    return JSON.stringify(RUNS_KEYS.map((k) => parsed[k] ?? null));
  } catch {
    return `unparsed:${text}`;
  }
}

/** What npm, hook managers and package managers run from a package.json. */
const RUNS_KEYS = [
  'scripts',
  'config',
  'husky',
  'lint-staged',
  'simple-git-hooks',
  'pre-commit',
  'gitHooks',
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'bundleDependencies',
  'overrides',
  'resolutions',
  'workspaces',
  'packageManager',
  'bin',
];

/**
 * Why a proposed edit needs a closer look, by the path it was asked for and by where that really
 * leads (a committed `notes → .modelgateway` link makes `notes/memory.md` the memory file).
 */
export function sensitiveReasonOf(edit: { path: { rel: string; realRel?: string }; before: string; after: string }): string | null {
  return (
    sensitiveEditReason(edit.path.rel, edit.before, edit.after) ??
    (edit.path.realRel !== undefined ? sensitiveEditReason(edit.path.realRel, edit.before, edit.after) : null)
  );
}
