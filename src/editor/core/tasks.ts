/** Running the workspace's tasks (tasks.json, detected ones) for the agent: the tool, the command line shown, the answer. */
import type { ToolDefinition } from '../../tools/workspaceTools';
import { problemLine, type Diagnosis } from './problems';

export const RUN_TASK: ToolDefinition = {
  name: 'run_task',
  kind: 'write',
  description:
    "Run a task of the workspace (from .vscode/tasks.json, or one VS Code detects such as an npm script) by its label, and get its exit code and the problems its problem matcher reported (e.g. $tsc: the compiler's errors). The person approves it as a command. Use it for the project's own build or check steps; an unknown label lists the tasks there are. Not for watch tasks that never end.",
  parameters: {
    type: 'object',
    properties: { label: { type: 'string', description: 'The task\'s label, e.g. "build" or "npm: test"' } },
    required: ['label'],
  },
};

export const TASK_LIMITS = { problems: 30, listed: 40 };

/** A task as the tool knows it, whatever the host's type. */
export interface TaskInfo {
  label: string;
  /** Where it comes from: `tasks.json`, `npm`, `typescript`… */
  source: string;
  /** The command line it runs, when it runs one VS Code can show (shell or process). */
  commandLine?: string;
  background: boolean;
}

const QUOTE_NEEDED = /[\s"'$`\\|&;<>()*?![\]{}~#]/;

/** One argument as a shell would read it back (single quotes when anything in it is special). */
export function shellWord(arg: string): string {
  if (arg === '') return "''";
  return QUOTE_NEEDED.test(arg) ? `'${arg.replace(/'/g, `'\\''`)}'` : arg;
}

/** The line a task runs: a shell task's command line as written, or its command and arguments quoted. */
export function taskCommandLine(command: string, args: readonly string[] | undefined, isCommandLine: boolean): string {
  if (isCommandLine || !args?.length) return command;
  return [shellWord(command), ...args.map(shellWord)].join(' ');
}

/** The task a label names: exact first, then case-insensitive, then a detected task's short label ("test" for "npm: test"). */
export function findTask<T extends TaskInfo>(tasks: readonly T[], label: string): T | undefined {
  const wanted = label.trim();
  const lower = wanted.toLowerCase();
  return (
    tasks.find((t) => t.label === wanted) ??
    tasks.find((t) => t.label.toLowerCase() === lower) ??
    tasks.find((t) => `${t.source}: ${t.label}`.toLowerCase() === lower) ??
    tasks.find((t) => t.label.toLowerCase().replace(/^[\w-]+:\s*/, '') === lower)
  );
}

/** For an unknown label: the tasks there are. */
export function taskListText(tasks: readonly TaskInfo[], label: string): string {
  if (tasks.length === 0)
    return `No task is labelled "${label}": this workspace has no tasks (no .vscode/tasks.json, nothing detected). Use run_command instead.`;
  const shown = tasks
    .slice(0, TASK_LIMITS.listed)
    .map((t) => `  ${t.label} (${t.source}${t.background ? ', background' : ''})${t.commandLine ? `: ${t.commandLine}` : ''}`);
  return [
    `No task is labelled "${label}". The tasks of this workspace${tasks.length > shown.length ? ` (first ${shown.length} of ${tasks.length})` : ''}:`,
    ...shown,
  ].join('\n');
}

/** What the model reads once the task ended. */
export function taskResultText(o: {
  label: string;
  commandLine?: string;
  exitCode: number | undefined;
  ms: number;
  ended?: 'timeout' | 'stopped';
  problems: readonly Diagnosis[];
  hidden: number;
}): string {
  const how =
    o.ended === 'timeout'
      ? 'was stopped at the time limit'
      : o.ended === 'stopped'
        ? 'was stopped'
        : o.exitCode === undefined
          ? 'ended'
          : `exited with code ${o.exitCode}`;
  const head = `Task "${o.label}"${o.commandLine ? ` (${o.commandLine})` : ''} ${how} after ${(o.ms / 1000).toFixed(1)} s.`;
  const errors = o.problems.filter((p) => p.severity === 'error').length;
  const shown = o.problems.slice(0, TASK_LIMITS.problems);
  const failed = o.ended !== undefined || (o.exitCode ?? 0) !== 0;
  const lines = o.problems.length
    ? [
        `Problems its problem matcher reported (${o.problems.length}, ${errors} error${errors === 1 ? '' : 's'})${o.problems.length > shown.length ? `; first ${shown.length}` : ''}:`,
        ...shown.map(problemLine),
      ]
    : failed && o.commandLine
      ? [
          // VS Code 1.100 (and others before task problems reached extensions) shows them in the Problems panel only.
          "No problems from its problem matcher reached the chat (some VS Code versions keep a task's problems in the Problems panel, away from extensions).",
          `To read what failed, run its command line with run_command: ${o.commandLine}`,
        ]
      : ['Its problem matcher reported no problems.'];
  if (o.hidden) lines.push(`${o.hidden} more in files the chat does not read were left out.`);
  lines.push("(Its output is in the task's terminal; the problems above are what VS Code parsed from it.)");
  return [head, ...lines].join('\n');
}

/** The same problem reported twice (the language server and the task's matcher both): kept once. */
export function distinctProblems(list: readonly Diagnosis[]): Diagnosis[] {
  const seen = new Set<string>();
  return list.filter((d) => {
    const k = `${d.path}\u0000${d.line}\u0000${d.severity}\u0000${d.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
