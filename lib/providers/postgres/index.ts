/**
 * `nest-scheduler-lock/postgres`: locks in PostgreSQL through `pg` (an optional peer, loaded only by this
 * entry point). See the README, "PostgreSQL".
 *
 * @module nest-scheduler-lock/postgres
 */

export { PostgresLockProvider } from './postgres-lock-provider.js';
export type { PostgresLockProviderOptions } from './postgres-options.js';
export type { PostgresOperatorProvider } from './postgres-operator-provider.js';
