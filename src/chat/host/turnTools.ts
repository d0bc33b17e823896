import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { approveRead, objectArgs } from '../../runtime/host/toolCalls';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { AssistantTurn, SubagentRun, ToolCallRecord } from '../../common/conversation';
import { RENAME_SYMBOL } from '../../editor/core/rename';
import type { EditorInsight } from '../../editor/host/feature';
import type { Baseline } from '../../editor/host/problemWatch';
import type { SearchService } from '../../search/host/searchService';
import { SEMANTIC_SEARCH_TOOL } from '../../search/host/searchService';
import { ripgrepPath } from '../../shell/ripgrep';
import type { PathGuard } from '../../tools/pathGuard';
import { editsRunUnasked } from '../../runtime/core/toolPolicy';
import { TOOL_DEFINITIONS, WorkspaceTools, type ProposedEdit, type ToolDefinition, type ToolResult } from '../../tools/workspaceTools';
import type { ToolRunner } from '../../runtime/core/engine';
import { toolsForMode, type BuiltInMode } from '../../runtime/core/modes';
import { parsePlan, planSummary, UPDATE_PLAN } from '../../runtime/core/plan';
import { MEMORY_TOOL } from '../core/memory';
import { newSubagentRun, parseSubagentArgs, RUN_SUBAGENT, subagentTools } from '../../runtime/core/subagents';
import { CUSTOM_AGENT_CORE_AT_MOST, FIND_TOOLS, ToolOffer } from '../../runtime/core/toolOffer';
import type { DiffApprover } from './approvals';

const WRITE_TOOLS = new Set([...TOOL_DEFINITIONS.filter((d) => d.kind === 'write').map((d) => d.name), RENAME_SYMBOL.name]);

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

/** Every tool the chat can offer now, before the mode filters them. */
export function allDefinitions(o: Pick<TurnToolsOptions, 'agent' | 'search' | 'editor'>): ToolDefinition[] {
  const search = o.search?.ready() ? [SEMANTIC_SEARCH_TOOL] : [];
  return [...TOOL_DEFINITIONS, ...(o.editor ? [RENAME_SYMBOL] : []), ...search, UPDATE_PLAN, RUN_SUBAGENT, MEMORY_TOOL, ...(o.agent?.definitions() ?? [])];
}

/**
 * The tools a turn may offer, and its core: a custom agent's list is offered whole from the first
 * request when it is short (its author chose those tools); else the mode's core applies.
 */
export function offerScope(forMode: ToolDefinition[], narrow?: (definitions: ToolDefinition[]) => ToolDefinition[]): { all: ToolDefinition[]; core?: string[] } {
  if (!narrow) return { all: forMode };
  const all = narrow(forMode);
  return all.length <= CUSTOM_AGENT_CORE_AT_MOST ? { all, core: all.map((d) => d.name) } : { all };
}

/**
 * The tools of one turn, as the engine runs them: the workspace's files, the semantic search, the
 * plan, and the toolbox (terminal, MCP, the editor's language features), filtered by the mode. An
 * accepted edit waits for the problems it introduced, which go into its result and its card.
 */
