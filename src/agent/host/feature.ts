import * as vscode from 'vscode';
import type { FeatureHost } from '../../shell/featureHost';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { AgentToolbox } from '../../runtime/host/toolbox';
import { configureSandbox } from '../../runtime/host/commandSandbox';
import { configureTools } from './toolsPicker';
import { keepFallbackCounts } from '../../runtime/host/fallbackChain';

/** The agent's toolbox (terminal, MCP servers, other extensions' tools, auto-approval) and its commands. */
export function activateAgent(host: FeatureHost): AgentToolbox {
  configureSandbox({
    globalStorage: host.context.globalStorageUri.fsPath,
    // Said once per machine and reason: where the sandbox cannot run, commands ask as before.
    tellUnavailable: (reason) => {
      host.services.log.info(`agent: commands run without a sandbox here: ${reason}`);
      const key = 'modelGateway.agent.sandboxUnavailableTold';
      if (host.context.globalState.get<string>(key) === reason) return;
      void host.context.globalState.update(key, reason);
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Commands the agent runs cannot be sandboxed on this machine: {0}. They ask before they run, as before.', reason),
      );
    },
  });
  // Every surface's fallbacks are counted per model and day for the Usage view.
  host.own(keepFallbackCounts(host.context.globalState));
  const toolbox = host.own(new AgentToolbox(host.context, host.services, () => workspaceGuard()));
  host.command('modelGateway.agent.togglePause', () => toolbox.setPaused(!toolbox.paused));
  host.command('modelGateway.agent.configureTools', () => configureTools(toolbox));
  return toolbox;
}
