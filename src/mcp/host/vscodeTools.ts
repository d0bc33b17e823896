import * as vscode from 'vscode';
import type { ActionApprover } from '../../runtime/core/approval';
import type { ToolCategory } from '../../runtime/core/autoApproval';
import { approveToolCall, objectArgs } from '../../runtime/host/toolCalls';
import type { ToolSource } from '../../runtime/host/toolbox';
import type { ToolDefinition, ToolResult } from '../../tools/workspaceTools';
import { sameJobAs } from '../core/builtinTools';
import { definitionOf, qualifiedName, resultText } from '../core/tools';
import { counted } from '../../shell/listeners';

/** Approval entries and names use this server name for tools other extensions registered. */
export const VSCODE_SOURCE = 'vscode';

/**
 * The tools other extensions (and VS Code's own MCP servers) register with `vscode.lm`, offered
 * to our chat as `vscode__<tool>`, so a person who configured them for VS Code does not configure
 * them twice. Feature-detected: on a VS Code without `vscode.lm.tools` there are none. Our own
 * tools (registered for VS Code's chat) are left out, and so are VS Code's and Copilot's tools that
 * do what ours do (`builtinTools.ts`). The others are off until the person turns them on in the
 * tools picker (the toolbox keeps the choice). Each call asks first, like an MCP tool.
 */
export class VsCodeTools implements ToolSource, vscode.Disposable {
  readonly origin = 'extension' as const;
  /** VS Code's and Copilot's tools left out because one of ours does the same job (for the picker to say). */
  leftOut: { name: string; ours: string }[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('vscodeTools.onDidChange', this.changed.event);
  private byName = new Map<string, { tool: string; definition: ToolDefinition }>();

  constructor(private readonly ownTools: ReadonlySet<string>) {}

  private available(): boolean {
    const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
    return !!lm && Array.isArray(lm.tools) && typeof lm.invokeTool === 'function';
  }

  definitions(): ToolDefinition[] {
    this.byName = new Map();
    this.leftOut = [];
    if (!this.available()) return [];
    const taken = new Set<string>();
    for (const t of vscode.lm.tools) {
      if (this.ownTools.has(t.name)) continue;
      const ours = sameJobAs(t.name);
      if (ours) {
        this.leftOut.push({ name: t.name, ours });
        continue;
      }
      const name = qualifiedName(VSCODE_SOURCE, t.name, taken);
      taken.add(name);
      this.byName.set(name, {
        tool: t.name,
        definition: definitionOf(VSCODE_SOURCE, { name: t.name, description: t.description, inputSchema: t.inputSchema }, name),
      });
    }
    return [...this.byName.values()].map((t) => t.definition);
  }

  owns(name: string): boolean {
    if (this.byName.size === 0) this.definitions();
    return this.byName.has(name);
  }

  category(name: string): ToolCategory {
    return { kind: 'tool', server: VSCODE_SOURCE, tool: this.byName.get(name)?.tool ?? name };
  }

  async run(
    name: string,
    rawArgs: string,
    approver: ActionApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    paused: boolean,
  ): Promise<ToolResult> {
    const t = this.byName.get(name);
    if (!t) return { content: `Error: the tool "${name}" is not registered any more.`, isError: true };
    const input = objectArgs(rawArgs);
    if (!input) return { content: 'Error: the arguments are not a JSON object.', isError: true };
    const go = await approveToolCall({
      server: VSCODE_SOURCE,
      tool: t.tool,
      where: vscode.l10n.t('a tool another extension registered'),
      args: input,
      reason: vscode.l10n.t('tools of other extensions ask unless allowed (modelGateway.agent.autoApprove.mcp)'),
      approver,
      callId,
      signal,
      paused,
    });
    if (!go) return { content: `The person rejected the call of ${t.tool}; it did not run.`, isError: true };
    const cancel = new vscode.CancellationTokenSource();
    signal?.addEventListener('abort', () => cancel.cancel(), { once: true });
    try {
      const r = await vscode.lm.invokeTool(t.tool, { input, toolInvocationToken: undefined }, cancel.token);
      const parts = r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? { type: 'text', text: p.value } : { type: 'other' }));
      return { content: resultText(parts), isError: false };
    } catch (err) {
      return { content: `Error: ${t.tool} failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    } finally {
      cancel.dispose();
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
