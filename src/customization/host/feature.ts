import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { FeatureHost } from '../../shell/featureHost';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { Customizations } from './customizations';

/** Custom agents, prompt files and skills of the workspace: in the mode picker, as `/` commands, and as `read_skill`. */
export function activateCustomizations(host: FeatureHost, agent: AgentToolbox): Customizations {
  const customizations = host.own(
    new Customizations(
      () => workspaceGuard(),
      (line) => host.services.log.info(line),
    ),
  );
  agent.addSource(customizations);
  agent.customizations = customizations;
  host.afterActivation(() => customizations.refresh());
  return customizations;
}
