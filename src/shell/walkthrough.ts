import * as vscode from 'vscode';
import type { FeatureHost } from './featureHost';

export const WALKTHROUGH_COMMAND = 'modelGateway.openWalkthrough';
/** Set once the walkthrough was opened on its own, so it never opens unasked again. */
const OFFERED = 'modelGateway.walkthroughOffered';

/**
 * The Get Started walkthrough (package.json `contributes.walkthroughs`): its command (from the
 * Account view's welcome and the palette), and its opening once after the first install, for a
 * person who has not connected a gateway yet (credentials from the environment count as connected).
 */
export function activateWalkthrough(host: FeatureHost): void {
  const open = () => vscode.commands.executeCommand('workbench.action.openWalkthrough', `${host.context.extension.id}#gettingStarted`, false);
  host.command(WALKTHROUGH_COMMAND, open);
  host.afterActivation(async () => {
    // The in-host test run (MODEL_GATEWAY_TEST, see the testing API) is no first install: an editor
    // opening on its own there would take the focus from the editors its tests open.
    if (process.env.MODEL_GATEWAY_TEST === '1' || host.services.isConfigured() || host.context.globalState.get<boolean>(OFFERED)) return;
    await host.context.globalState.update(OFFERED, true);
    await open();
  });
}
