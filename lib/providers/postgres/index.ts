/**
 * `nest-scheduler-lock/postgres`: locks in PostgreSQL through `pg` (an optional peer, loaded only by this
 * entry point). See the README, "PostgreSQL".
 */
export { PostgresLockProvider, type PostgresLockProviderOptions } from './postgres-lock-provider.js';
