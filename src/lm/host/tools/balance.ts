import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayTool } from './tool';

const Input = z.object({});
type Input = z.infer<typeof Input>;

/** The account's balance (needs the system access token): free, rate-limited. */
export class BalanceTool extends GatewayTool<Input> {
  readonly name = 'modelGateway_balance';
  protected readonly input = Input;

  protected prepare(): vscode.PreparedToolInvocation {
    return { invocationMessage: vscode.l10n.t('Reading the gateway balance') };
  }

  protected failure(): string {
    return 'could not read the balance';
  }

  protected async run(_input: Input, signal: AbortSignal): Promise<string> {
    const limited = this.deps.access.rateRefusal('balance');
    if (limited) return limited;
    const { services } = this.deps;
    if (!services.credentials.getAccessToken())
      return 'The balance needs the system access token: the person can set it with "Model Gateway: Set System Access Token".';
    const me = await services.client().account.self({ signal });
    return `Balance: $${me.balanceDollars.toFixed(2)}${me.username ? ` (account ${me.username})` : ''}.`;
  }
}
