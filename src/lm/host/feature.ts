import * as vscode from 'vscode';
import type { SearchService } from '../../search/host/searchService';
import type { FeatureHost } from '../../shell/featureHost';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { chatProviderApi, hasToolsApi } from './api';
import { LmAccess, manageAccess } from './access';
import { GatewayChatProvider, LM_VENDOR } from './chatProvider';
import { registerGatewayTools } from './tools/register';
import { chooseUtilityModel } from './utilityModels';

/** What this VS Code offered: tested by the integration suite on each version. */
export interface LanguageModelSupport {
  chatProvider: boolean;
  tools: boolean;
}

/**
 * Plugs the gateway into VS Code's own AI where the editor has the APIs: the chat models as a
 * language-model provider (1.104+), the gateway's abilities as tools (1.95+). On an older VS
 * Code nothing is registered and nothing fails.
 */
export function activateLanguageModels(host: FeatureHost, search: SearchService): { access: LmAccess; support: LanguageModelSupport } {
  const { services, context } = host;
  const access = new LmAccess(services, context.globalState, context.extension.id);
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => host.command(id, fn);
  const disposables: vscode.Disposable[] = [];
  const api = chatProviderApi();
  reg('modelGateway.lm.manageAccess', () => manageAccess(access));
  let provider: GatewayChatProvider | undefined;
  if (api) {
    provider = new GatewayChatProvider(services, access);
    disposables.push(provider, api.registerLanguageModelChatProvider(LM_VENDOR, provider));
    provider.announce();
  }
  void vscode.commands.executeCommand('setContext', 'modelGateway.languageModelProvider', !!api);
  reg('modelGateway.lm.chooseUtilityModel', () =>
    provider ? chooseUtilityModel(() => provider.provideLanguageModelChatInformation({ silent: false })) : undefined,
  );
  const tools = hasToolsApi();
  if (tools) disposables.push(...registerGatewayTools({ services, access, search, guard: workspaceGuard }));
  // The "Manage" entry VS Code shows next to our models.
  reg('modelGateway.manageLanguageModels', async () => {
    const pick = await vscode.window.showQuickPick(
      [
        { label: vscode.l10n.t('Set API Key'), command: 'modelGateway.setApiKey' },
        { label: vscode.l10n.t('Set Gateway URL'), command: 'modelGateway.setBaseUrl' },
        {
          label: vscode.l10n.t('Model capabilities (context window, images, tools)…'),
          command: 'workbench.action.openSettings',
          arg: 'modelGateway.modelOverrides',
        },
        ...(provider ? [{ label: vscode.l10n.t("Model for VS Code chat's utility requests…"), command: 'modelGateway.lm.chooseUtilityModel' }] : []),
        { label: vscode.l10n.t('Open the Account view'), command: 'modelGateway.account.focus' },
      ],
      { title: vscode.l10n.t('Model Gateway language models') },
    );
    if (pick) await vscode.commands.executeCommand(pick.command, ...(pick.arg ? [pick.arg] : []));
  });
  services.log.info(`language models: ${api ? 'provider registered' : 'no provider API in this VS Code'}; ${tools ? 'tools registered' : 'no tools API'}`);
  disposables.forEach((d) => host.own(d));
  return { access, support: { chatProvider: !!api, tools } };
}
