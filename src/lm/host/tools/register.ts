import * as vscode from 'vscode';
import { LM_TOOL_NAMES, type LmToolName } from '../../core/toolNames';
import { BalanceTool } from './balance';
import { GenerateImageTool } from './generateImage';
import { ModerateTool } from './moderate';
import { SemanticSearchTool } from './semanticSearch';
import { SpeakTool } from './speak';
import type { GatewayTool, ToolDeps } from './tool';
import { TranscribeTool } from './transcribe';

/**
 * The gateway's abilities as tools any agent in VS Code can call (Copilot's agent mode, other
 * extensions through `vscode.lm.invokeTool`), a class per tool. Paid tools ask first, with the
 * price, through VS Code's own confirmation; results are files in the workspace and short texts.
 */
export function registerGatewayTools(deps: ToolDeps): vscode.Disposable[] {
  const tools: GatewayTool<unknown>[] = [
    new SemanticSearchTool(deps),
    new GenerateImageTool(deps),
    new SpeakTool(deps),
    new TranscribeTool(deps),
    new ModerateTool(deps),
    new BalanceTool(deps),
  ];
  const byName = new Map<LmToolName, GatewayTool<unknown>>(tools.map((t) => [t.name, t]));
  return LM_TOOL_NAMES.map((name) => {
    const tool = byName.get(name);
    if (!tool) throw new Error(`No class for the language-model tool ${name} that package.json declares.`);
    return vscode.lm.registerTool(name, tool);
  });
}
