import type pg from 'pg';
import type { LockProviderSubject } from '../../lib/provider-tests/index.js';
import { PostgresLockProvider, type PostgresLockProviderOptions } from '../../lib/providers/postgres/index.js';
import { createSchema, dropSchema, postgresPool, uniqueSchema } from '../support/shared-postgres.js';

/** Nodes that are PostgresLockProviders, with the pools and schema they use. */
export interface PostgresFixture {
  readonly schema: string;
  /** The admin pool, for looking at the table directly. */
  readonly admin: pg.Pool;
  /** A node on a pool of its own. */
  connect(options?: PostgresLockProviderOptions): PostgresLockProvider;
  /** The pool a provider of {@link connect} runs on. */
  poolOf(provider: PostgresLockProvider): pg.Pool;
  /** Ends the pool of one node before {@link close}. */
  disconnect(provider: PostgresLockProvider): Promise<void>;
  /** Ends the pools still open and drops the schema. */
  close(): Promise<void>;
}

/**
 * Nodes on the shared PostgreSQL in a fresh schema, each a provider on a pool of its own (`node-<n>`, with
 * `poolOptions`: another `port`, say, a pooler's). Closing ends the pools and drops the schema.
 */
export async function postgresFixture(label: string, poolOptions: pg.PoolConfig = {}): Promise<PostgresFixture> {
  const admin = postgresPool();
  const schema = uniqueSchema(label);
  await createSchema(admin, schema);
  const poolsByProvider = new Map<PostgresLockProvider, pg.Pool>();
  let made = 0;
  return {
    schema,
    admin,
    connect(options = {}) {
      const pool = postgresPool(poolOptions);
      made += 1;
      const provider = new PostgresLockProvider(pool, { schema, node: `node-${made}`, ...options });
      poolsByProvider.set(provider, pool);
      return provider;
    },
    poolOf: (provider) => poolsByProvider.get(provider)!,
    async disconnect(provider) {
      const pool = poolsByProvider.get(provider);
      poolsByProvider.delete(provider);
      await pool?.end();
    },
    async close() {
      await Promise.all([...poolsByProvider.values()].map((pool) => pool.end()));
      await dropSchema(admin, schema);
      await admin.end();
    },
  };
}

/**
 * The conformance kit's subject: nodes on one fresh schema (made on the first node), each on a pool of its own
 * (with `poolOptions`, read on the first node),
 * warmed up (table, connection, prepared statements) before a check times its 50 ms locks; `close()` drops it.
 */
export function postgresSubject(
  label: string,
  poolOptions: () => pg.PoolConfig = () => ({}),
): LockProviderSubject<PostgresLockProvider> & { close(): Promise<void> } {
  let fixture: Promise<PostgresFixture> | undefined;
  // The tables are made by one node before any other: checks that start at once would all make them.
  const madeTables = async (made: PostgresFixture) => {
    const first = made.connect();
    await first.readJobRecord('warm-up').finally(() => made.disconnect(first));
    return made;
  };
  const open = () => (fixture ??= postgresFixture(label, poolOptions()).then(madeTables));
  let connecting: Promise<unknown> = Promise.resolve();
  return {
    name: 'PostgresLockProvider',
    provider: PostgresLockProvider,
    fencingTokens: true,
    singleUseLocks: true,
    create(node) {
      // One connection opened at a time: checks that start at once would open a dozen, each a new backend.
      const made = connecting.then(async () => {
        const provider = (await open()).connect(node === undefined ? {} : { node });
        await provider.readJobRecord('warm-up');
        return provider;
      });
      connecting = made.catch(() => undefined);
      return made;
    },
    cleanup: async (node) => (await open()).disconnect(node),
    close: async () => (await fixture)?.close(),
  };
}
