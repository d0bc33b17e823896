import type { FeatureHost } from './featureHost';
import { registerShellCommands } from './commands';
import { activateWalkthrough } from './walkthrough';
import { WorkspaceOverrideNotice } from './workspaceOverrides';

/** The platform's own contributions: the connection commands, the walkthrough and the notice about a folder's gateway settings. */
export function activatePlatform(host: FeatureHost): { overrides: WorkspaceOverrideNotice } {
  const overrides = host.own(new WorkspaceOverrideNotice(host.services));
  registerShellCommands(host.services, (id, fn) => host.command(id, fn));
  host.afterActivation(() => overrides.check());
  activateWalkthrough(host);
  return { overrides };
}
