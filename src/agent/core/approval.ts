/** A command or a tool call waiting for the person's yes, as the approval bar shows it. */
export interface ActionRequest {
  kind: 'command' | 'tool';
  /** The exact command line, or the tool's name (`server › tool`). */
  action: string;
  /** The folder the command runs in, or the server the tool belongs to. */
  where: string;
  /** A tool call's arguments (JSON). */
  args?: string;
  /** Why it asks. */
  reason: string;
  /** What "Always allow" would allow from now on; absent: the button is not offered. */
  always?: string;
}

export interface ActionDecision {
  accepted: boolean;
  /** The person chose "Always allow" (implies accepted). */
  always: boolean;
}

export interface ActionApprover {
  approveAction(request: ActionRequest, callId: string | undefined, signal?: AbortSignal): Promise<ActionDecision>;
}
