/**
 * `nest-scheduler-lock/provider`: the plug-in contract, for people who write a store (or instrument runs).
 * An app needs none of it; the operator console's records (JobOverview, HistoryEntry...) are in the main entry.
 *
 * @module nest-scheduler-lock/provider
 */

// The lock itself: what `lock()` returns and what it is asked for.
export { AbstractSimpleLock } from '../core/provider/abstract-simple-lock.js';
export { DEFAULT_LEASE, type KeepAlive, type LockConfiguration } from '../core/provider/lock-configuration.js';
export {
  LockNotHeldError,
  type JobRecord,
  type JobRunState,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type LockProvider,
  type OccurrenceClaim,
  type RecoveryClaim,
  type RunOutcome,
  type RunReport,
  type SimpleLock,
} from '../core/provider/lock-provider.js';

// Abilities beyond `lock()`, one interface each, found by their method.
export type {
  JobRecordReader,
  LeaseRenewingLockProvider,
  OccurrenceLockProvider,
  OutageReportingLockProvider,
  OwnerAddressedLockProvider,
  OwnerRelease,
  OwnerRenewal,
  RecoveringLockProvider,
  RetryingLockProvider,
  StartupCheckingLockProvider,
} from '../core/provider/provider-abilities.js';
export type { OutageLog, ProviderOutageMonitor, ProviderOutageReport } from '../core/provider/store-outage-report.js';
export type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';

// The operator console's port, and the framework-free admin on top of it.
export {
  DEFAULT_HISTORY_LIMIT,
  type ClusterReading,
  type HealthReportClaim,
  type HealthReportKind,
  type LockReading,
  type LockState,
  type OperatorProvider,
  type TriggerQueueing,
} from '../operators/operator-provider.js';
export type {
  CatalogueJob,
  HistoryOutcome,
  OperatorEntry,
  PauseState,
  TriggerRequest,
  TriggerResult,
} from '../operators/cluster-records.js';
export type { OperatorAction } from '../core/task/lock-events.js';
export type { LastRun } from '../operators/job-overview.js';
export { ClusterAdmin } from '../operators/cluster-admin.js';
export { ACTOR_MAX_LENGTH, REASON_MAX_LENGTH } from '../operators/operator-note.js';

// Other extension points of the executor: its settings, logger and run instrumentation.
export type { LockingTaskExecutorSettings } from '../core/executor/executor-settings.js';
export type { SchedulerLockLogger } from '../core/executor/logger.js';
export type { InstrumentedRun, RunInstrumentation } from '../core/executor/run-instrumentation.js';

// The in-memory store's options; the other stores' types are in their own entry points.
export type { InMemoryLockProviderOptions } from '../providers/in-memory/in-memory-lock-provider.js';
