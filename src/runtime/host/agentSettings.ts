import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { userValue } from '../../shell/config';
import { numberSetting } from '../../shell/settingsSchema';
import { DEFAULT_DENY, type CommandPolicy } from '../../tools/commandPolicy';
import { DEFAULT_AUTO_APPROVAL, type AutoApproval } from '../core/autoApproval';
import type { Consent } from '../core/toolPolicy';

const Strings = z.catch(z.array(z.string()), []);
const AutoApprovalSetting = z.catch(
  z.object({
    readOnly: z.optional(z.boolean()),
    edits: z.optional(z.boolean()),
    terminal: z.optional(z.boolean()),
    mcp: z.optional(z.array(z.string())),
    paidMedia: z.optional(z.boolean()),
  }),
  {},
);

function clean(list: string[]): string[] {
  return [...new Set(list.map((s) => s.trim().replace(/\s+/g, ' ')).filter(Boolean))];
}

/**
 * The agent's settings. What widens what runs unasked (the allow list, auto-approval) comes from
 * the user's settings only: a cloned repository cannot let its own commands run. The deny list is
 * the user's (or the defaults), and a workspace can only add to it.
 */
export function agentSettings(): { policy: CommandPolicy; auto: AutoApproval; timeoutSeconds: number } {
  const c = vscode.workspace.getConfiguration('modelGateway.agent');
  const deny = c.inspect<unknown>('deniedCommands');
  const userDeny = deny?.globalValue === undefined ? DEFAULT_DENY : Strings.parse(deny.globalValue);
  const auto = AutoApprovalSetting.parse(userValue(c, 'autoApprove'));
  return {
    policy: {
      allow: clean(Strings.parse(userValue(c, 'allowedCommands'))),
      deny: clean([...userDeny, ...Strings.parse(deny?.workspaceValue), ...Strings.parse(deny?.workspaceFolderValue)]),
    },
    auto: {
      readOnly: auto.readOnly ?? DEFAULT_AUTO_APPROVAL.readOnly,
      edits: auto.edits ?? DEFAULT_AUTO_APPROVAL.edits,
      terminal: auto.terminal ?? DEFAULT_AUTO_APPROVAL.terminal,
      mcp: clean(auto.mcp ?? []),
      paidMedia: auto.paidMedia ?? DEFAULT_AUTO_APPROVAL.paidMedia,
    },
    timeoutSeconds: numberSetting('modelGateway.agent.commandTimeoutSeconds', c.get('commandTimeoutSeconds')),
  };
}

/** Adds a line to the user's allow list (the person chose "Always allow" for it). */
export async function allowCommand(line: string): Promise<void> {
  const c = vscode.workspace.getConfiguration('modelGateway.agent');
  const now = Strings.parse(userValue(c, 'allowedCommands'));
  if (now.includes(line)) return;
  await c.update('allowedCommands', [...now, line], vscode.ConfigurationTarget.Global);
}

/** Adds `server` or `server/tool` to the user's MCP auto-approval. */
export async function allowTool(entry: string): Promise<void> {
  const c = vscode.workspace.getConfiguration('modelGateway.agent');
  const now = AutoApprovalSetting.parse(userValue(c, 'autoApprove'));
  const mcp = now.mcp ?? [];
  if (mcp.includes(entry)) return;
  await c.update('autoApprove', { ...now, mcp: [...mcp, entry] }, vscode.ConfigurationTarget.Global);
}

/** Where Pause is kept (the person's, across windows): while set, everything asks, on every surface. */
const PAUSED_KEY = 'modelGateway.agent.paused';

export function autoApprovalPaused(state: vscode.Memento): boolean {
  return state.get<boolean>(PAUSED_KEY, false);
}

export function setAutoApprovalPaused(state: vscode.Memento, paused: boolean): Thenable<void> {
  return state.update(PAUSED_KEY, paused);
}

/** What the person lets run without them now, for every surface's tools (`runtime/core/toolPolicy.ts`). */
export function consentNow(globalState: vscode.Memento): Consent {
  return { auto: agentSettings().auto, paused: autoApprovalPaused(globalState) };
}

/** A background session's cost limit in dollars (0: none), from the user's settings only: a cloned repository cannot raise it. */
export function sessionCostLimit(): number {
  return numberSetting(
    'modelGateway.agent.maxCostPerSessionDollars',
    userValue(vscode.workspace.getConfiguration('modelGateway.agent'), 'maxCostPerSessionDollars'),
  );
}
