export { SchedulerLockModule } from './scheduler-lock.module.js';
export { SchedulerLock } from './decorators/scheduler-lock.decorator.js';
export { LockedJobRegistry } from './locked-job.registry.js';
export { LockedJobStatus, type JobStatus } from './locked-job.status.js';
export { SCHEDULER_LOCK_PROVIDER } from './scheduler-lock.constants.js';
export type { SchedulerLockModuleOptions } from './interfaces/scheduler-lock-module-options.interface.js';
export type {
  SchedulerLockModuleAsyncOptions,
  SchedulerLockModuleExtras,
  SchedulerLockOptionsFactory,
} from './scheduler-lock.module-definition.js';
export type { SchedulerLockOptions } from './interfaces/scheduler-lock-options.interface.js';

export { parseDuration, type Duration, type DurationString } from './core/duration.js';
export { SchedulerLockConfigurationError, DEFAULT_LEASE, type KeepAlive, type LockConfiguration } from './core/lock-configuration.js';
export {
  LockNotHeldError,
  type JobRecord,
  type JobRunState,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type OccurrenceClaim,
  type RecoveryClaim,
  type RunOutcome,
  type LockProvider,
  type SimpleLock,
} from './core/lock-provider.js';
export { AbstractSimpleLock } from './core/abstract-simple-lock.js';
export { LockingTaskExecutor, type ExecuteWithLockOptions, type LockingTaskExecutorSettings } from './core/locking-task-executor.js';
export type { TaskResult, SkipReason } from './core/task-result.js';
export { LockAssert } from './core/lock-assert.js';
export { LockExtender } from './core/lock-extender.js';
export { currentLock, type LockContext } from './core/lock-context.js';
export { LockLostError, LockExtensionError, LockStoreUnavailableError } from './core/errors.js';
export { LockEvents, type LockEvent, type LockEventType, type LockLostReason } from './core/lock-events.js';

export { RedisLockProvider, DEFAULT_KEY_PREFIX, type RedisLockProviderOptions } from './redis/redis-lock-provider.js';
export type { RedisClient } from './redis/redis-scripts.js';
export { InMemoryLockProvider } from './in-memory/in-memory-lock-provider.js';
