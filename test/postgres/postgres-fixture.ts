import type pg from 'pg';
import { PostgresLockProvider, type PostgresLockProviderOptions } from '../../lib/providers/postgres/index.js';
import type { LockProviderFixture } from '../providers/lock-provider.acceptance.js';
import { createSchema, dropSchema, postgresPool, uniqueSchema } from '../support/shared-postgres.js';

/** A fixture whose nodes are PostgresLockProviders, with the pools and schema they use. */
export interface PostgresFixture extends LockProviderFixture {
  readonly schema: string;
  /** The admin pool, for looking at the table directly. */
  readonly admin: pg.Pool;
  connect(options?: PostgresLockProviderOptions): PostgresLockProvider;
  /** The pool a provider of {@link connect} runs on. */
  poolOf(provider: PostgresLockProvider): pg.Pool;
}

/**
 * Nodes on the shared PostgreSQL in a fresh schema, each a provider on a pool of its own (`node-<n>`).
 * Closing ends the pools and drops the schema.
 */
export async function postgresFixture(label: string): Promise<PostgresFixture> {
  const admin = postgresPool();
  const schema = uniqueSchema(label);
  await createSchema(admin, schema);
  const pools: pg.Pool[] = [];
  const poolsByProvider = new Map<PostgresLockProvider, pg.Pool>();
  return {
    schema,
    admin,
    connect(options = {}) {
      const pool = postgresPool();
      pools.push(pool);
      const provider = new PostgresLockProvider(pool, { schema, lockedBy: `node-${pools.length}`, ...options });
      poolsByProvider.set(provider, pool);
      return provider;
    },
    poolOf: (provider) => poolsByProvider.get(provider)!,
    async close() {
      await Promise.all(pools.map((pool) => pool.end()));
      await dropSchema(admin, schema);
      await admin.end();
    },
  };
}
