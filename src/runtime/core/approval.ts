/** A command, a tool call or an MCP server's sampling request waiting for the person's yes, as the approval bar shows it. */
export interface ActionRequest {
  kind: 'command' | 'tool' | 'sampling';
  /** The exact command line, the tool's name (`server › tool`), or the model a sampling request goes to. */
  action: string;
  /** The folder the command runs in, or the server the tool or request belongs to. */
  where: string;
  /** A tool call's arguments (JSON); a sampling request's messages (text). */
  args?: string;
  /** A sampling request: the most it can cost. */
  price?: string;
  /** Why it asks. */
  reason: string;
  /** What "Always allow" would allow from now on; absent: the button is not offered. */
  always?: string;
  /** A command: where it will run once allowed (absent where there is no sandbox). */
  place?: 'sandbox' | 'outside';
  /** A command: the hosts its network would be open to. */
  network?: string[];
}

export interface ActionDecision {
  accepted: boolean;
  /** The person chose "Always allow" (implies accepted). */
  always: boolean;
}

export interface ActionApprover {
  approveAction(request: ActionRequest, callId: string | undefined, signal?: AbortSignal): Promise<ActionDecision>;
}
