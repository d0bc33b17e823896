import * as vscode from 'vscode';
import { formatCost } from '../../common/money';
import { commandLineOf } from '../core/config';
import type { McpHub } from './hub';
import type { McpServer, ServerState } from './server';

function describe(state: ServerState): string {
  switch (state.kind) {
    case 'running':
      return state.tools.length === 1 ? vscode.l10n.t('running · 1 tool') : vscode.l10n.t('running · {0} tools', state.tools.length);
    case 'failed':
      return state.retryAt
        ? vscode.l10n.t('failed: {0} · restarts in {1} s', state.message, Math.max(0, Math.round((state.retryAt - Date.now()) / 1000)))
        : vscode.l10n.t('failed: {0}', state.message);
    case 'needs-confirmation':
      return vscode.l10n.t('waiting for your confirmation to start');
    case 'untrusted':
      return vscode.l10n.t('not started: the workspace is not trusted');
    case 'needs-sign-in':
      return vscode.l10n.t('waiting for you to sign in');
    case 'starting':
      return vscode.l10n.t('starting');
    case 'stopped':
      return vscode.l10n.t('stopped');
  }
}

const ICON: Record<ServerState['kind'], string> = {
  running: 'pass-filled',
  starting: 'loading~spin',
  failed: 'error',
  stopped: 'circle-outline',
  'needs-confirmation': 'shield',
  untrusted: 'workspace-untrusted',
  'needs-sign-in': 'account',
};

/** Model Gateway: MCP Servers: each server's state and tools; Start, Stop, Restart, the log. */
export async function showServers(hub: McpHub): Promise<void> {
  const servers = hub.list();
  if (servers.length === 0) {
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t('No MCP servers are configured. Add them in .vscode/mcp.json (this workspace) or the setting modelGateway.mcp.servers (yours).'),
      vscode.l10n.t('Open User Settings'),
    );
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.mcp');
    return;
  }
  type Item = vscode.QuickPickItem & { server: McpServer };
  const items: Item[] = servers.map((s) => ({
    label: `$(${ICON[s.state.kind]}) ${s.name}`,
    description: `${s.config.source === 'workspace' ? vscode.l10n.t('workspace') : vscode.l10n.t('user')} · ${describe(s.state)}`,
    detail: s.state.kind === 'failed' && s.state.stderr ? s.state.stderr.split('\n').slice(-2).join(' ⏎ ') : commandLineOf(s.config.spec),
    server: s,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('MCP servers'),
    placeHolder: hub.problems.length
      ? vscode.l10n.t('{0} configuration problem(s): see the log', hub.problems.length)
      : vscode.l10n.t('Pick a server to start, stop or restart it'),
  });
  if (!picked) return;
  const s = picked.server;
  const running = s.state.kind === 'running' || s.state.kind === 'starting';
  const sampling = hub.samplingServer(s);
  const allowed = hub.sampling.isAlwaysAllowed(sampling);
  const signedIn = hub.isSignedIn(s.name);
  type Action = { label: string; run: () => unknown };
  const start: Action = { label: vscode.l10n.t('Start'), run: () => hub.startByPerson(s.name) };
  const actions: Action[] = [
    ...(s.state.kind === 'needs-sign-in'
      ? [{ label: vscode.l10n.t('Sign In'), run: () => hub.signIn(s.name) }]
      : running
        ? [
            { ...start, label: vscode.l10n.t('Restart') },
            { label: vscode.l10n.t('Stop'), run: () => s.stop() },
          ]
        : [start]),
    ...(s.state.kind === 'running' ? [{ label: vscode.l10n.t('List Tools'), run: () => listTools(s) }] : []),
    ...(allowed ? [{ label: vscode.l10n.t('Ask Before Each Sampling Request'), run: () => hub.sampling.setAlwaysAllowed(sampling, false) }] : []),
    ...(signedIn ? [{ label: vscode.l10n.t('Sign Out'), run: () => hub.signOut(s.name) }] : []),
    { label: vscode.l10n.t('Show Log'), run: () => hub.log.show(true) },
  ];
  const spent = hub.sampling.spentToday(s.name);
  const sampled =
    spent > 0 || allowed
      ? allowed
        ? vscode.l10n.t(' · sampling always allowed, {0} today', formatCost(spent))
        : vscode.l10n.t(' · sampling {0} today', formatCost(spent))
      : '';
  const action = await vscode.window.showQuickPick(actions, { title: vscode.l10n.t('MCP server {0}: {1}{2}', s.name, describe(s.state), sampled) });
  await action?.run();
}

async function listTools(s: McpServer): Promise<void> {
  if (s.state.kind === 'running') {
    await vscode.window.showQuickPick(
      s.state.tools.map((t) => ({ label: t.name, detail: t.description })),
      { title: vscode.l10n.t('Tools of {0}', s.name) },
    );
  }
}
