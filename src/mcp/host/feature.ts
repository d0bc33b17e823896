import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { FeatureHost } from '../../shell/featureHost';
import type { CompletionSpendByDay } from '../../common/usageReport';
import { McpHub } from './hub';
import { showServers } from './serversPick';
import { VsCodeTools } from './vscodeTools';

/** MCP servers and other extensions' tools, as tool sources of the agent; `usage` (the Usage view) is told what servers' sampling spent. */
export function activateMcp(host: FeatureHost, agent: AgentToolbox, usage: { serverSpend: (() => Record<string, CompletionSpendByDay>) | undefined }): McpHub {
  const hub = host.own(new McpHub(host.services, host.context));
  // What servers' sampling spent shows in the Usage view, a series per server.
  usage.serverSpend = () => hub.sampling.spendByDay();
  agent.addSource(hub);
  agent.contextSource = hub;
  const own = (host.context.extension.packageJSON as { contributes?: { languageModelTools?: { name: string }[] } }).contributes?.languageModelTools ?? [];
  agent.addSource(host.own(new VsCodeTools(new Set(own.map((t) => t.name)))));
  host.command('modelGateway.mcp.showServers', () => showServers(hub));
  host.command('modelGateway.mcp.reviewWaiting', () => hub.reviewWaiting());
  // Servers start after activation: activation never waits for a process or a network.
  host.afterActivation(() => hub.reload());
  return hub;
}
