import * as l10n from '@vscode/l10n';
import { stat } from 'node:fs/promises';
import type { PathGuard } from '../../tools/pathGuard';
import { ToolError } from '../../tools/pathGuard';
import { resolve } from 'node:path';
import { decideCommand, type CommandPlace } from '../../tools/commandPolicy';
import type { ToolResult } from '../../tools/workspaceTools';
import type { ActionApprover } from '../core/approval';
import { runsUnasked } from '../core/autoApproval';
import { describeOutcome } from '../core/output';
import { RUN_COMMAND_TOOL } from '../core/commandDefinition';
import { agentSettings, allowCommand } from './settings';
import { objectArgs } from './toolCalls';
import type { AgentTerminals } from './terminalRunner';


export { RUN_COMMAND_TOOL };

const MAX_LINE = 8000;

export interface CommandToolDeps {
  guard: () => PathGuard;
  terminals: AgentTerminals;
  paused: () => boolean;
  log: (line: string) => void;
}

/** Where a line runs, for the policy: paths its arguments name outside these folders (or secret files) make it ask. */
export function commandPlace(guard: PathGuard, cwd: string): CommandPlace {
  return { cwd, roots: guard.folders.map((f) => f.path), isSecret: (p) => guard.isSecret(p.replace(/^[A-Za-z]:/, '').replace(/^\/+/, '')) };
}

/** Whether a call of run_command would wait for the person (for the tool card's first status). */
export function commandNeedsApproval(args: string, paused: boolean, guard?: PathGuard): boolean {
  const line = commandOf(args);
  if (!line) return false;
  const { policy, auto } = agentSettings();
  const cwd = objectArgs(args)?.cwd;
  const root = guard?.folders[0]?.path;
  const d = decideCommand(line, policy, guard && root ? commandPlace(guard, typeof cwd === 'string' && cwd.trim() ? resolve(root, cwd) : root) : undefined).decision;
  return d !== 'refuse' && !runsUnasked({ kind: 'command', decision: d }, auto, paused);
}

function commandOf(args: string): string | undefined {
  const command = objectArgs(args)?.command;
  return typeof command === 'string' ? command.trim() : undefined;
}

/** run_command: the policy decides, the person approves what it does not allow, the terminal runs it. */
export async function runCommandTool(deps: CommandToolDeps, rawArgs: string, approver: ActionApprover, callId: string | undefined, signal?: AbortSignal): Promise<ToolResult> {
  try {
    const args = JSON.parse(rawArgs || '{}') as { command?: unknown; cwd?: unknown };
    if (typeof args.command !== 'string' || !args.command.trim()) throw new ToolError('Missing the "command" argument (the command line to run).');
    if (args.cwd !== undefined && args.cwd !== null && typeof args.cwd !== 'string') throw new ToolError('"cwd" must be a string (a folder relative to the workspace root).');
    const line = args.command.trim();
    if (line.length > MAX_LINE) throw new ToolError(`The command line is ${line.length} characters; at most ${MAX_LINE}.`);
    const folder = await deps.guard().resolve(typeof args.cwd === 'string' && args.cwd.trim() ? args.cwd : '.');
    if (!(await stat(folder.abs).then((s) => s.isDirectory(), () => false))) throw new ToolError(`"${folder.display}" is not a folder of the workspace.`);
    const { policy, auto, timeoutSeconds } = agentSettings();
    const guard = deps.guard();
    const place = commandPlace(guard, folder.abs);
    const decision = decideCommand(line, policy, place);
    if (decision.decision === 'refuse') {
      deps.log(`agent: refused to run a command (${decision.reason})`);
      return { content: `Refused, not run: ${decision.reason} (modelGateway.agent.deniedCommands). Do not try to get around this; tell the person what you wanted to run and why.`, isError: true };
    }
    if (!runsUnasked({ kind: 'command', decision: decision.decision }, auto, deps.paused())) {
      // "Always allow" only where allowing this line would let it run (one plain command).
      const offer = decideCommand(line, { allow: [line], deny: policy.deny }, place).decision === 'run' ? line : undefined;
      const reason = deps.paused() ? l10n.t('auto-approval is paused') : !auto.terminal ? l10n.t('every command asks (modelGateway.agent.autoApprove.terminal is off)') : decision.reason;
      const answer = await approver.approveAction({ kind: 'command', action: line, where: folder.display === '.' ? 'workspace root' : folder.display, reason, ...(offer ? { always: offer } : {}) }, callId, signal);
      if (!answer.accepted) return { content: `The person rejected running \`${line}\`; it was not run.`, isError: true };
      if (answer.always && offer) await allowCommand(offer);
    }
    deps.log(`agent: running a command in ${folder.display}`);
    const outcome = await deps.terminals.run(line, folder.abs, { signal, timeoutMs: timeoutSeconds * 1000 });
    deps.log(`agent: the command ended (${outcome.ended ?? `exit ${outcome.exitCode ?? '?'}`}, ${outcome.via}, ${outcome.ms} ms)`);
    return { content: describeOutcome(line, folder.display === '.' ? 'the workspace root' : folder.display, outcome, timeoutSeconds), isError: outcome.ended !== undefined || (outcome.exitCode ?? 0) !== 0 };
  } catch (err) {
    if (err instanceof SyntaxError) return { content: `Error: the arguments are not a JSON object.`, isError: true };
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
