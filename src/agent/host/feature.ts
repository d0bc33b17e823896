import type { FeatureHost } from '../../shell/featureHost';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { AgentToolbox } from '../../runtime/host/toolbox';
import { configureTools } from './toolsPicker';

/** The agent's toolbox (terminal, MCP servers, other extensions' tools, auto-approval) and its commands. */
export function activateAgent(host: FeatureHost): AgentToolbox {
  const toolbox = host.own(new AgentToolbox(host.context, host.services, () => workspaceGuard()));
  host.command('modelGateway.agent.togglePause', () => toolbox.setPaused(!toolbox.paused));
  host.command('modelGateway.agent.configureTools', () => configureTools(toolbox));
  return toolbox;
}