export function turnTools(o: TurnToolsOptions): ToolRunner & { deferredCount(): number } {
  const { agent, approver } = o;
  const written = new Map<string, { uri: vscode.Uri; content: string }[]>();
  // What was known of each accepted edit's files right before the write (by call id).
  const baselines = new Map<string, Baseline>();
  // Problems that came after their edit's result went back: said with the next tool result of the turn.
  const lateNotes: string[] = [];
  const unasked = (edits: readonly ProposedEdit[]) => !!agent && editsRunUnasked(edits, agent.consent());
  /**
   * The files' language server loads them while the person reads the diff; once accepted, what it
   * knows of them is taken right before the write.
   */
  const decide = async (edits: readonly ProposedEdit[], ask: () => Promise<{ accepted: boolean; note?: string }>, signal: AbortSignal | undefined) => {
    const uris = edits.map((e) => vscode.Uri.file(e.path.abs));
    const id = approver.currentCallId;
    if (o.editor && id) o.editor.problems.prepare(uris);
    const decision = await ask();
    if (decision.accepted && o.editor && id) baselines.set(id, await o.editor.problems.beforeWrite(uris, signal));
    return decision;
  };
  const tools = new WorkspaceTools(o.guard, {
    // Edits are written without the Accept step only when the person turned that on (each can still be undone).
    // A file that changes how the editor or the machine behaves (.vscode/, CI, hooks, scripts) always asks.
    approver: {
      approve: (edit, signal) => decide([edit], () => (unasked([edit]) ? Promise.resolve({ accepted: true }) : approver.approve(edit, signal)), signal),
      approveAll: (edits, title, signal) => decide(edits, () => (unasked(edits) ? Promise.resolve({ accepted: true }) : approver.approveAll(edits, title, signal)), signal),
    },
    rgPath: ripgrepPath(),
    writeExisting: writeThroughEditor,
    // An accepted write is kept on its tool call: Undo and Restore put the file back from it.
    onWritten: (edit) => {
      const call = callOf(o.turn(), approver.currentCallId);
      const record = { path: edit.path.display, before: edit.kind === 'create' ? null : edit.before, after: edit.after };
      if (call?.name === RENAME_SYMBOL.name) (call.edits ??= []).push(record);
      else if (call) call.edit = record;
      const id = approver.currentCallId;
      if (id) written.set(id, [...(written.get(id) ?? []), { uri: vscode.Uri.file(edit.path.abs), content: edit.after }]);
    },
  });
  const search = o.search?.ready() ? o.search : undefined;
  const forMode = toolsForMode(o.mode, allDefinitions(o));
  const offer = new ToolOffer({ ...offerScope(forMode, o.narrow), mode: o.mode, loaded: o.loaded, defer: o.defer });
  // Every load is told once, as the whole list (kept with the conversation).
  const told = (added: readonly string[]) => {
    if (added.length > 0) o.onLoaded?.(offer.loaded());
  };
  told(offer.loadNamedIn(o.named ?? ''));
  const readKinds = new Set([...TOOL_DEFINITIONS.filter((d) => d.kind === 'read').map((d) => d.name), SEMANTIC_SEARCH_TOOL.name]);
  return {
    get definitions() {
      return offer.offered();
    },
    kindOf: (name) => offer.kindOf(name),
    deferredCount: () => offer.deferred().length,
    needsApproval: (name, args) => {
      if (name === UPDATE_PLAN.name || name === FIND_TOOLS.name || name === RUN_SUBAGENT.name) return false;
      if (name === MEMORY_TOOL.name) return true;
      if (agent?.owns(name)) return agent.needsApproval(name, args);
      if (readKinds.has(name)) return agent ? !agent.unaskedFor('read') : false;
      return !agent?.unaskedFor('edit');
    },
    run: async (name, args, signal, callId, onApproved) => {
      const result = await runOne(name, args, signal, callId, onApproved);
      if (lateNotes.length === 0) return result;
      return { ...result, content: `${result.content}\n\n${lateNotes.splice(0).join('\n\n')}` };
    },
  };

  async function runOne(name: string, args: string, signal: AbortSignal | undefined, callId: string | undefined, onApproved: (() => void) | undefined): Promise<ToolResult> {
      // A tool the mode does not offer is refused, even when the model names it anyway.
      if (!offer.allows(name)) return { content: `Error: ${name} is not available in this mode${o.mode === 'agent' ? '' : ` (${o.mode}: read-only tools only)`}.`, isError: true };
      if (name === FIND_TOOLS.name) {
        const before = offer.loaded().length;
        const found = offer.find(args);
        told(offer.loaded().slice(before));
        return found;
      }
      // A deferred tool called by a name the model learned is loaded: the next request carries its definition.
      told(offer.load([name]));
      if (name === UPDATE_PLAN.name) return updatePlan(o, args);
      if (name === RUN_SUBAGENT.name) return subagent(args, signal, callId);
      if (name === MEMORY_TOOL.name) return o.memory ? o.memory.remember(args, callId, signal) : { content: 'Error: memory is not available here.', isError: true };
      return execute(name, args, signal, callId, onApproved);
  }

  /** A `run_subagent` call: its run is kept on the card; the result is its final answer. */
  async function subagent(args: string, signal: AbortSignal | undefined, callId: string | undefined): Promise<ToolResult> {
    if (!o.subagents) return { content: 'Error: subagents are not available here.', isError: true };
    const parsed = parseSubagentArgs(args);
    if ('error' in parsed) return { content: `Error: ${parsed.error}.`, isError: true };
    const record = newSubagentRun(parsed.label, parsed.task, o.subagents.model());
    const call = callOf(o.turn(), callId);
    if (call) call.subagent = record;
    o.onChange();
    // Its card is redrawn at most every 250 ms while it streams (and once at its end).
    let last = 0;
    const onUpdate = () => {
      const now = Date.now();
      if (now - last < 250) return;
      last = now;
      o.onChange();
    };
    try {
      return await o.subagents.run({ task: parsed.task, tools: readOnlyRunner(), signal, record, onUpdate });
    } finally {
      o.onChange();
    }
  }

  /**
   * A subagent's tools: the read-only tools this turn offers now (no wider than the parent's), run
   * without a card of the parent's. A subagent cannot ask the person: a call that would ask (reads
   * with their auto-approval off, an MCP tool that asks) is refused, and the refusal says so.
   */
  function readOnlyRunner(): ToolRunner {
    const definitions = subagentTools(offer.offered());
    const allowed = new Set(definitions.map((d) => d.name));
    const asks = (name: string, args: string) => (agent?.owns(name) ? agent.needsApproval(name, args) : readKinds.has(name) && !!agent && !agent.unaskedFor('read'));
    return {
      definitions,
      needsApproval: () => false,
      run: async (name, args, signal) => {
        if (!allowed.has(name)) return { content: `Error: ${name} is not available to a subagent (read-only tools only: ${[...allowed].join(', ')}).`, isError: true };
        if (asks(name, args)) return { content: `Error: ${name} would ask the person first, and a subagent cannot ask. Say in your answer what should be read, and the agent that called you will do it.`, isError: true };
        return execute(name, args, signal, undefined, undefined);
      },
    };
  }

  /** A call the offer allows, run: the toolbox's, a read (asked when reads ask), the search, or a workspace tool with its problems after a write. */
  async function execute(name: string, args: string, signal: AbortSignal | undefined, callId: string | undefined, onApproved: (() => void) | undefined): Promise<ToolResult> {
      if (agent?.owns(name)) return agent.run(name, args, approver, callId, signal, onApproved);
      // Reads ask only when the person turned their auto-approval off (or paused it).
      if (readKinds.has(name) && agent && !agent.unaskedFor('read')) {
        if (!(await approveRead({ name, args, approver, callId, signal, paused: agent.paused }))) return { content: `The person rejected the ${name} call; nothing was read.`, isError: true };
        onApproved?.();
      }
      if (name === SEMANTIC_SEARCH_TOOL.name && search) {
        try {
          return { content: await search.toolAnswer(JSON.parse(args || '{}') as Record<string, unknown>, signal), isError: false };
        } catch (err) {
          return { content: `Error: ${(err as Error).message}`, isError: true };
        }
      }
      approver.currentCallId = callId;
      if (!WRITE_TOOLS.has(name) || !o.editor || !callId) return tools.run(name, args, signal);
      // Problems after the edit: what was known before the write (taken once accepted), then the edited files' once they settle.
      const result = name === RENAME_SYMBOL.name ? await rename(o.editor, tools, args, signal) : await tools.run(name, args, signal);
      const files = written.get(callId);
      const before = baselines.get(callId);
      baselines.delete(callId);
      if (result.isError || !files || !before) return result;
      const call = callOf(o.turn(), callId);
      try {
        let said = '';
        const { report, text } = await o.editor.problems.afterWrite(files, before, signal, (late) => {
          // The server's first report came after the result went back: the card, the kept result and the model learn it.
          o.log(`chat: problems after ${name}, reported late: ${late.report.introduced.length + late.report.more} new, ${late.report.fixed} fixed (${late.report.lateMs ?? 0} ms after the write)`);
          if (!call || call.undone) return;
          call.problems = late.report;
          if (call.result && said) call.result = call.result.replace(said, late.text);
          said = late.text;
          if (o.turn()) lateNotes.push(`Note on your earlier ${name} call (${callId}), now checked: ${late.text}`);
          o.onLateProblems?.();
        });
        said = text;
        if (call) call.problems = report;
        o.log(`chat: problems after ${name}: ${report.introduced.length + report.more} new, ${report.fixed} fixed (${report.settled}${report.unchecked ? `, not checked: ${report.unchecked.length} file(s)` : ''}, ${report.waitedMs} ms)`);
        return { content: `${result.content}\n\n${text}`, isError: false };
      } catch (err) {
        o.log(`chat: the problems after ${name} could not be read: ${err instanceof Error ? err.message : String(err)}`);
        return result;
      }
  }
}

