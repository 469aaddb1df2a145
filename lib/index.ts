/**
 * The main entry: what an app uses (at most 35 names, test/types/entry-exports.spec.ts). A provider's types
 * (LockProvider, SimpleLock, LockConfiguration) are in `nest-scheduler-lock/provider` (lib/provider/).
 *
 * @module nest-scheduler-lock
 */

// The module, its options and the decorator.
export { SchedulerLockModule } from './nest/scheduler-lock.module.js';
export { SchedulerLock } from './nest/scheduler-lock.decorator.js';
export { SCHEDULER_LOCK_PROVIDER } from './nest/scheduler-lock.constants.js';
export type { SchedulerLockModuleOptions } from './nest/scheduler-lock-module-options.interface.js';
export type {
  SchedulerLockModuleAsyncOptions,
  SchedulerLockOptionsFactory,
} from './nest/scheduler-lock.module-definition.js';
export type { SchedulerLockOptions } from './nest/scheduler-lock-options.interface.js';
export { parseDuration, type DurationInput } from './core/provider/duration.js';

// What a task sees, and programmatic locking.
export { LockingTaskExecutor } from './core/executor/locking-task-executor.js';
export type { TaskResult } from './core/task/task-result.js';
export { currentLock, type LockContext } from './core/task/lock-context.js';
export { LockAssert } from './core/task/lock-assert.js';
export { LockExtender } from './core/task/lock-extender.js';
export { LockEvents, type LockEvent } from './core/task/lock-events.js';

// The jobs, their status, and the operator console.
export { LockedJobRegistry } from './nest/locked-job.registry.js';
export { SchedulerLockAdmin } from './nest/scheduler-lock-admin.js';
export { UnknownJobError, type TriggerOutcome } from './operators/cluster-admin.js';
export { InvalidOperatorNoteError } from './operators/operator-note.js';
export type { JobOverview } from './operators/job-overview.js';
export type { ClusterJobHealth } from './operators/job-health.js';
export type { ClusterNode, HistoryEntry, OperatorNote } from './operators/cluster-records.js';

// Errors.
export { SchedulerLockConfigurationError } from './core/provider/lock-configuration.js';
export {
  LockLostError,
  LockExtensionError,
  LockProviderMisconfiguredError,
  LockProviderUnavailableError,
} from './core/provider/errors.js';

// The in-memory provider; each store has its own entry point (`nest-scheduler-lock/redis`, `/postgres`).
export { InMemoryLockProvider } from './providers/in-memory/in-memory-lock-provider.js';
