import * as vscode from 'vscode';
import { chatSettings, type ChatSettings } from '../../shell/config';
import type { PricedFeature } from '../../shell/services';
import type { SearchService } from '../../search/host/searchService';
import type { EditorInsight } from '../../editor/host/feature';
import { activeCondensation, type AssistantTurn, type Conversation } from '../../common/conversation';
import { fitToWindow, type ContextUse } from '../../runtime/core/budget';
import { modeOf, modePrompt, toolsForMode } from '../../runtime/core/modes';
import { systemPrompt } from '../../runtime/core/prompt';
import { calledTools, ToolOffer } from '../../runtime/core/toolOffer';
import { scaleOf, windowOf } from '../../runtime/host/modelProfile';
import { instructionsFor, type Instructions } from '../../runtime/host/instructions';
import { ProjectRules } from '../../runtime/host/projectRules';
import type { AgentToolbox } from '../../runtime/host/toolbox';
import { toolsAllowed } from '../../runtime/host/turnChecks';
import type { PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition } from '../../tools/workspaceTools';
import { allDefinitions } from './chatTools';
import type { ChatMemory } from './memory';
import { offerScope } from './turnTools';

/**
 * What the chat's requests carry besides the conversation: the system prompt (the mode's words,
 * the workspace's skills, the project's rules files and the memory) and the tool definitions; and
 * the context meter: the last request's use of the window, or an estimate of the next one.
 */
export class ChatPrompt implements vscode.Disposable {
  /** The project's rules files (trusted workspaces only). */
  private readonly rules: ProjectRules;
  /** What the last request carried of the rules and the memory. */
  private rulesSent: Pick<Instructions, 'section' | 'inUse'> = { section: '', inUse: [] };
  /** How the last request used the context window (the meter), for the conversation it was in. */
  private lastContext: { conversationId: string; use: ContextUse } | undefined;

  constructor(
    private readonly services: PricedFeature,
    guard: () => PathGuard,
    private readonly memory: ChatMemory,
    private readonly tools: { agent?: AgentToolbox; search?: SearchService; editor?: EditorInsight },
  ) {
    this.rules = new ProjectRules(guard);
  }

  /** The tools a request of this mode carries: the built-in mode's, narrowed to a custom agent's list, as the conversation's next request would. */
  private definitionsFor(mode: string, c: Conversation | undefined): ToolDefinition[] {
    const defs = toolsForMode(modeOf(mode), allDefinitions(this.tools));
    const customs = this.tools.agent?.customizations;
    const scope = offerScope(defs, mode.startsWith('custom:') && customs ? (d) => customs.toolsOf(mode, d) : undefined);
    // As the next request of this conversation would carry them: the core, then what it loaded.
    return new ToolOffer({ ...scope, mode: modeOf(mode), loaded: c?.toolsLoaded ?? calledTools(c?.turns ?? []), defer: chatSettings().findTools }).offered();
  }

  /** What the system prompt says of the mode and of the workspace's skills. */
  private modeText(mode: string): string {
    const customs = this.tools.agent?.customizations;
    const custom = mode.startsWith('custom:') ? customs?.modePrompt(mode) : undefined;
    return [custom ?? modePrompt(modeOf(mode)), customs?.skillsPrompt() ?? ''].filter(Boolean).join('\n\n');
  }

  /** The system prompt and tool definitions as the next request would carry them (for estimates). */
  nextRequest(mode: string, c: Conversation | undefined): { system: string; tools: string } {
    const tools = toolsAllowed() ? JSON.stringify(this.definitionsFor(mode, c)) : '';
    const system = systemPrompt({
      folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.name),
      toolsEnabled: !!tools,
      editor: undefined,
      rules: this.rulesSent.section,
      mode: this.modeText(mode),
      findTools: chatSettings().findTools,
    });
    return { system, tools };
  }

  /** The meter's figures with the rules files the request carried (shown as chips). */
  withRules(use: ContextUse): ContextUse {
    return this.rulesSent.inUse.length ? { ...use, rules: this.rulesSent.inUse } : use;
  }

  /** The meter: the last request's use of the window, or an estimate of the next one (after a reload). */
  contextUse(c: Conversation | undefined, model: string, mode: string): ContextUse | undefined {
    if (!c || !model) return undefined;
    if (this.lastContext?.conversationId === c.id) return this.lastContext.use;
    const { system, tools } = this.nextRequest(mode, c);
    return this.withRules(
      fitToWindow({
        system,
        toolsText: tools,
        turns: c.turns,
        window: windowOf(this.services, model),
        scale: scaleOf(model),
        condensation: activeCondensation(c),
      }).use,
    );
  }

  /** How a request of this conversation used the window, as it went. */
  measured(conversationId: string, use: ContextUse): void {
    this.lastContext = { conversationId, use };
  }

  /** The figures are stale (the conversation was condensed or forked): estimated again. */
  forgetMeasure(): void {
    this.lastContext = undefined;
  }

  /** The system prompt of a turn: the rules files that apply to the files in play and the memory, read now. */
  async forTurn(conversation: Conversation, turn: AssistantTurn, toolsEnabled: boolean, settings: ChatSettings): Promise<string> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.name);
    const editor = vscode.window.activeTextEditor;
    const memory = await this.memory.read(conversation);
    const { section, inUse, rules } = await instructionsFor(this.rules, filesInPlay(editor, conversation.turns.at(-2)), memory);
    this.rulesSent = { section, inUse };
    if (rules.length) this.services.log.info(`chat: project rules in use: ${rules.map((r) => r.path).join(', ')}`);
    return systemPrompt({
      folders,
      toolsEnabled,
      editor: editor ? { file: vscode.workspace.asRelativePath(editor.document.uri), language: editor.document.languageId } : undefined,
      rules: this.rulesSent.section,
      mode: this.modeText(turn.mode ?? modeOf(turn.mode)),
      findTools: settings.findTools,
    });
  }

  dispose(): void {
    this.rules.dispose();
  }
}

/** The files a turn is about, for the rules that apply: the active editor's, and the files attached to the question. */
function filesInPlay(editor: vscode.TextEditor | undefined, question: Conversation['turns'][number] | undefined): string[] {
  const files = new Set<string>();
  if (editor?.document.uri.scheme === 'file') files.add(editor.document.uri.fsPath);
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (question?.role === 'user') {
    for (const c of question.context) {
      const relative = c.label.replace(/:\d+(-\d+)?$/, '');
      const folder = folders.find((f) => relative.startsWith(`${f.name}/`)) ?? folders[0];
      if (!folder) continue;
      const inside = folders.length > 1 && relative.startsWith(`${folder.name}/`) ? relative.slice(folder.name.length + 1) : relative;
      files.add(vscode.Uri.joinPath(folder.uri, inside).fsPath);
    }
  }
  return [...files];
}