/**
 * An accepted edit of a file open in the editor goes through its copy and is saved: the editor
 * (and its language servers) see it at once, not when a file watcher notices. A copy with unsaved
 * changes of the person's is left alone (the file is written on disk, as for closed files).
 */
async function writeThroughEditor(abs: string, content: string): Promise<boolean> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === abs);
  // Only a copy in a plain editor tab: a diff's side (the approval's, closing as it is decided) is not one.
  const inTab = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.fsPath === abs));
  if (!doc || doc.isDirty || !inTab) return false;
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end), content);
  if (!(await vscode.workspace.applyEdit(edit)) || !(await doc.save())) return false;
  // Saved means on disk; anything else is written there by the caller.
  return (await readFile(abs, 'utf8').catch(() => undefined)) === content;
}

/** A rename: the language server's edit, proposed as one change of every file it touches. */
async function rename(editor: EditorInsight, tools: WorkspaceTools, rawArgs: string, signal: AbortSignal | undefined): Promise<ToolResult> {
  try {
    const args = objectArgs(rawArgs);
    if (!args) return { content: `Error: the arguments are not a JSON object: ${rawArgs.slice(0, 200)}`, isError: true };
    const { edits, done, missed } = await editor.renamer.propose(args);
    // The files the language server left out are in the proposal's title: the person accepts knowing them.
    const title = missed?.length
      ? vscode.l10n.t('Rename {0} to {1} (not in the language server\'s rename, left unchanged: {2})', String(args.symbol), String(args.new_name), missed.join(', '))
      : vscode.l10n.t('Rename {0} to {1}', String(args.symbol), String(args.new_name));
    return await tools.applyAllIfApproved(edits, title, signal, done);
  } catch (err) {
    return { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}

function callOf(turn: AssistantTurn | undefined, callId: string | undefined): ToolCallRecord | undefined {
  return callId ? turn?.steps.flatMap((s) => s.toolCalls).find((c) => c.id === callId) : undefined;
}

function updatePlan(o: TurnToolsOptions, args: string): { content: string; isError: boolean } {
  const parsed = parsePlan(args);
  if ('error' in parsed) return { content: `Error: the plan was not updated: ${parsed.error}`, isError: true };
  const turn = o.turn();
  if (turn) turn.plan = parsed.plan;
  o.onChange();
  return { content: planSummary(parsed.plan), isError: false };
}
