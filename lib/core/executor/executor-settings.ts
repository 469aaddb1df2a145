import type { LockDefaults, LockDurations } from '../provider/lock-configuration.js';
import type { LockEvents } from '../task/lock-events.js';
import type { SchedulerLockLogger } from './logger.js';
import type { RunInstrumentation } from './run-instrumentation.js';
import type { ProviderOutageReport } from '../provider/store-outage-report.js';

/** A lock to run a task under: `name`, and durations that default to the executor's. */
export interface ExecuteWithLockOptions extends LockDurations {
  name: string;
}

/** Settings of a `LockingTaskExecutor`. */
export interface LockingTaskExecutorSettings {
  /** Durations for locks that do not set their own. Default: lockAtMostFor 60 s, lockAtLeastFor 0, no keepAlive. */
  defaults?: LockDefaults;
  /** This node's name in events and lock contexts. */
  node: string;
  /** Where lock events go. */
  events?: LockEvents;
  /**
   * How long a lock attempt may take before the run is skipped as a store error (ms; noticed within a
   * quarter more). Default 2 s. An attempt in a burst gets longer: half of it more per 250 attempts in flight,
   * at most four times it and half its lock's first TTL. A lock that arrives later is released at once.
   */
  acquireTimeout?: number;
  /** Reports store outages once each; the failures it covers get no per-lock line. */
  outages?: ProviderOutageReport;
  /** Where its lines go. Default: the console (in a Nest app, the module hands in Nest's `Logger`). */
  logger?: SchedulerLockLogger;
  /**
   * Log each run skipped because the store said no (`locked`, `already-ran`, `paused`), at debug level.
   * Default `false`: those skips are routine, and stay events (`skipped`) and counters.
   */
  logSkips?: boolean;
  /** Wraps each run (a tracing span around the handler), e.g. `nest-scheduler-lock/opentelemetry`'s. */
  instrumentation?: RunInstrumentation;
}

/** How long a lock attempt may take unless `acquireTimeout` says otherwise (ms). */
export const DEFAULT_ACQUIRE_TIMEOUT = 2_000;
