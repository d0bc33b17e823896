import { approveRead } from '../../runtime/host/toolCalls';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { AssistantTurn, SubagentRun } from '../../common/conversation';
import { RENAME_SYMBOL } from '../../editor/core/rename';
import type { EditorInsight } from '../../editor/host/feature';
import type { SearchService } from '../../search/host/searchService';
import { SEMANTIC_SEARCH_TOOL } from '../../search/host/searchService';
import type { PathGuard } from '../../tools/pathGuard';
import { TOOL_DEFINITIONS, type ToolDefinition, type ToolResult } from '../../tools/workspaceTools';
import type { ToolRunner } from '../../runtime/core/engine';
import type { BuiltInMode } from '../../runtime/core/modes';
import { parsePlan, planSummary, UPDATE_PLAN } from '../../runtime/core/plan';
import { MEMORY_TOOL } from '../../runtime/core/memory';
import { newSubagentRun, parseSubagentArgs, RUN_SUBAGENT } from '../../runtime/core/subagents';
import { FIND_TOOLS, type ToolOffer } from '../../runtime/core/toolOffer';
import type { DiffApprover } from './approvals';
import { callOf, renameSymbol, type TurnEdits } from './turnEdits';

export interface TurnToolsOptions {
  guard: PathGuard;
  approver: DiffApprover;
  agent?: AgentToolbox;
  search?: SearchService;
  editor?: EditorInsight;
  mode: BuiltInMode;
  /** A custom agent's list: the mode's tools narrowed to those it names. */
  narrow?: (definitions: ToolDefinition[]) => ToolDefinition[];
  /** The running turn: accepted edits, problems and the plan are kept on it. */
  turn: () => AssistantTurn | undefined;
  /** The turn changed outside the engine's events (its plan): show it now. */
  onChange: () => void;
  /**
   * An edit's problems came after its result (a language server that was still starting): its card
   * and result changed, maybe after the turn ended. Show them and keep them with the conversation.
   */
  onLateProblems?: () => void;
  log: (line: string) => void;
  /** Tools loaded earlier in the conversation, in order; `onLoaded` is told the whole list when it grows. */
  loaded?: readonly string[];
  onLoaded?: (names: readonly string[]) => void;
  /** What the people wrote in the conversation: the tools it names are loaded from the first request. */
  named?: string;
  /** False: every tool from the first request (the setting `modelGateway.chat.findTools`). */
  defer?: boolean;
  /** Runs `run_subagent` calls (absent: the tool answers that it is not available here). */
  subagents?: SubagentHost;
  /** Runs `memory` calls: the change shown and asked every time. */
  memory?: { remember(args: string, callId: string | undefined, signal: AbortSignal | undefined): Promise<ToolResult> };
}

/** What runs a subagent: the session's (its model, client, prices and parallel cap). */
export interface SubagentHost {
  /** The model a subagent gets now (the setting, else the chat's). */
  model(): string;
  /** Runs one to its end; `record` is on the call's card and filled as it goes. */
  run(o: { task: string; tools: ToolRunner; signal?: AbortSignal; record: SubagentRun; onUpdate: () => void }): Promise<ToolResult>;
}

/** What the tools of one turn share (`turnTools` builds it). */
export interface TurnToolContext {
  o: TurnToolsOptions;
  edits: TurnEdits;
  offer: ToolOffer;
  /** The semantic search, when its index was ready as the turn started. */
  search?: SearchService;
  /** Tools newly loaded into the offer: the conversation keeps the list. */
  told(added: readonly string[]): void;
  /** The read-only tools a subagent of this turn gets. */
  subagentTools(): ToolRunner;
}

/** One call, as the engine makes it. */
export interface ToolCall {
  name: string;
  args: string;
  signal?: AbortSignal;
  /** Ties the call's approval and edits to its tool card (absent for a subagent's calls). */
  callId?: string;
  onApproved?: () => void;
}

