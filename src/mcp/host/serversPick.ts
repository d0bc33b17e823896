import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import { commandLineOf } from '../core/config';
import type { McpHub } from './hub';
import type { McpServer, ServerState } from './server';

function describe(state: ServerState): string {
  switch (state.kind) {
    case 'running':
      return `running · ${state.tools.length} tool${state.tools.length === 1 ? '' : 's'}`;
    case 'failed':
      return `failed: ${state.message}${state.retryAt ? ` · restarts in ${Math.max(0, Math.round((state.retryAt - Date.now()) / 1000))} s` : ''}`;
    case 'needs-confirmation':
      return 'waiting for your confirmation to start';
    case 'untrusted':
      return 'not started: the workspace is not trusted';
    case 'needs-sign-in':
      return 'waiting for you to sign in';
    default:
      return state.kind;
  }
}

const ICON: Record<ServerState['kind'], string> = { running: 'pass-filled', starting: 'loading~spin', failed: 'error', stopped: 'circle-outline', 'needs-confirmation': 'shield', untrusted: 'workspace-untrusted', 'needs-sign-in': 'account' };

/** Model Gateway: MCP Servers: each server's state and tools; Start, Stop, Restart, the log. */
export async function showServers(hub: McpHub): Promise<void> {
  const servers = hub.list();
  if (servers.length === 0) {
    const pick = await vscode.window.showInformationMessage('No MCP servers are configured. Add them in .vscode/mcp.json (this workspace) or the setting modelGateway.mcp.servers (yours).', 'Open User Settings');
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.mcp');
    return;
  }
  type Item = vscode.QuickPickItem & { server: McpServer };
  const items: Item[] = servers.map((s) => ({
    label: `$(${ICON[s.state.kind]}) ${s.name}`,
    description: `${s.config.source === 'workspace' ? 'workspace' : 'user'} · ${describe(s.state)}`,
    detail: s.state.kind === 'failed' && s.state.stderr ? s.state.stderr.split('\n').slice(-2).join(' ⏎ ') : commandLineOf(s.config.spec),
    server: s,
  }));
  const picked = await vscode.window.showQuickPick(items, { title: 'MCP servers', placeHolder: hub.problems.length ? `${hub.problems.length} configuration problem(s): see the log` : 'Pick a server to start, stop or restart it' });
  if (!picked) return;
  const s = picked.server;
  const running = s.state.kind === 'running' || s.state.kind === 'starting';
  const sampling = hub.samplingServer(s);
  const allowed = hub.sampling.isAlwaysAllowed(sampling);
  const forget = 'Ask Before Each Sampling Request';
  const signedIn = hub.isSignedIn(s.name);
  const actions = [
    ...(s.state.kind === 'needs-sign-in' ? ['Sign In'] : running ? ['Restart', 'Stop'] : ['Start']),
    ...(s.state.kind === 'running' ? ['List Tools'] : []),
    ...(allowed ? [forget] : []),
    ...(signedIn ? ['Sign Out'] : []),
    'Show Log',
  ];
  const spent = hub.sampling.spentToday(s.name);
  const action = await vscode.window.showQuickPick(actions, { title: `MCP server ${s.name}: ${describe(s.state)}${spent > 0 || allowed ? ` · sampling ${allowed ? 'always allowed, ' : ''}${formatCost(spent)} today` : ''}` });
  if (action === forget) await hub.sampling.setAlwaysAllowed(sampling, false);
  else if (action === 'Sign In') await hub.signIn(s.name);
  else if (action === 'Sign Out') await hub.signOut(s.name);
  else if (action === 'Start' || action === 'Restart') await hub.startByPerson(s.name);
  else if (action === 'Stop') await s.stop();
  else if (action === 'Show Log') hub.log.show(true);
  else if (action === 'List Tools' && s.state.kind === 'running') {
    await vscode.window.showQuickPick(
      s.state.tools.map((t) => ({ label: t.name, detail: t.description })),
      { title: `Tools of ${s.name}` },
    );
  }
}
