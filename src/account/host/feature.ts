import * as vscode from 'vscode';
import type { FeatureHost } from '../../shell/featureHost';
import { registerAccountCommands } from './commands';
import { registerWalletCommands } from './walletCommands';
import { AccountTree } from './tree';

/** The Account view (user, balance, keys, models) and its commands. */
export function activateAccount(host: FeatureHost): AccountTree {
  const { services } = host;
  const tree = host.own(new AccountTree(services));
  host.own(vscode.window.createTreeView('modelGateway.account', { treeDataProvider: tree, showCollapseAll: true }));
  registerAccountCommands(services, tree, (id, fn) => host.command(id, fn));
  registerWalletCommands(services, tree, (id, fn) => host.command(id, fn));
  host.command('modelGateway.topUp', () => {
    const base = services.settings().baseUrl;
    if (base) void vscode.env.openExternal(vscode.Uri.parse(base));
  });
  return tree;
}
