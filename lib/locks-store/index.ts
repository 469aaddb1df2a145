/**
 * `nest-scheduler-lock/locks-store`: a `LockStore` for `@nestjs/locks` 0.0.1 on this package's providers. Loads
 * neither Nest nor `@nestjs/schedule`. Take `RedisLockProvider` from `nest-scheduler-lock/redis`,
 * `PostgresLockProvider` from `nest-scheduler-lock/postgres` and `InMemoryLockProvider` from the main entry.
 *
 * @module nest-scheduler-lock/locks-store
 */

export { SchedulerLockStore, type LockAcquireResult, type LockStore } from './scheduler-lock-store.js';
