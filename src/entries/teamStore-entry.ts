// The team store's Postgres client (node-postgres) as its own bundle (dist/teamStore.js), loaded
// the first time a store is set: activation and people without a store never pay for it.
export { TeamStore, TeamStoreError, parseStoreUrl, STORE_SCHEMA_VERSION } from '../search/core/team/teamStore';
export type { TeamStoreAdvice, TeamStoreOptions, TeamStoreState, TeamStoreProblem, VectorColumn } from '../search/core/team/teamStore';
