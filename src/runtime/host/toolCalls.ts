import * as l10n from '@vscode/l10n';
import type { ActionApprover } from '../core/approval';
import { runsUnasked } from '../core/autoApproval';
import { agentSettings, allowTool } from './agentSettings';

/** A tool call's arguments as an object, or undefined when they are not a JSON object. */
export function objectArgs(raw: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(raw || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A read that must ask (the person turned reads' auto-approval off, or paused it): the chat's bar
 * with the tool and its arguments. True: it may run.
 */
export async function approveRead(o: {
  name: string;
  args: string;
  approver: ActionApprover;
  callId: string | undefined;
  signal: AbortSignal | undefined;
  paused: boolean;
}): Promise<boolean> {
  const answer = await o.approver.approveAction(
    {
      kind: 'tool',
      action: o.name,
      where: l10n.t('workspace'),
      args: o.args,
      reason: o.paused ? l10n.t('auto-approval is paused') : l10n.t('reads ask (modelGateway.agent.autoApprove.readOnly is off)'),
    },
    o.callId,
    o.signal,
  );
  return answer.accepted;
}

/**
 * A call of a server's tool (an MCP server's, or another extension's): unasked when
 * `autoApprove.mcp` lists the server or `server/tool` (and nothing is paused), else the chat's bar
 * with server, tool and arguments; "Always allow" lists `server/tool`. True: it may run.
 */
export async function approveToolCall(o: {
  server: string;
  tool: string;
  where: string;
  args: Record<string, unknown>;
  /** Why it asks when not paused. */
  reason: string;
  approver: ActionApprover;
  callId: string | undefined;
  signal: AbortSignal | undefined;
  paused: boolean;
}): Promise<boolean> {
  if (runsUnasked({ kind: 'tool', server: o.server, tool: o.tool }, agentSettings().auto, o.paused)) return true;
  const entry = `${o.server}/${o.tool}`;
  const answer = await o.approver.approveAction(
    {
      kind: 'tool',
      action: `${o.server} › ${o.tool}`,
      where: o.where,
      args: JSON.stringify(o.args),
      reason: o.paused ? l10n.t('auto-approval is paused') : o.reason,
      always: entry,
    },
    o.callId,
    o.signal,
  );
  if (answer.always) await allowTool(entry);
  return answer.accepted;
}
