import * as vscode from 'vscode';
import type { Unasked } from '../../common/chatProtocol';
import type { LogSource } from '../../shell/services';
import type { PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import type { ActionApprover } from '../core/approval';
import type { Consent } from '../core/toolPolicy';
import { runsUnasked, unaskedSummary, type ToolCategory } from '../core/autoApproval';
import { commandNeedsApproval, RUN_COMMAND_TOOL, runCommandTool } from './commandTool';
import { sandboxOnNow, sandboxSettings, sandboxSupport } from './commandSandbox';
import { agentSettings, autoApprovalPaused, consentNow, setAutoApprovalPaused } from './agentSettings';
import { AgentTerminals } from './terminalRunner';
import { counted } from '../../shell/listeners';

/** A source of more tools for the chat (MCP servers, other extensions' tools). */
export interface ToolSource {
  definitions(): ToolDefinition[];
  /**
   * Whose tools these are, for the tools picker: other extensions' are off until the person turns
   * them on; MCP servers' are on until turned off. Absent: our own, always offered.
   */
  readonly origin?: ToolOrigin;
  /** How the picker names the tool's source (an MCP server's name). */
  sourceOf?(name: string): string;
  /** Tools never offered because one of ours does the same job (the picker says which). */
  readonly leftOut?: readonly { name: string; ours: string }[];
  owns(name: string): boolean;
  /** The approval category of a call (an MCP tool: its server and tool). */
  category(name: string): ToolCategory;
  /** `paused`: auto-approval is paused, so the call asks whatever the settings allow. */
  run(name: string, args: string, approver: ActionApprover, callId: string | undefined, signal: AbortSignal | undefined, paused: boolean): Promise<ToolResult>;
  readonly onDidChange: vscode.Event<void>;
  /** Something the chat should say (a server stopped and its tools went away). */
  readonly onNotice?: vscode.Event<string>;
}

/** What MCP servers add to the chat input: prompts as `/` commands, resources attachable like files. */
export interface ChatContextSource {
  promptItems(query: string): { path: string; name: string }[];
  usePrompt(id: string): Promise<string | undefined>;
  resourceItems(query: string): { path: string; name: string }[];
  /** Undefined when the person did not give a template's arguments. */
  readResource(path: string): Promise<{ label: string; text: string } | undefined>;
  /** Workspace servers waiting for the person to review their command line. */
  waitingServers(): string[];
}

/** The workspace's custom agents, prompt files and skills, for the chat (set by the customization feature). */
export interface CustomizationSource {
  modes(): { id: string; name: string; description: string }[];
  /** A custom agent's tools, among those Agent mode offers. */
  toolsOf(id: string, definitions: readonly ToolDefinition[]): ToolDefinition[];
  /** What a custom agent adds to the system prompt; undefined: no such agent. */
  modePrompt(id: string): string | undefined;
  skillsPrompt(): string;
  /** The model a custom agent names (its `model` field), if any. */
  modelOf(id: string): string | undefined;
  promptItems(query: string): { path: string; name: string }[];
  usePrompt(id: string): { text: string; mode?: string } | undefined;
  /** Reads the files again. */
  refresh(): Promise<void>;
  readonly onDidChange: vscode.Event<void>;
}

/** The person's tool choices (`Record<tool, on>`), per workspace and for all workspaces: state, not settings, so a cloned repository cannot turn tools on. */
const CHOICES_KEY = 'modelGateway.tools.choices';

export type ToolOrigin = 'extension' | 'mcp';

/** Another extension's tool is off until chosen; an MCP server's is on until chosen off. */
const defaultOn = (origin: ToolOrigin): boolean => origin === 'mcp';

/** A tool the picker lists: another extension's or an MCP server's, and whether it is offered now. */
export interface ToolChoice {
  name: string;
  description: string;
  origin: ToolOrigin;
  source: string;
  on: boolean;
  /** Where the choice was made: this workspace, all workspaces, or not at all (the default). */
  chosenIn: 'workspace' | 'global' | 'default';
}

/**
 * The agent's tools beyond reading and editing files: the terminal and the tool sources (MCP
 * servers, other extensions' tools), with auto-approval: what runs without asking, and the one
 * switch that pauses all of it.
 */
export class AgentToolbox implements vscode.Disposable {
  readonly terminals = new AgentTerminals();
  private readonly sources: ToolSource[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when what runs unasked, or the tools offered, change. */
  readonly onDidChange = counted('toolbox.onDidChange', this.changed.event);
  private readonly disposables: vscode.Disposable[] = [this.terminals, this.changed];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly services: LogSource,
    private readonly guard: () => PathGuard,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('modelGateway.agent')) this.changed.fire();
      }),
    );
    // Whether commands can be sandboxed here: checked once, in the background (the indicator then says so).
    void sandboxSupport().then(() => this.changed.fire());
  }

  private readonly notices = new vscode.EventEmitter<string>();
  /** What the chat should tell the person about the tools (relayed from the sources). */
  readonly onNotice = counted('toolbox.onNotice', this.notices.event);

  /** Set by the MCP feature: prompts and resources for the chat input. */
  contextSource: ChatContextSource | undefined;

  /** Set by the customization feature: custom agents, prompt files, skills. */
  customizations: CustomizationSource | undefined;

  addSource(source: ToolSource): void {
    this.sources.push(source);
    this.disposables.push(source.onDidChange(() => this.changed.fire()));
    if (source.onNotice) this.disposables.push(source.onNotice((n) => this.notices.fire(n)));
  }

  get paused(): boolean {
    return autoApprovalPaused(this.context.globalState);
  }

  async setPaused(paused: boolean): Promise<void> {
    await setAutoApprovalPaused(this.context.globalState, paused);
    this.services.log.info(`agent: auto-approval ${paused ? 'paused: everything asks' : 'resumed'}`);
    this.changed.fire();
  }

  /** The panel's indicator: what runs without asking now. */
  unasked(): Unasked {
    const { auto, policy } = agentSettings();
    return unaskedSummary(auto, this.paused, policy.allow.length, sandboxOnNow() && sandboxSettings().runUnasked);
  }

  /** The tools the chat can offer: ours, the MCP servers' not turned off, other extensions' turned on. */
  definitions(): ToolDefinition[] {
    const chosen = this.chooser();
    return [RUN_COMMAND_TOOL, ...this.sources.flatMap((s) => s.definitions().filter((d) => !s.origin || (chosen(d.name)?.on ?? defaultOn(s.origin))))];
  }

  /** The person's choice of a tool, if any: this workspace's first, then the global one (each state read once). */
  private chooser(): (name: string) => { on: boolean; chosenIn: 'workspace' | 'global' } | undefined {
    const ws = this.choicesIn('workspace');
    const global = this.choicesIn('global');
    return (name) => (name in ws ? { on: ws[name], chosenIn: 'workspace' } : name in global ? { on: global[name], chosenIn: 'global' } : undefined);
  }

  private choicesIn(scope: 'workspace' | 'global'): Record<string, boolean> {
    const state = scope === 'workspace' ? this.context.workspaceState : this.context.globalState;
    const v = state.get<unknown>(CHOICES_KEY);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, boolean] => typeof e[1] === 'boolean'));
  }

  /** Every tool of other extensions and MCP servers, for the tools picker (VS Code's own duplicates of ours are never listed). */
  choices(): ToolChoice[] {
    const chosen = this.chooser();
    return this.sources.flatMap((s) => {
      const origin = s.origin;
      if (!origin) return [];
      return s.definitions().map((d) => {
        const c = chosen(d.name);
        return {
          name: d.name,
          description: d.description,
          origin,
          source: s.sourceOf?.(d.name) ?? origin,
          on: c?.on ?? defaultOn(origin),
          chosenIn: c?.chosenIn ?? 'default',
        };
      });
    });
  }

  /** VS Code's tools never offered because one of ours does the same job. */
  leftOut(): { name: string; ours: string }[] {
    return this.sources.flatMap((s) => [...(s.leftOut ?? [])]);
  }

  /** Saves the person's choices in this workspace or for all workspaces (a workspace's choice wins over the global one). */
  async setToolChoices(changes: Record<string, boolean>, scope: 'workspace' | 'global'): Promise<void> {
    const state = scope === 'workspace' ? this.context.workspaceState : this.context.globalState;
    await state.update(CHOICES_KEY, { ...this.choicesIn(scope), ...changes });
    // A global choice is what the person wants everywhere: this workspace's older choice for the same tool gives way.
    if (scope === 'global') {
      const ws = this.choicesIn('workspace');
      const kept = Object.fromEntries(Object.entries(ws).filter(([k]) => !(k in changes)));
      if (Object.keys(kept).length !== Object.keys(ws).length) await this.context.workspaceState.update(CHOICES_KEY, kept);
    }
    const on = Object.entries(changes)
      .filter(([, v]) => v)
      .map(([k]) => k);
    const off = Object.entries(changes)
      .filter(([, v]) => !v)
      .map(([k]) => k);
    this.services.log.info(
      `agent: tools chosen (${scope === 'workspace' ? 'this workspace' : 'all workspaces'}): on ${on.join(', ') || 'none'}; off ${off.join(', ') || 'none'}`,
    );
    this.changed.fire();
  }

  owns(name: string): boolean {
    return name === RUN_COMMAND_TOOL.name || this.sources.some((s) => s.owns(name));
  }

  private guardOrUndefined(): PathGuard | undefined {
    try {
      return this.guard();
    } catch {
      return undefined;
    }
  }

  /** What the person lets run without them now: every surface's tools decide by it (`runtime/core/toolPolicy.ts`). */
  consent(): Consent {
    return consentNow(this.context.globalState);
  }

  /** Reads and edits of workspace files: whether they run (are written) without asking. */
  unaskedFor(kind: 'read' | 'edit'): boolean {
    return runsUnasked({ kind }, agentSettings().auto, this.paused);
  }

  /** Whether this call will wait for the person (its tool card shows so from the start). */
  needsApproval(name: string, args: string): boolean {
    if (name === RUN_COMMAND_TOOL.name) return commandNeedsApproval(args, this.paused, this.guardOrUndefined());
    const source = this.sources.find((s) => s.owns(name));
    return !!source && !runsUnasked(source.category(name), agentSettings().auto, this.paused);
  }

  /** `approver` is the chat's; `onApproved` is told when the call starts after a yes. */
  run(name: string, args: string, approver: ActionApprover, callId: string | undefined, signal?: AbortSignal, onApproved?: () => void): Promise<ToolResult> {
    approver = withNotice(approver, onApproved);
    if (name === RUN_COMMAND_TOOL.name) {
      return runCommandTool(
        { guard: this.guard, terminals: this.terminals, paused: () => this.paused, log: (l) => this.services.log.info(l) },
        args,
        approver,
        callId,
        signal,
      );
    }
    const source = this.sources.find((s) => s.owns(name));
    if (!source) return Promise.resolve({ content: `Error: there is no tool named "${name}".`, isError: true });
    return source.run(name, args, approver, callId, signal, this.paused);
  }

  dispose(): void {
    this.notices.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The approver, telling `onApproved` after each yes (the tool card then shows the call running). */
function withNotice(approver: ActionApprover, onApproved?: () => void): ActionApprover {
  if (!onApproved) return approver;
  return {
    approveAction: async (request, callId, signal) => {
      const d = await approver.approveAction(request, callId, signal);
      if (d.accepted) onApproved();
      return d;
    },
  };
}