/** A tool of the chat: its definition, whether a call waits for the person, and what runs it. */
export interface ChatTool {
  definition: ToolDefinition;
  /** Offered only when this holds (the editor's rename, the search once its index is ready). */
  available?: (o: Pick<TurnToolsOptions, 'search' | 'editor'>) => boolean;
  /** False: not among the mode's tools; the offer adds it itself (`find_tools`). */
  listed?: false;
  needsApproval(t: TurnToolContext, call: Pick<ToolCall, 'name' | 'args'>): boolean;
  run(t: TurnToolContext, call: ToolCall): Promise<ToolResult> | ToolResult;
}

/** Reads ask only when the person turned their auto-approval off (or paused it). */
const readAsks = (t: TurnToolContext): boolean => (t.o.agent ? !t.o.agent.unaskedFor('read') : false);
const editAsks = (t: TurnToolContext): boolean => !t.o.agent?.unaskedFor('edit');

/** A read, asked first when reads ask; false when the person said no. */
async function readAllowed(t: TurnToolContext, c: ToolCall): Promise<boolean> {
  const { agent, approver } = t.o;
  if (!agent || agent.unaskedFor('read')) return true;
  if (!(await approveRead({ name: c.name, args: c.args, approver, callId: c.callId, signal: c.signal, paused: agent.paused }))) return false;
  c.onApproved?.();
  return true;
}

const rejectedRead = (name: string): ToolResult => ({ content: `The person rejected the ${name} call; nothing was read.`, isError: true });

/** A workspace tool (`WorkspaceTools`): a read, or a write with its problems after it. */
function workspaceTool(definition: ToolDefinition): ChatTool {
  if (definition.kind === 'read')
    return {
      definition,
      needsApproval: readAsks,
      run: async (t, c) => {
        if (!(await readAllowed(t, c))) return rejectedRead(c.name);
        t.o.approver.currentCallId = c.callId;
        return t.edits.files.run(c.name, c.args, c.signal);
      },
    };
  return {
    definition,
    needsApproval: editAsks,
    run: (t, c) => t.edits.write(c.name, c.args, c.signal, c.callId, () => t.edits.files.run(c.name, c.args, c.signal)),
  };
}

/** `rename_symbol`: the language server's rename, proposed as one change (the editor feature's). */
const RENAME: ChatTool = {
  definition: RENAME_SYMBOL,
  available: (o) => !!o.editor,
  needsApproval: editAsks,
  run: (t, c) => t.edits.write(c.name, c.args, c.signal, c.callId, (editor) => renameSymbol(editor, t.edits.files, c.args, c.signal)),
};

/** `semantic_search`: the workspace's index (the search feature's), asked like a read. */
const SEMANTIC_SEARCH: ChatTool = {
  definition: SEMANTIC_SEARCH_TOOL,
  available: (o) => !!o.search?.ready(),
  needsApproval: readAsks,
  run: async (t, c) => {
    if (!(await readAllowed(t, c))) return rejectedRead(c.name);
    if (!t.search) {
      t.o.approver.currentCallId = c.callId;
      return t.edits.files.run(c.name, c.args, c.signal);
    }
    try {
      return { content: await t.search.toolAnswer(JSON.parse(c.args || '{}') as Record<string, unknown>, c.signal), isError: false };
    } catch (err) {
      return { content: `Error: ${(err as Error).message}`, isError: true };
    }
  },
};

/** `update_plan`: the plan kept on the turn and shown at once. */
const PLAN: ChatTool = {
  definition: UPDATE_PLAN,
  needsApproval: () => false,
  run: (t, c) => {
    const parsed = parsePlan(c.args);
    if ('error' in parsed) return { content: `Error: the plan was not updated: ${parsed.error}`, isError: true };
    const turn = t.o.turn();
    if (turn) turn.plan = parsed.plan;
    t.o.onChange();
    return { content: planSummary(parsed.plan), isError: false };
  },
};

