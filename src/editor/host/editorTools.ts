import * as vscode from 'vscode';
import type { ToolSource } from '../../runtime/host/toolbox';
import type { ActionApprover } from '../../runtime/core/approval';
import { runsUnasked, type ToolCategory } from '../../runtime/core/autoApproval';
import { agentSettings } from '../../runtime/host/agentSettings';
import { approveRead, objectArgs } from '../../runtime/host/toolCalls';
import { ToolError, type PathGuard } from '../../tools/pathGuard';
import type { ToolDefinition, ToolResult, WordMatch } from '../../tools/workspaceTools';
import { DOCUMENT_SYMBOLS, EDITOR_READ_TOOLS, FIND_DEFINITION, FIND_REFERENCES, GET_PROBLEMS, WORKSPACE_SYMBOLS } from '../core/definitions';
import { Navigation } from './navigation';
import { counted } from '../../shell/listeners';

/**
 * What the editor knows, as the agent's tools: problems, definitions, references and symbols from
 * the language servers VS Code runs. Reads: they run unasked unless the person turned that off.
 */
export class EditorTools implements ToolSource {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('editorTools.onDidChange', this.changed.event);
  readonly navigation: Navigation;
  private readonly names = new Set(EDITOR_READ_TOOLS.map((t) => t.name));

  constructor(
    guard: () => PathGuard,
    warm?: (uri: vscode.Uri) => Promise<void>,
    words?: (word: string, glob: string | undefined, limit: number) => Promise<WordMatch[]>,
  ) {
    this.navigation = new Navigation(guard, warm, words);
  }

  definitions(): ToolDefinition[] {
    return EDITOR_READ_TOOLS;
  }

  owns(name: string): boolean {
    return this.names.has(name);
  }

  category(): ToolCategory {
    return { kind: 'read' };
  }

  async run(
    name: string,
    rawArgs: string,
    approver: ActionApprover,
    callId: string | undefined,
    signal: AbortSignal | undefined,
    paused: boolean,
  ): Promise<ToolResult> {
    const args = objectArgs(rawArgs);
    if (!args) return { content: `Error: the arguments are not a JSON object: ${rawArgs.slice(0, 200)}`, isError: true };
    if (!runsUnasked({ kind: 'read' }, agentSettings().auto, paused) && !(await approveRead({ name, args: rawArgs, approver, callId, signal, paused }))) {
      return { content: `The person rejected the ${name} call; nothing was read.`, isError: true };
    }
    try {
      const nav = this.navigation;
      switch (name) {
        case GET_PROBLEMS.name:
          return ok(await nav.problems(args));
        case FIND_DEFINITION.name:
          return ok(await nav.definitions(args));
        case FIND_REFERENCES.name:
          return ok(await nav.references(args));
        case WORKSPACE_SYMBOLS.name:
          return ok(await nav.workspaceSymbols(args));
        case DOCUMENT_SYMBOLS.name:
          return ok(await nav.documentSymbols(args));
        default:
          return { content: `Error: there is no tool named "${name}".`, isError: true };
      }
    } catch (err) {
      return { content: `Error: ${err instanceof ToolError ? err.message : err instanceof Error ? err.message : String(err)}`, isError: true };
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function ok(content: string): ToolResult {
  return { content, isError: false };
}
