/**
 * The one policy for the tools of every surface that runs a model (the chat, background agents,
 * subagents, VS Code's chat): what may run without the person, what must ask, what is refused.
 * Each surface declares what it may do (its tools, whether it can ask); the rules are here once.
 *
 * - Edits run unasked only with the person's auto-approval of edits on, nothing paused, and no
 *   sensitive file among them (`.vscode/`, CI, hooks, `package.json` scripts, `.modelgateway/`):
 *   those always ask, with their diff.
 * - A command: the policy refuses what the deny list names; it runs unasked only when every command
 *   of the line is allowed and the terminal's auto-approval is on and nothing is paused; else it
 *   asks. Its folder goes through the path guard (a symlink out of the workspace is refused).
 */
import * as l10n from '@vscode/l10n';
import { stat } from 'node:fs/promises';
import { decideCommand, type CommandPlace, type CommandPolicy } from '../../tools/commandPolicy';
import { ToolError, type PathGuard, type ResolvedPath } from '../../tools/pathGuard';
import { sensitiveReasonOf } from '../../tools/sensitiveFiles';
import type { ProposedEdit } from '../../tools/workspaceTools';
import { runsUnasked, type AutoApproval } from './autoApproval';

/** What the person allowed to run without them, and whether they paused it. */
export interface Consent {
  auto: AutoApproval;
  paused: boolean;
}

/** Whether proposed edits may be written without the person's Accept. */
export function editsRunUnasked(edits: readonly Pick<ProposedEdit, 'path' | 'before' | 'after'>[], consent: Consent): boolean {
  return runsUnasked({ kind: 'edit' }, consent.auto, consent.paused) && !edits.some((e) => sensitiveReasonOf(e));
}

/** Where a line runs, for the policy: paths its arguments name outside these folders (or secret files) make it ask. */
export function commandPlace(guard: PathGuard, cwd: string): CommandPlace {
  return { cwd, roots: guard.folders.map((f) => f.path), isSecret: (p) => guard.isSecret(p.replace(/^[A-Za-z]:/, '').replace(/^\/+/, '')) };
}

/** The longest command line a tool call may carry. */
export const MAX_COMMAND_LINE = 8000;

export type CommandVerdict =
  | { kind: 'invalid'; message: string }
  | { kind: 'refuse'; line: string; reason: string }
  | {
      kind: 'run';
      line: string;
      /** The folder it runs in, resolved by the path guard (its real location). */
      folder: ResolvedPath;
      place: CommandPlace;
      /** Present when the person must be asked first: why, and the line "Always allow" would add. */
      ask?: { reason: string; always?: string };
    };

/** A run_command call decided: its arguments checked, its folder resolved, the policy and the person's consent applied. */
export async function decideCommandCall(rawArgs: string, guard: PathGuard, policy: CommandPolicy, consent: Consent): Promise<CommandVerdict> {
  let args: { command?: unknown; cwd?: unknown };
  try {
    args = JSON.parse(rawArgs || '{}') as typeof args;
  } catch {
    return { kind: 'invalid', message: 'the arguments are not a JSON object.' };
  }
  if (typeof args.command !== 'string' || !args.command.trim())
    return { kind: 'invalid', message: 'Missing the "command" argument (the command line to run).' };
  if (args.cwd !== undefined && args.cwd !== null && typeof args.cwd !== 'string')
    return { kind: 'invalid', message: '"cwd" must be a string (a folder relative to the workspace root).' };
  const line = args.command.trim();
  if (line.length > MAX_COMMAND_LINE) return { kind: 'invalid', message: `The command line is ${line.length} characters; at most ${MAX_COMMAND_LINE}.` };
  let folder: ResolvedPath;
  try {
    // Through the guard: no `..`, no symlink that leads out, nothing secret or ignored.
    folder = await guard.resolve(typeof args.cwd === 'string' && args.cwd.trim() ? args.cwd : '.');
  } catch (err) {
    return { kind: 'invalid', message: err instanceof ToolError ? err.message : String(err) };
  }
  if (
    !(await stat(folder.abs).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return { kind: 'invalid', message: `"${folder.display}" is not a folder of the workspace.` };
  const place = commandPlace(guard, folder.abs);
  const decision = decideCommand(line, policy, place);
  if (decision.decision === 'refuse') return { kind: 'refuse', line, reason: decision.reason };
  if (runsUnasked({ kind: 'command', decision: decision.decision }, consent.auto, consent.paused)) return { kind: 'run', line, folder, place };
  // "Always allow" only where allowing this line would let it run (one plain command).
  const always = decideCommand(line, { allow: [line], deny: policy.deny }, place).decision === 'run' ? line : undefined;
  const reason = consent.paused
    ? l10n.t('auto-approval is paused')
    : !consent.auto.terminal
      ? l10n.t('every command asks (modelGateway.agent.autoApprove.terminal is off)')
      : decision.reason;
  return { kind: 'run', line, folder, place, ask: { reason, ...(always ? { always } : {}) } };
}
