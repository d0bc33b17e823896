import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayTool, textField } from './tool';

const Input = z.looseObject({ query: textField });

/** Semantic search of the workspace index: free, rate-limited for other callers. */
export class SemanticSearchTool extends GatewayTool<z.infer<typeof Input>> {
  readonly name = 'modelGateway_semanticSearch';
  protected readonly input = Input;

  protected prepare(input: z.infer<typeof Input>): vscode.PreparedToolInvocation {
    return { invocationMessage: vscode.l10n.t('Searching the workspace for “{0}”', input.query) };
  }

  protected failure(): string {
    return 'semantic search failed';
  }

  protected async run(input: z.infer<typeof Input>, signal: AbortSignal): Promise<string> {
    const refused = this.deps.access.rateRefusal('semantic search') ?? this.deps.access.capRefusal();
    if (refused) return refused;
    const search = this.deps.search;
    if (!search?.ready()) return 'Error: the workspace has no semantic index yet. The person can build it with "Model Gateway: Build Semantic Index".';
    return search.toolAnswer(input, signal);
  }
}
