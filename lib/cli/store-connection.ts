import type { OperatorProvider } from '../operators/operator-provider.js';
import type { StoreTarget } from './store-target.js';

/** The CLI's way into the apps' store: the operator port, and how to say where it looked and what failed. */
export interface StoreConnection {
  /** The store's operator records (the console's port), where the apps keep them. */
  readonly operatorProvider: OperatorProvider;
  /** Where in the store the CLI looks, for messages: `key prefix "nsl:"`, `schema "public", table prefix "x_"`. */
  readonly scope: string;
  /** A failure said the store's way (endpoint and cause, never a password); `undefined` when it is not the store's. */
  failureLine(error: unknown): string | undefined;
  close(): Promise<void>;
}

/** What `npm` needs for `--postgres`: `pg` is an optional peer, installed by the apps that use PostgreSQL. */
const PG_MISSING =
  'PostgreSQL needs the pg package, an optional peer of nest-scheduler-lock: install it beside it (npm install pg)';

/**
 * Connects to the store of `target`. The PostgreSQL piece (and `pg` with it) is imported only here, only
 * for `--postgres` / `DATABASE_URL`: a Redis user needs no `pg`.
 * @throws LockProviderUnavailableError when the store does not answer, naming it (never a password).
 */
export async function connectStore(target: StoreTarget): Promise<StoreConnection> {
  if (target.store === 'redis') {
    const { connectRedisStore } = await import('./redis-connection.js');
    return connectRedisStore(target.redis, target.keyPrefix);
  }
  let postgres: typeof import('../providers/postgres/postgres-cli-connection.js');
  try {
    postgres = await import('../providers/postgres/postgres-cli-connection.js');
  } catch (error) {
    // `require()` (the package's build) says MODULE_NOT_FOUND, `import` ERR_MODULE_NOT_FOUND.
    const missing = ['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND'].includes(
      String((error as NodeJS.ErrnoException).code),
    );
    if (missing && /['"]pg['"]/.test((error as Error).message)) throw new Error(PG_MISSING, { cause: error });
    throw error;
  }
  return postgres.connectPostgresStore(target);
}
