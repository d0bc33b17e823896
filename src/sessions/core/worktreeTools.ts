/**
 * A background agent's tools: the workspace file tools over its worktree (never the person's
 * folder), and run_command in it, under the runtime's one policy (`runtime/core/toolPolicy.ts`), as
 * in the chat: the path guard with the person's secret files and excludes (`.git` refused in any
 * form), sensitive edits always asked, commands by the deny and allow lists and the person's
 * auto-approval (Pause included), the command's folder followed through symlinks. Asking goes
 * through `ask`, which the host answers from a notification the person can answer later.
 */
import { RUN_COMMAND_TOOL } from '../../runtime/core/commandDefinition';
import { runCommandCall, type SandboxedOutcome, type SandboxState } from '../../runtime/core/commandCall';
import { CappedOutput } from '../../runtime/core/output';
import { runProcess } from '../../runtime/core/processRun';
import { editsRunUnasked, type Consent } from '../../runtime/core/toolPolicy';
import type { ToolRunner } from '../../runtime/core/engine';
import { UPDATE_PLAN } from '../../runtime/core/plan';
import type { CommandPolicy } from '../../tools/commandPolicy';
import { PathGuard, type ResolvedPath } from '../../tools/pathGuard';
import { sensitiveReasonOf } from '../../tools/sensitiveFiles';
import { TOOL_DEFINITIONS, WorkspaceTools, type ProposedEdit } from '../../tools/workspaceTools';

export type WorktreeQuestion =
  { kind: 'edit'; edit: ProposedEdit; sensitive?: string } | { kind: 'command'; line: string; reason: string; sandboxed?: boolean; network?: string[] };

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
  /** The sandbox now (the runtime's settings and this machine's support). */
  sandbox: () => Promise<SandboxState>;
  /** Runs a line in the sandbox, the worktree its only writable folder (`runtime/host/commandSandbox.ts`). */
  inSandbox: (
    guard: PathGuard,
    line: string,
    folder: ResolvedPath,
    hosts: readonly string[],
    o: { timeoutMs: number; signal?: AbortSignal },
  ) => Promise<SandboxedOutcome>;
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

/** run_command in the worktree: the runtime's one flow (`runtime/core/commandCall.ts`); its questions wait for the person. */
async function runCommand(o: WorktreeToolsOptions, guard: PathGuard, raw: string, signal?: AbortSignal) {
  const timeoutMs = o.timeoutSeconds() * 1000;
  return runCommandCall(
    raw,
    guard,
    o.policy(),
    o.consent(),
    await o.sandbox(),
    {
      timeoutSeconds: o.timeoutSeconds(),
      where: (folder) => (folder.rel === '' ? `the worktree (${o.name})` : folder.rel),
      ask: async (q, s) => ({
        accepted: await o.ask({ kind: 'command', line: q.line, reason: q.reason, sandboxed: q.sandboxed, ...(q.network ? { network: q.network } : {}) }, s),
      }),
      inSandbox: (line, folder, hosts, s) => o.inSandbox(guard, line, folder, hosts, { timeoutMs, ...(s ? { signal: s } : {}) }),
      outside: async (line, folder, s) => {
        const out = new CappedOutput();
        const started = Date.now();
        const r = await runProcess(line, { cwd: folder.abs, shell: o.shell, signal: s, timeoutMs, onData: (t) => out.append(t) });
        return { exitCode: r.exitCode, ...(r.ended ? { ended: r.ended } : {}), output: out.text(), via: 'process', ms: Date.now() - started };
      },
    },
    signal,
  );
}
