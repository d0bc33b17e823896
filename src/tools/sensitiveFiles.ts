import picomatch from 'picomatch';

/**
 * Files whose change alters how the editor or the machine behaves: tasks, launch and settings
 * files, workspace files, dev containers, CI workflows, git hook managers, the chat's own
 * memory and rules (`.modelgateway/`: read into every request's system prompt), and `package.json`
 * scripts. Their proposed edits always open the full diff with a warning, never an inline
 * preview, and are never approved without the person.
 */
const SENSITIVE_GLOBS: [string, string][] = [
  ['.vscode/**', 'it configures VS Code for this folder (tasks and launch configurations run commands; settings change what extensions do)'],
  ['**/*.code-workspace', 'it configures VS Code for this workspace (settings, tasks and launch configurations)'],
  ['.devcontainer/**', 'it defines the dev container (images, mounts and commands that run on your machine)'],
  ['.devcontainer.json', 'it defines the dev container (images, mounts and commands that run on your machine)'],
  ['.github/workflows/**', "it is a CI workflow (runs with the repository's secrets)"],
  ['.husky/**', 'it is a git hook (runs on your machine at every commit or push)'],
  ['.modelgateway/**', "it is the repository's memory or rules for the chat (read into every request's system prompt)"],
];
// Compiled on first use: at load they were a tenth of the shell's start-up.
let compiled: { match: (path: string) => boolean; why: string }[] | undefined;
const matchers = () => (compiled ??= SENSITIVE_GLOBS.map(([glob, why]) => ({ match: picomatch(glob, { dot: true, nocase: true }), why })));

/** Why an edit of this file needs a closer look (null for an ordinary file). `rel` is `/`-separated, relative to its folder. */
export function sensitiveEditReason(rel: string, before: string, after: string): string | null {
  for (const m of matchers()) if (m.match(rel)) return `This change needs a careful look: ${m.why}.`;
  if (/(^|\/)package\.json$/i.test(rel) && scriptsOf(before) !== scriptsOf(after)) {
    return 'This change needs a careful look: it changes package.json scripts (npm runs them on install, test and build).';
  }
  return null;
}

/** The `scripts` block as text, to compare; a file that does not parse counts as changed. */
function scriptsOf(text: string): string {
  if (!text.trim()) return '{}';
  try {
    const parsed = JSON.parse(text) as { scripts?: unknown };
    return JSON.stringify(parsed.scripts ?? {});
  } catch {
    return `unparsed:${text}`;
  }
}

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
