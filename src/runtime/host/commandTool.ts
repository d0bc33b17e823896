import type { PathGuard } from '../../tools/pathGuard';
import { resolve } from 'node:path';
import { decideCommand } from '../../tools/commandPolicy';
import type { ToolResult } from '../../tools/workspaceTools';
import type { ActionApprover } from '../core/approval';
import { runsUnasked } from '../core/autoApproval';
import { describeOutcome } from '../core/output';
import { RUN_COMMAND_TOOL } from '../core/commandDefinition';
import { commandPlace, decideCommandCall } from '../core/toolPolicy';
import { agentSettings, allowCommand } from './agentSettings';
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
  const cwd = objectArgs(args)?.cwd;
  const root = guard?.folders[0]?.path;
  const d = decideCommand(
    line,
    policy,
    guard && root ? commandPlace(guard, typeof cwd === 'string' && cwd.trim() ? resolve(root, cwd) : root) : undefined,
  ).decision;
  return d !== 'refuse' && !runsUnasked({ kind: 'command', decision: d }, auto, paused);
}

function commandOf(args: string): string | undefined {
  const command = objectArgs(args)?.command;
  return typeof command === 'string' ? command.trim() : undefined;
}

/** run_command: the runtime's policy decides, the person approves what it does not allow, the terminal runs it. */
export async function runCommandTool(
  deps: CommandToolDeps,
  rawArgs: string,
  approver: ActionApprover,
  callId: string | undefined,
  signal?: AbortSignal,
): Promise<ToolResult> {
  try {
    const { policy, auto, timeoutSeconds } = agentSettings();
    const verdict = await decideCommandCall(rawArgs, deps.guard(), policy, { auto, paused: deps.paused() });
    if (verdict.kind === 'invalid') return { content: `Error: ${verdict.message}`, isError: true };
    if (verdict.kind === 'refuse') {
      deps.log(`agent: refused to run a command (${verdict.reason})`);
      return {
        content: `Refused, not run: ${verdict.reason} (modelGateway.agent.deniedCommands). Do not try to get around this; tell the person what you wanted to run and why.`,
        isError: true,
      };
    }
    const { line, folder, ask } = verdict;
    if (ask) {
      const answer = await approver.approveAction(
        {
          kind: 'command',
          action: line,
          where: folder.display === '.' ? 'workspace root' : folder.display,
          reason: ask.reason,
          ...(ask.always ? { always: ask.always } : {}),
        },
        callId,
        signal,
      );
      if (!answer.accepted) return { content: `The person rejected running \`${line}\`; it was not run.`, isError: true };
      if (answer.always && ask.always) await allowCommand(ask.always);
    }
    deps.log(`agent: running a command in ${folder.display}`);
    const outcome = await deps.terminals.run(line, folder.abs, { signal, timeoutMs: timeoutSeconds * 1000 });
    deps.log(`agent: the command ended (${outcome.ended ?? `exit ${outcome.exitCode ?? '?'}`}, ${outcome.via}, ${outcome.ms} ms)`);
    return {
      content: describeOutcome(line, folder.display === '.' ? 'the workspace root' : folder.display, outcome, timeoutSeconds),
      isError: outcome.ended !== undefined || (outcome.exitCode ?? 0) !== 0,
    };
  } catch (err) {
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
