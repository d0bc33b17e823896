import type { FeatureHost } from '../../shell/featureHost';
import { SearchService, semanticSearchCommand } from './searchService';

/** Semantic search: the index service, its commands, and loading the stored index after start-up. */
export function activateSearch(host: FeatureHost): SearchService {
  const { services } = host;
  const search = host.own(new SearchService(services, host.context));
  host.command('modelGateway.search.query', (initial?: unknown) => semanticSearchCommand(search, services, typeof initial === 'string' ? initial : undefined));
  host.command('modelGateway.search.build', async () => {
    const loaded = await search.load();
    return search.build({ clean: loaded === 'model-changed' });
  });
  host.command('modelGateway.search.rebuild', () => search.build({ clean: true, reason: 'Rebuilding the search index' }));
  host.afterActivation(() => search.load().catch((err) => services.log.error('could not load the search index', err)));
  return search;
}