/** `run_subagent`: its run is kept on the card; the result is its final answer. */
const SUBAGENT: ChatTool = {
  definition: RUN_SUBAGENT,
  needsApproval: () => false,
  run: async (t, c) => {
    const { subagents, onChange } = t.o;
    if (!subagents) return { content: 'Error: subagents are not available here.', isError: true };
    const parsed = parseSubagentArgs(c.args);
    if ('error' in parsed) return { content: `Error: ${parsed.error}.`, isError: true };
    const record = newSubagentRun(parsed.label, parsed.task, subagents.model());
    const call = callOf(t.o.turn(), c.callId);
    if (call) call.subagent = record;
    onChange();
    // Its card is redrawn at most every 250 ms while it streams (and once at its end).
    let last = 0;
    const onUpdate = () => {
      const now = Date.now();
      if (now - last < 250) return;
      last = now;
      onChange();
    };
    try {
      return await subagents.run({ task: parsed.task, tools: t.subagentTools(), signal: c.signal, record, onUpdate });
    } finally {
      onChange();
    }
  },
};

/** `memory`: the change shown and asked every time. */
const MEMORY: ChatTool = {
  definition: MEMORY_TOOL,
  needsApproval: () => true,
  run: (t, c) => (t.o.memory ? t.o.memory.remember(c.args, c.callId, c.signal) : { content: 'Error: memory is not available here.', isError: true }),
};

/** `find_tools`: the best matches loaded into the offer, the others named. */
const FIND: ChatTool = {
  definition: FIND_TOOLS,
  listed: false,
  needsApproval: () => false,
  run: (t, c) => {
    const before = t.offer.loaded().length;
    const found = t.offer.find(c.args);
    t.told(t.offer.loaded().slice(before));
    return found;
  },
};

/**
 * Every tool of the chat's own, in the order the mode's list takes them (the prompt cache keeps
 * it): adding a tool is one entry here. The toolbox's tools (terminal, MCP, the editor's language
 * features, other extensions') follow them, run by the toolbox (`TOOLBOX`).
 */
export const CHAT_TOOLS: readonly ChatTool[] = [...TOOL_DEFINITIONS.map(workspaceTool), RENAME, SEMANTIC_SEARCH, PLAN, SUBAGENT, MEMORY, FIND];

/** A tool of the toolbox: its policy and its run are the toolbox's. */
const TOOLBOX: Omit<ChatTool, 'definition'> = {
  needsApproval: (t, c) => t.o.agent!.needsApproval(c.name, c.args),
  run: (t, c) => t.o.agent!.run(c.name, c.args, t.o.approver, c.callId, c.signal, c.onApproved),
};

/** A name no tool has: treated as a workspace tool (asked like an edit; `WorkspaceTools` answers that it does not know it). */
const UNKNOWN: Omit<ChatTool, 'definition'> = {
  needsApproval: editAsks,
  run: (t, c) => {
    t.o.approver.currentCallId = c.callId;
    return t.edits.files.run(c.name, c.args, c.signal);
  },
};

const BY_NAME = new Map(CHAT_TOOLS.map((tool) => [tool.definition.name, tool]));

/** The tool a call names: the chat's own, else the toolbox's. */
export function chatTool(name: string, agent: AgentToolbox | undefined): Omit<ChatTool, 'definition'> {
  return BY_NAME.get(name) ?? (agent?.owns(name) ? TOOLBOX : UNKNOWN);
}

/** Every tool the chat can offer now, before the mode filters them. */
export function allDefinitions(o: Pick<TurnToolsOptions, 'agent' | 'search' | 'editor'>): ToolDefinition[] {
  const own = CHAT_TOOLS.filter((tool) => tool.listed !== false && (tool.available?.(o) ?? true)).map((tool) => tool.definition);
  return [...own, ...(o.agent?.definitions() ?? [])];
}
