import type { FeatureHost } from '../../shell/featureHost';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { AgentToolbox } from './toolbox';

/** The agent's toolbox (terminal, MCP servers, auto-approval) and its commands. */
export function activateAgent(host: FeatureHost): AgentToolbox {
  const toolbox = host.own(new AgentToolbox(host.context, host.services, () => workspaceGuard()));
  host.command('modelGateway.agent.togglePause', () => toolbox.setPaused(!toolbox.paused));
  return toolbox;
}
