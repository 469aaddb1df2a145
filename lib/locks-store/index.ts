/**
 * `nest-scheduler-lock/locks-store`: a `LockStore` for `@nestjs/locks` 0.0.1 on this package's stores, with the
 * providers it wraps. Loads neither Nest nor `@nestjs/schedule`. For PostgreSQL, take `PostgresLockProvider` from
 * `nest-scheduler-lock/postgres`.
 *
 * @module nest-scheduler-lock/locks-store
 */

export { SchedulerLockStore, type LockAcquireResult, type LockStore } from './scheduler-lock-store.js';
export type { OwnerAddressedLockProvider, OwnerRelease, OwnerRenewal } from '../core/provider/provider-abilities.js';
export { RedisLockProvider, type RedisLockProviderOptions } from '../providers/redis/redis-lock-provider.js';
export {
  InMemoryLockProvider,
  type InMemoryLockProviderOptions,
} from '../providers/in-memory/in-memory-lock-provider.js';
