/** How a request uses the model's context window (shared by the engine, the host and the view). */

export interface ContextParts {
  system: number;
  tools: number;
  history: number;
  toolResults: number;
  images: number;
}

export interface ContextUse {
  used: number;
  window: number;
  parts: ContextParts;
  /** What budgeting changed in what is sent (0s when it all fit). */
  cut: number;
  stubbed: number;
  omittedTurns: number;
  /** Stored turns a model-written summary stands for in what is sent. */
  condensedTurns?: number;
  /** True once the gateway's usage replaced the estimate (after a reply). */
  reported?: boolean;
  /** The project's rules files in the system prompt, with their estimated tokens (and the memory's scopes, `memory` set). */
  rules?: { path: string; tokens: number; memory?: boolean }[];
  /** The tools the request carried, and those it left to be found with `find_tools`. */
  toolsOffered?: number;
  toolsDeferred?: number;
}
