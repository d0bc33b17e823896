import type { PathGuard } from '../../tools/pathGuard';
import { resolve } from 'node:path';
import { decideCommand } from '../../tools/commandPolicy';
import type { ToolResult } from '../../tools/workspaceTools';
import type { ActionApprover } from '../core/approval';
import { runsUnasked } from '../core/autoApproval';
import { RUN_COMMAND_TOOL } from '../core/commandDefinition';
import { runCommandCall, type CommandRunners } from '../core/commandCall';
import { commandPlace } from '../core/toolPolicy';
import { agentSettings, allowCommand } from './agentSettings';
import { runInSandbox, sandboxOnNow, sandboxSettings, sandboxState } from './commandSandbox';
import { objectArgs } from './toolCalls';
import type { AgentTerminals } from './terminalRunner';

export { RUN_COMMAND_TOOL };

export interface CommandToolDeps {
  guard: () => PathGuard;
  terminals: AgentTerminals;
  paused: () => boolean;
  log: (line: string) => void;
}

/** Whether a call of run_command would wait for the person (for the tool card's first status). */
export function commandNeedsApproval(args: string, paused: boolean, guard?: PathGuard): boolean {
  const line = commandOf(args);
  if (!line) return false;
  const { policy, auto } = agentSettings();
  const a = objectArgs(args);
  const cwd = a?.cwd;
  const root = guard?.folders[0]?.path;
  const d = decideCommand(
    line,
    policy,
    guard && root ? commandPlace(guard, typeof cwd === 'string' && cwd.trim() ? resolve(root, cwd) : root) : undefined,
  ).decision;
  if (d === 'refuse') return false;
  if (sandboxOnNow()) {
    // In the sandbox: asks only to go outside, for hosts up front, or when the person wants every command asked.
    if (a?.outside === true || (Array.isArray(a?.network) && a.network.length > 0)) return true;
    return paused || !auto.terminal || (d !== 'run' && !sandboxSettings().runUnasked);
  }
  return !runsUnasked({ kind: 'command', decision: d }, auto, paused);
}

function commandOf(args: string): string | undefined {
  const command = objectArgs(args)?.command;
  return typeof command === 'string' ? command.trim() : undefined;
}

/** run_command in the chat: the runtime's one flow (`core/commandCall.ts`), the person asked in the chat, the command shown in a terminal. */
export async function runCommandTool(
  deps: CommandToolDeps,
  rawArgs: string,
  approver: ActionApprover,
  callId: string | undefined,
  signal?: AbortSignal,
): Promise<ToolResult> {
  try {
    const { policy, auto, timeoutSeconds } = agentSettings();
    const guard = deps.guard();
    const where = (display: string) => (display === '.' ? 'workspace root' : display);
    const runners: CommandRunners = {
      timeoutSeconds,
      where: (f) => (f.display === '.' ? 'the workspace root' : f.display),
      log: deps.log,
      allow: allowCommand,
      ask: (q, s) =>
        approver.approveAction(
          {
            kind: 'command',
            action: q.line,
            where: where(q.folder.display),
            reason: q.reason,
            ...(q.always ? { always: q.always } : {}),
            ...(sandboxOnNow() ? { place: q.sandboxed ? ('sandbox' as const) : ('outside' as const) } : {}),
            ...(q.network?.length ? { network: q.network } : {}),
          },
          callId,
          s,
        ),
      outside: (line, folder, s) => deps.terminals.run(line, folder.abs, { ...(s ? { signal: s } : {}), timeoutMs: timeoutSeconds * 1000 }),
      inSandbox: (line, folder, hosts, s) =>
        deps.terminals.mirrored(
          line,
          { ...(s ? { signal: s } : {}), title: 'Model Gateway agent (sandbox)' },
          () => undefined,
          (stop, onData) => runInSandbox(guard, line, folder, hosts, { timeoutMs: timeoutSeconds * 1000, signal: stop, onData }),
        ),
    };
    return await runCommandCall(rawArgs, guard, policy, { auto, paused: deps.paused() }, await sandboxState(), runners, signal);
  } catch (err) {
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
