import type pg from 'pg';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { describeFinishedRunNotRerun } from '../occurrence/finished-run-scenario.js';
import { startPrivatePostgres } from '../support/private-postgres.js';
import { postgresPool } from '../support/shared-postgres.js';

/**
 * The Redis scenario on a private PostgreSQL cluster, stopped (fast shutdown) by PID. Each node has its own
 * pool; the short timeouts make the outage show within a second. Not paused (`SIGSTOP`): a release sent to a
 * paused server gets no answer and no error until it resumes (`statementTimeout` is the server's), so the run's
 * node never learns that its outcome is unrecorded.
 */
describeFinishedRunNotRerun('PostgreSQL', ['stopped'], async () => {
  const server = await startPrivatePostgres();
  const pools: pg.Pool[] = [];
  const providerOf = (node: string) => {
    const pool = postgresPool({ port: server.port, database: 'postgres', connectionTimeoutMillis: 500 });
    pools.push(pool);
    return new PostgresLockProvider(pool, { node, statementTimeout: 1_000 });
  };
  const reader = providerOf('reader');
  await reader.createTables();
  return {
    // The module's `node` names the node in events, the provider's in the store.
    lockOptions: async (node) => ({ provider: providerOf(node), defaultLockAtMostFor: '1m', node }),
    outage: () => server.stop(),
    recover: () => server.start(),
    readRecord: (name) => reader.readJobRecord(name),
    async stop() {
      await Promise.all(pools.map((pool) => pool.end()));
      await server.remove();
    },
  };
});
