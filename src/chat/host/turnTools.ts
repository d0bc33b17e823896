import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import type { ToolRunner } from '../../runtime/core/engine';
import { toolsForMode } from '../../runtime/core/modes';
import { subagentTools } from '../../runtime/core/subagents';
import { CUSTOM_AGENT_CORE_AT_MOST, ToolOffer } from '../../runtime/core/toolOffer';
import { allDefinitions, chatTool, type ToolCall, type TurnToolContext, type TurnToolsOptions } from './chatTools';
import { TurnEdits } from './turnEdits';

/**
 * The tools a turn may offer, and its core: a custom agent's list is offered whole from the first
 * request when it is short (its author chose those tools); else the mode's core applies.
 */
export function offerScope(
  forMode: ToolDefinition[],
  narrow?: (definitions: ToolDefinition[]) => ToolDefinition[],
): { all: ToolDefinition[]; core?: string[] } {
  if (!narrow) return { all: forMode };
  const all = narrow(forMode);
  return all.length <= CUSTOM_AGENT_CORE_AT_MOST ? { all, core: all.map((d) => d.name) } : { all };
}

/**
 * The tools of one turn, as the engine runs them: the chat's own (`CHAT_TOOLS`: the workspace's
 * files, the semantic search, the plan, subagents, memory, `find_tools`) and the toolbox's
 * (terminal, MCP, the editor's language features), filtered by the mode and offered as
 * `ToolOffer` says. An accepted edit waits for the problems it introduced (`TurnEdits`).
 */
export function turnTools(o: TurnToolsOptions): ToolRunner & { deferredCount(): number } {
  const forMode = toolsForMode(o.mode, allDefinitions(o));
  const offer = new ToolOffer({ ...offerScope(forMode, o.narrow), mode: o.mode, loaded: o.loaded, defer: o.defer });
  const t: TurnToolContext = {
    o,
    edits: new TurnEdits(o),
    offer,
    search: o.search?.ready() ? o.search : undefined,
    // Every load is told once, as the whole list (kept with the conversation).
    told: (added) => {
      if (added.length > 0) o.onLoaded?.(offer.loaded());
    },
    subagentTools: () => readOnlyRunner(t),
  };
  t.told(offer.loadNamedIn(o.named ?? ''));
  return {
    get definitions() {
      return offer.offered();
    },
    kindOf: (name) => offer.kindOf(name),
    deferredCount: () => offer.deferred().length,
    needsApproval: (name, args) => chatTool(name, o.agent).needsApproval(t, { name, args }),
    run: async (name, args, signal, callId, onApproved) => t.edits.withLateNotes(await runCall(t, { name, args, signal, callId, onApproved })),
  };
}

/** A call of the turn: refused when the mode does not offer it, else run by its tool. */
async function runCall(t: TurnToolContext, call: ToolCall): Promise<ToolResult> {
  const { offer, o } = t;
  // A tool the mode does not offer is refused, even when the model names it anyway.
  if (!offer.allows(call.name))
    return { content: `Error: ${call.name} is not available in this mode${o.mode === 'agent' ? '' : ` (${o.mode}: read-only tools only)`}.`, isError: true };
  // A deferred tool called by a name the model learned is loaded: the next request carries its definition.
  t.told(offer.load([call.name]));
  return chatTool(call.name, o.agent).run(t, call);
}

/**
 * A subagent's tools: the read-only tools this turn offers now (no wider than the parent's), run
 * without a card of the parent's. A subagent cannot ask the person: a call that would ask (reads
 * with their auto-approval off, an MCP tool that asks) is refused, and the refusal says so.
 */
function readOnlyRunner(t: TurnToolContext): ToolRunner {
  const definitions = subagentTools(t.offer.offered());
  const allowed = new Set(definitions.map((d) => d.name));
  return {
    definitions,
    needsApproval: () => false,
    run: async (name, args, signal) => {
      if (!allowed.has(name))
        return { content: `Error: ${name} is not available to a subagent (read-only tools only: ${[...allowed].join(', ')}).`, isError: true };
      const tool = chatTool(name, t.o.agent);
      if (tool.needsApproval(t, { name, args }))
        return {
          content: `Error: ${name} would ask the person first, and a subagent cannot ask. Say in your answer what should be read, and the agent that called you will do it.`,
          isError: true,
        };
      return tool.run(t, { name, args, signal });
    },
  };
}
