// What stands in for the parts of node-postgres the team store's bundles leave out (esbuild.js,
// `pgClientOnly`). Each behaves as the real part does when it finds nothing, or throws at once,
// so that no stand-in can leave a connection's promise unsettled (test/unit/team-store-server.test.ts
// drives each one).
module.exports = {
  // pg's index subclasses the pool when it loads; the store never makes one.
  'pg-pool': "module.exports = class PoolLeftOut { constructor() { throw new Error('pg.Pool is left out of this bundle: the team store uses one Client'); } };",
  // Loaded only when NODE_PG_FORCE_NATIVE is set, or pg.native is read.
  './native': "throw new Error('pg-native is left out of this bundle');",
  // The .pgpass reader: finds no password (the store gives its own, or says that one is missing).
  pgpass: 'module.exports = function pgpassLeftOut(params, callback) { process.nextTick(callback, undefined); };',
  // Read only for a connection string; the store configures its Client field by field.
  'pg-connection-string':
    "module.exports = { parse() { throw new Error('connection strings are not read in this bundle: configure the Client field by field'); } };",
};
