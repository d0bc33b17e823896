import * as vscode from 'vscode';
import type { ActionApprover } from '../../runtime/core/approval';
import { runsUnasked, type ToolCategory } from '../../runtime/core/autoApproval';
import { commandPlace } from '../../runtime/core/toolPolicy';
import { agentSettings } from '../../runtime/host/agentSettings';
import { objectArgs } from '../../runtime/host/toolCalls';
import type { ToolSource } from '../../runtime/host/toolbox';
import { decideCommand } from '../../tools/commandPolicy';
import type { PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import { bySeverity, type Diagnosis } from '../core/problems';
import { distinctProblems, findTask, RUN_TASK, TASK_LIMITS, taskCommandLine, taskListText, taskResultText, type TaskInfo } from '../core/tasks';
import { diagnosisOf, LineReader, VisiblePaths } from './visible';
import { counted } from '../../shell/listeners';

/** After the task ended, its problem matcher's markers arrive: this long without a change ends the wait. */
const QUIET_MS = 300;
const AFTER_END_MAX_MS = 3000;

type HostTask = TaskInfo & { task: vscode.Task; env: string[]; fromWorkspaceFile: boolean };

function describe(task: vscode.Task): HostTask {
  const exec = task.execution;
  let commandLine: string | undefined;
  let env: string[] = [];
  const text = (v: string | vscode.ShellQuotedString) => (typeof v === 'string' ? v : v.value);
  if (exec instanceof vscode.ShellExecution) {
    commandLine = exec.commandLine ?? (exec.command !== undefined ? taskCommandLine(text(exec.command), exec.args?.map(text), false) : undefined);
    env = Object.keys(exec.options?.env ?? {});
  } else if (exec instanceof vscode.ProcessExecution) {
    commandLine = taskCommandLine(exec.process, exec.args, false);
    env = Object.keys(exec.options?.env ?? {});
  }
  const fromWorkspaceFile = task.source === 'Workspace';
  return {
    label: task.name,
    source: fromWorkspaceFile ? 'tasks.json' : task.source,
    ...(commandLine ? { commandLine } : {}),
    background: task.isBackground,
    task,
    env,
    fromWorkspaceFile,
  };
}

/**
 * `run_task`: a task of the workspace by its label, through VS Code's task system (so its problem
 * matcher runs), approved as a command is. A task defined in the workspace's own tasks.json always
 * asks: its definition can run more than the line shows (`dependsOn`, `env`, a shell of its own),
 * and the repository wrote it. A detected task (an npm script) runs unasked only where the same line
 * would as a command: on the person's allow list, with no environment of its own.
 */
export class TaskTool implements ToolSource {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('taskTool.onDidChange', this.changed.event);

  constructor(
    private readonly guard: () => PathGuard,
    private readonly log: (line: string) => void,
  ) {}

  definitions(): ToolDefinition[] {
    return [RUN_TASK];
  }

  owns(name: string): boolean {
    return name === RUN_TASK.name;
  }

  category(): ToolCategory {
    // The line is known only once the task is looked up: the card starts as asking.
    return { kind: 'command', decision: 'ask' };
  }

  async tasks(): Promise<HostTask[]> {
    return (await vscode.tasks.fetchTasks()).map(describe);
  }

  async run(
    _name: string,
    rawArgs: string,
    approver: ActionApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    paused: boolean,
  ): Promise<ToolResult> {
    const label = objectArgs(rawArgs)?.label;
    if (typeof label !== 'string' || !label.trim()) return fail('Error: missing the "label" argument (the task\'s label).');
    if (!vscode.workspace.isTrusted)
      return fail('Error: this workspace is not trusted, so its tasks do not run. The person can trust it (Manage Workspace Trust) if they mean to.');
    const all = await this.tasks();
    const found = findTask(all, label);
    if (!found) return fail(taskListText(all, label));
    if (found.background)
      return fail(
        `Error: task "${found.label}" is a background (watch) task that does not end; run_task runs tasks that end. Use get_problems to read what it reports.`,
      );
    const { policy, auto, timeoutSeconds } = agentSettings();
    const scope = found.task.scope;
    const guard = this.guard();
    const cwd = typeof scope === 'object' ? scope.uri.fsPath : (guard.folders[0]?.path ?? '/');
    const decision = found.commandLine
      ? decideCommand(found.commandLine, policy, commandPlace(guard, cwd))
      : { decision: 'ask' as const, reason: vscode.l10n.t('it runs no command line VS Code can show') };
    if (decision.decision === 'refuse')
      return fail(`Refused, not run: task "${found.label}" runs ${found.commandLine}, and ${decision.reason} (modelGateway.agent.deniedCommands).`);
    const why = found.fromWorkspaceFile
      ? vscode.l10n.t("a task from the workspace's tasks.json always asks (its definition can do more than its command line shows)")
      : found.env.length
        ? vscode.l10n.t('the task sets its own environment ({0})', found.env.join(', '))
        : decision.reason;
    const unasked = !found.fromWorkspaceFile && found.env.length === 0 && runsUnasked({ kind: 'command', decision: decision.decision }, auto, paused);
    if (!unasked) {
      const where =
        typeof scope === 'object'
          ? vscode.l10n.t('task "{0}" ({1}, {2})', found.label, found.source, scope.name)
          : vscode.l10n.t('task "{0}" ({1})', found.label, found.source);
      const reason = paused
        ? vscode.l10n.t('auto-approval is paused')
        : !auto.terminal
          ? vscode.l10n.t('every command asks (modelGateway.agent.autoApprove.terminal is off)')
          : why;
      const env = found.env.length ? ` [environment: ${found.env.join(', ')}]` : '';
      const answer = await approver.approveAction(
        { kind: 'command', action: `${found.commandLine ?? `(task "${found.label}")`}${env}`, where, reason },
        callId,
        signal,
      );
      if (!answer.accepted) return fail(`The person rejected running task "${found.label}"; it was not run.`);
    }
    return this.execute(found, timeoutSeconds * 1000, signal);
  }

  private async execute(found: HostTask, timeoutMs: number, signal: AbortSignal | undefined): Promise<ToolResult> {
    const changed = new Map<string, vscode.Uri>();
    let lastChange = 0;
    const watching = vscode.languages.onDidChangeDiagnostics((e) => {
      for (const u of e.uris) changed.set(u.toString(), u);
      lastChange = performance.now();
    });
    const started = performance.now();
    try {
      this.log(`agent: running task "${found.label}"`);
      const execution = await vscode.tasks.executeTask(found.task);
      const { exitCode, ended } = await untilEnded(execution, timeoutMs, signal);
      // The problem matcher's markers land after the task's end: wait for them and a quiet spell after
      // (bounded; a task that failed is given longer, since it likely reported something).
      const endedAt = performance.now();
      const deadline = endedAt + (exitCode === 0 && !ended ? QUIET_MS * 2 : AFTER_END_MAX_MS);
      while (performance.now() < deadline && !(lastChange > endedAt && performance.now() - lastChange >= QUIET_MS)) await new Promise((r) => setTimeout(r, 50));
      const ms = performance.now() - started;
      this.log(
        `agent: task "${found.label}" ended (${ended ?? `exit ${exitCode ?? '?'}`}, ${Math.round(ms)} ms; problems changed in ${changed.size} files, the last ${lastChange ? Math.round(lastChange - endedAt) : '-'} ms after the end)`,
      );
      const { problems, hidden } = await this.problemsIn([...changed.values()]);
      return {
        content: taskResultText({
          label: found.label,
          ...(found.commandLine ? { commandLine: found.commandLine } : {}),
          exitCode,
          ms,
          ...(ended ? { ended } : {}),
          problems,
          hidden,
        }),
        isError: ended !== undefined || (exitCode ?? 0) !== 0,
      };
    } catch (err) {
      return fail(`Error: task "${found.label}" could not run: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      watching.dispose();
    }
  }

  /** The errors and warnings now in the files whose problems changed while the task ran, through the path guard. */
  private async problemsIn(uris: vscode.Uri[]): Promise<{ problems: Diagnosis[]; hidden: number }> {
    const paths = new VisiblePaths(this.guard());
    const lines = new LineReader();
    const found: (Diagnosis & { uri: vscode.Uri })[] = [];
    let hidden = 0;
    for (const uri of uris) {
      const list = vscode.languages.getDiagnostics(uri).filter((d) => d.severity <= vscode.DiagnosticSeverity.Warning);
      if (list.length === 0) continue;
      const display = await paths.of(uri);
      if (!display) {
        hidden += list.length;
        continue;
      }
      for (const d of list) found.push({ ...diagnosisOf(display, d), uri });
    }
    const problems = distinctProblems(found.sort(bySeverity)) as (Diagnosis & { uri: vscode.Uri })[];
    for (const d of problems.slice(0, TASK_LIMITS.problems)) d.lineText = await lines.line(d.uri, d.line);
    return { problems: problems.map(({ uri: _u, ...d }) => d), hidden };
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The task's end: its process's exit code when it had one; stopped at the time limit or when the turn was stopped. */
function untilEnded(
  execution: vscode.TaskExecution,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{ exitCode: number | undefined; ended?: 'timeout' | 'stopped' }> {
  return new Promise((resolve) => {
    let exitCode: number | undefined;
    let ended: 'timeout' | 'stopped' | undefined;
    const stop = (why: 'timeout' | 'stopped') => {
      ended ??= why;
      execution.terminate();
    };
    const onAbort = () => stop('stopped');
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const subs = [
      vscode.tasks.onDidEndTaskProcess((e) => {
        if (same(e.execution, execution)) exitCode = e.exitCode;
      }),
      vscode.tasks.onDidEndTask((e) => {
        if (!same(e.execution, execution)) return;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        for (const s of subs) s.dispose();
        resolve({ exitCode, ...(ended ? { ended } : {}) });
      }),
    ];
  });
}

/** The same execution (the API hands the same object; a task of the same name and source is the same run). */
function same(a: vscode.TaskExecution, b: vscode.TaskExecution): boolean {
  return a === b || (a.task.name === b.task.name && a.task.source === b.task.source);
}

function fail(content: string): ToolResult {
  return { content, isError: true };
}
