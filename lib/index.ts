export { SchedulerLockModule } from './nest/scheduler-lock.module.js';
export { SchedulerLock } from './nest/scheduler-lock.decorator.js';
export { LockedJobRegistry } from './nest/locked-job.registry.js';
export { LockedJobStatus, type JobStatus } from './nest/locked-job.status.js';
export { SCHEDULER_LOCK_PROVIDER } from './nest/scheduler-lock.constants.js';
export type { SchedulerLockModuleOptions } from './nest/scheduler-lock-module-options.interface.js';
export type {
  SchedulerLockModuleAsyncOptions,
  SchedulerLockModuleExtras,
  SchedulerLockOptionsFactory,
} from './nest/scheduler-lock.module-definition.js';
export type { SchedulerLockOptions } from './nest/scheduler-lock-options.interface.js';

export { parseDuration, type Duration, type DurationString } from './core/duration.js';
export {
  SchedulerLockConfigurationError,
  DEFAULT_LEASE,
  type KeepAlive,
  type LockConfiguration,
} from './core/lock-configuration.js';
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
  type RunReport,
  type LockProvider,
  type SimpleLock,
} from './core/lock-provider.js';
export type {
  JobRecordReader,
  LeaseRenewingLockProvider,
  OccurrenceLockProvider,
  RecoveringLockProvider,
} from './core/provider-abilities.js';
export type { SchedulerLockLogger } from './core/logger.js';
export type { OccurrenceOptions } from './occurrence/occurrence-options.js';
export { AbstractSimpleLock } from './core/abstract-simple-lock.js';
export { LockingTaskExecutor } from './core/locking-task-executor.js';
export type { ExecuteWithLockOptions, LockingTaskExecutorSettings } from './core/executor-settings.js';
export type { TaskResult, SkipReason } from './core/task-result.js';
export type { InstrumentedRun, RunInstrumentation } from './core/run-instrumentation.js';
export { LockAssert } from './core/lock-assert.js';
export { LockExtender } from './core/lock-extender.js';
export { currentLock, type LockContext } from './core/lock-context.js';
export { LockLostError, LockExtensionError, LockStoreUnavailableError } from './core/errors.js';
export {
  LockEvents,
  type LockEvent,
  type LockEventType,
  type LockLostReason,
  type SteeringAction,
} from './core/lock-events.js';

export {
  RedisLockProvider,
  DEFAULT_KEY_PREFIX,
  type RedisLockProviderOptions,
} from './providers/redis/redis-lock-provider.js';
export type { RedisClient } from './providers/redis/redis-client.js';
export {
  InMemoryLockProvider,
  type InMemoryLockProviderOptions,
} from './providers/in-memory/in-memory-lock-provider.js';

export { SchedulerLockAdmin } from './nest/scheduler-lock-admin.js';
export { ClusterAdmin, UnknownJobError, type TriggerOutcome } from './operators/cluster-admin.js';
export { RedisOperatorStore } from './providers/redis/redis-operator-store.js';
export { InMemoryOperatorStore } from './providers/in-memory/in-memory-operator-store.js';
export type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  HistoryOutcome,
  PauseState,
  RunHistoryEntry,
  SteeringEntry,
  SteeringNote,
  TriggerRequest,
  TriggerResult,
} from './operators/cluster-records.js';
export type { JobOverview, LastRun } from './operators/job-overview.js';
export type { LockState, OperatorStore } from './operators/operator-store.js';
export type { JobLockClaim, JobLockProvider, OperatorLockProvider } from './operators/operator-abilities.js';
