/**
 * A background agent's tools: the workspace file tools over its worktree (never the person's
 * folder), and run_command in it. Edits are written as the person's auto-approval says (else
 * asked); a command the policy refuses is refused, one it does not allow is asked. Asking goes
 * through `ask`, which the host answers from a notification the person can answer later.
 */
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { RUN_COMMAND_TOOL } from '../../agent/core/commandDefinition';
import { CappedOutput, describeOutcome } from '../../agent/core/output';
import { runProcess } from '../../agent/core/processRun';
import type { ToolRunner } from '../../chat/core/engine';
import { UPDATE_PLAN } from '../../chat/core/plan';
import { decideCommand, type CommandPolicy } from '../../tools/commandPolicy';
import { TOOL_DEFINITIONS, WorkspaceTools, type ProposedEdit, type ToolResult } from '../../tools/workspaceTools';

export interface WorktreeToolsOptions {
  worktree: string;
  /** The name the worktree is shown by (its branch). */
  name: string;
  excludes: readonly string[];
  /** Edits are written without asking (the person's auto-approval of edits). */
  editsUnasked: () => boolean;
  policy: () => CommandPolicy;
  timeoutSeconds: () => number;
  /** Asks the person; resolves with their answer (however late). */
  ask: (question: { kind: 'edit'; edit: ProposedEdit } | { kind: 'command'; line: string; reason: string }, signal?: AbortSignal) => Promise<boolean>;
  /** After an accepted edit reached the disk. */
  onWritten?: () => void;
  shell?: string;
}

export function worktreeTools(o: WorktreeToolsOptions): ToolRunner {
  const files = WorkspaceTools.forFolders([{ name: o.name, path: o.worktree }], [...o.excludes], {
    approver: { approve: async (edit, signal) => ({ accepted: o.editsUnasked() || (await o.ask({ kind: 'edit', edit }, signal)) }) },
    onWritten: () => o.onWritten?.(),
  });
  const definitions = [...TOOL_DEFINITIONS, RUN_COMMAND_TOOL];
  return {
    definitions,
    needsApproval: (name) => name === RUN_COMMAND_TOOL.name || (!o.editsUnasked() && definitions.some((d) => d.name === name && d.kind === 'write')),
    run: (name, args, signal) => {
      if (name === RUN_COMMAND_TOOL.name) return runCommand(o, args, signal);
      if (name === UPDATE_PLAN.name) return Promise.resolve({ content: 'Plans are not kept in a background session: write the steps in your answer.', isError: false });
      if (!definitions.some((d) => d.name === name)) return Promise.resolve({ content: `Error: ${name} is not available in a background session (files of its worktree and run_command only).`, isError: true });
      return files.run(name, args, signal);
    },
  };
}

async function runCommand(o: WorktreeToolsOptions, raw: string, signal?: AbortSignal): Promise<ToolResult> {
  let args: { command?: unknown; cwd?: unknown };
  try {
    args = JSON.parse(raw || '{}') as typeof args;
  } catch {
    return { content: 'Error: the arguments are not JSON.', isError: true };
  }
  const line = typeof args.command === 'string' ? args.command.trim() : '';
  if (!line) return { content: 'Error: missing the "command" argument.', isError: true };
  const cwd = resolve(o.worktree, typeof args.cwd === 'string' && args.cwd.trim() ? args.cwd : '.');
  if (cwd !== o.worktree && !cwd.startsWith(`${o.worktree}/`)) return { content: 'Error: "cwd" must be a folder of the worktree.', isError: true };
  if (!(await stat(cwd).then((s) => s.isDirectory(), () => false))) return { content: `Error: "${args.cwd as string}" is not a folder of the worktree.`, isError: true };
  const d = decideCommand(line, o.policy(), { cwd, roots: [o.worktree] });
  if (d.decision === 'refuse') return { content: `Not run: ${d.reason}`, isError: true };
  // A background session asks for every command the allow list does not cover: the person is not watching it run.
  if (d.decision !== 'run' && !(await o.ask({ kind: 'command', line, reason: d.reason }, signal))) return { content: `The person rejected running \`${line}\`; nothing ran.`, isError: true };
  const out = new CappedOutput();
  const started = Date.now();
  const r = await runProcess(line, { cwd, shell: o.shell, signal, timeoutMs: o.timeoutSeconds() * 1000, onData: (t) => out.append(t) });
  const folder = cwd === o.worktree ? `the worktree (${o.name})` : cwd.slice(o.worktree.length + 1);
  return { content: describeOutcome(line, folder, { exitCode: r.exitCode, ended: r.ended, output: out.text(), via: 'process', ms: Date.now() - started }, o.timeoutSeconds()), isError: r.ended !== undefined || (r.exitCode ?? 0) !== 0 };
}
