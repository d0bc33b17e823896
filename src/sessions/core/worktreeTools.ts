/**
 * A background agent's tools: the workspace file tools over its worktree (never the person's
 * folder), and run_command in it, under the runtime's one policy (`runtime/core/toolPolicy.ts`), as
 * in the chat: the path guard with the person's secret files and excludes (`.git` refused in any
 * form), sensitive edits always asked, commands by the deny and allow lists and the person's
 * auto-approval (Pause included), the command's folder followed through symlinks. Asking goes
 * through `ask`, which the host answers from a notification the person can answer later.
 */
import { RUN_COMMAND_TOOL } from '../../runtime/core/commandDefinition';
import { CappedOutput, describeOutcome } from '../../runtime/core/output';
import { runProcess } from '../../runtime/core/processRun';
import { decideCommandCall, editsRunUnasked, type Consent } from '../../runtime/core/toolPolicy';
import type { ToolRunner } from '../../runtime/core/engine';
import { UPDATE_PLAN } from '../../runtime/core/plan';
import type { CommandPolicy } from '../../tools/commandPolicy';
import { PathGuard } from '../../tools/pathGuard';
import { sensitiveReasonOf } from '../../tools/sensitiveFiles';
import { TOOL_DEFINITIONS, WorkspaceTools, type ProposedEdit, type ToolResult } from '../../tools/workspaceTools';

export type WorktreeQuestion = { kind: 'edit'; edit: ProposedEdit; sensitive?: string } | { kind: 'command'; line: string; reason: string };

export interface WorktreeToolsOptions {
  worktree: string;
  /** The name the worktree is shown by (its branch). */
  name: string;
  /** The workspace's exclude globs (files.exclude, search.exclude, the chat's extra ones). */
  excludes: readonly string[];
  /** `modelGateway.chat.secretFiles`: added to the built-in list of secret files. */
  secretFiles: readonly string[];
  /** What the person lets run without them (auto-approval, Pause), read at each call. */
  consent: () => Consent;
  policy: () => CommandPolicy;
  timeoutSeconds: () => number;
  /** Asks the person; resolves with their answer (however late). */
  ask: (question: WorktreeQuestion, signal?: AbortSignal) => Promise<boolean>;
  /** After an accepted edit reached the disk. */
  onWritten?: () => void;
  shell?: string;
}

export function worktreeTools(o: WorktreeToolsOptions): ToolRunner {
  const guard = new PathGuard([{ name: o.name, path: o.worktree }], o.excludes, o.secretFiles);
  const files = new WorkspaceTools(guard, {
    approver: {
      approve: async (edit, signal) => {
        if (editsRunUnasked([edit], o.consent())) return { accepted: true };
        const sensitive = sensitiveReasonOf(edit) ?? undefined;
        return { accepted: await o.ask({ kind: 'edit', edit, ...(sensitive ? { sensitive } : {}) }, signal) };
      },
    },
    onWritten: () => o.onWritten?.(),
  });
  const definitions = [...TOOL_DEFINITIONS, RUN_COMMAND_TOOL];
  const writes = new Set(TOOL_DEFINITIONS.filter((d) => d.kind === 'write').map((d) => d.name));
  return {
    definitions,
    needsApproval: (name) => name === RUN_COMMAND_TOOL.name || (writes.has(name) && !editsRunUnasked([], o.consent())),
    run: (name, args, signal) => {
      if (name === RUN_COMMAND_TOOL.name) return runCommand(o, guard, args, signal);
      if (name === UPDATE_PLAN.name)
        return Promise.resolve({ content: 'Plans are not kept in a background session: write the steps in your answer.', isError: false });
      if (!definitions.some((d) => d.name === name))
        return Promise.resolve({
          content: `Error: ${name} is not available in a background session (files of its worktree and run_command only).`,
          isError: true,
        });
      return files.run(name, args, signal);
    },
  };
}

async function runCommand(o: WorktreeToolsOptions, guard: PathGuard, raw: string, signal?: AbortSignal): Promise<ToolResult> {
  const verdict = await decideCommandCall(raw, guard, o.policy(), o.consent());
  if (verdict.kind === 'invalid') return { content: `Error: ${verdict.message}`, isError: true };
  if (verdict.kind === 'refuse') return { content: `Not run: ${verdict.reason}`, isError: true };
  const { line, folder, ask } = verdict;
  if (ask && !(await o.ask({ kind: 'command', line, reason: ask.reason }, signal)))
    return { content: `The person rejected running \`${line}\`; nothing ran.`, isError: true };
  const out = new CappedOutput();
  const started = Date.now();
  const r = await runProcess(line, { cwd: folder.abs, shell: o.shell, signal, timeoutMs: o.timeoutSeconds() * 1000, onData: (t) => out.append(t) });
  const where = folder.rel === '' ? `the worktree (${o.name})` : folder.rel;
  return {
    content: describeOutcome(
      line,
      where,
      { exitCode: r.exitCode, ended: r.ended, output: out.text(), via: 'process', ms: Date.now() - started },
      o.timeoutSeconds(),
    ),
    isError: r.ended !== undefined || (r.exitCode ?? 0) !== 0,
  };
}
