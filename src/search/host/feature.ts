import * as vscode from 'vscode';
import type { FeatureHost } from '../../shell/featureHost';
import { SearchService, semanticSearchCommand } from './searchService';
import { SET_PASSWORD, TEAM_STORE_COMMANDS, TeamStoreLink } from './teamStoreLink';

/** Semantic search: the index service, its commands, and loading the stored index after start-up. */
export function activateSearch(host: FeatureHost): SearchService {
  const { services } = host;
  const team = host.own(new TeamStoreLink(services, host.context.secrets));
  const search = host.own(new SearchService(services, host.context, team));
  host.command('modelGateway.search.query', (initial?: unknown) => semanticSearchCommand(search, services, typeof initial === 'string' ? initial : undefined));
  host.command('modelGateway.search.build', async () => {
    const loaded = await search.load();
    return search.build({ clean: loaded === 'model-changed' });
  });
  host.command('modelGateway.search.rebuild', () => search.build({ clean: true, reason: vscode.l10n.t('Rebuilding the search index') }));
  host.command(TEAM_STORE_COMMANDS.setPassword, () => team.setPassword());
  host.command(TEAM_STORE_COMMANDS.status, async () => {
    const text = await search.teamStatus();
    const { title, lines } = team.summary();
    void vscode.window.showInformationMessage(title, { modal: true, detail: lines.join('\n') }, SET_PASSWORD(), vscode.l10n.t('Open Settings')).then((c) => {
      if (c === SET_PASSWORD()) void vscode.commands.executeCommand(TEAM_STORE_COMMANDS.setPassword);
      else if (c) void vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.search.teamStore');
    });
    return text;
  });
  host.afterActivation(() => search.load().catch((err) => services.log.error('could not load the search index', err)));
  return search;
}
