/**
 * `nest-scheduler-lock/locks-store`: a `LockStore` for `@nestjs/locks` 0.0.1 on this package's stores, with the
 * in-memory provider. Loads neither Nest nor `@nestjs/schedule`. Take `RedisLockProvider` from
 * `nest-scheduler-lock/redis` and `PostgresLockProvider` from `nest-scheduler-lock/postgres`.
 *
 * @module nest-scheduler-lock/locks-store
 */

export { SchedulerLockStore, type LockAcquireResult, type LockStore } from './scheduler-lock-store.js';
export type { OwnerAddressedLockProvider, OwnerRelease, OwnerRenewal } from '../core/provider/provider-abilities.js';
export {
  InMemoryLockProvider,
  type InMemoryLockProviderOptions,
} from '../providers/in-memory/in-memory-lock-provider.js';
