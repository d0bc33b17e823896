import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { loadGateway } from '../../../shell/services';
import { GatewayTool, textField } from './tool';

const Input = z.object({ text: textField });
type Input = z.infer<typeof Input>;

/** A moderation check of a text with the multimodal moderation model: free, rate-limited. */
export class ModerateTool extends GatewayTool<Input> {
  readonly name = 'modelGateway_moderate';
  protected readonly input = Input;

  protected prepare(): vscode.PreparedToolInvocation {
    return { invocationMessage: vscode.l10n.t('Checking the text with the moderation model') };
  }

  protected failure(): string {
    return 'could not check moderation';
  }

  protected async run(input: Input, signal: AbortSignal): Promise<string> {
    if (!input.text) return 'Error: "text" is required.';
    const limited = this.deps.access.rateRefusal('moderation');
    if (limited) return limited;
    const gw = loadGateway();
    const response = await this.deps.services.client().moderations.create({ model: gw.MULTIMODAL_MODERATION_MODEL, input: input.text }, { signal });
    const result = response.results[0];
    if (!result) return 'Error: the moderation answer had no result.';
    const flagged = gw.flaggedCategories(result);
    return flagged.length ? `Flagged: ${flagged.map((c) => `${c.category} (${c.score.toFixed(2)})`).join(', ')}.` : 'Nothing flagged.';
  }
}
