import type { LockConfiguration } from '../provider/lock-configuration.js';
import type { SimpleLock } from '../provider/lock-provider.js';
import type { TaskResult } from '../task/task-result.js';

/**
 * How a run takes its lock. The executor asks its provider's `lock()` unless it is handed another way
 * (a strategy): a once-per-occurrence cron tick claims its occurrence, a watcher re-runs a crashed one
 * (`lib/occurrence/`). The executor keeps everything else the same: deadlines, events, leases, release.
 */
export interface LockAcquisition {
  /**
   * Takes the lock for `configuration` (its `lockAtMostFor` is the first TTL to ask for). Resolves to the
   * lock with what it belongs to, or to the skip that the store's refusal means; rejects on a store error.
   */
  acquire(configuration: LockConfiguration): Promise<AcquiredLock | SkippedRun>;
}

/** A lock a {@link LockAcquisition} took, and what the run belongs to. */
export interface AcquiredLock {
  readonly lock: SimpleLock;
  /** The lock context's occurrence fields; empty for a plain lock. */
  readonly run?: RunDetails;
  /** Release with `finish(outcome)`, recording how the run ended, where the lock has it. */
  readonly recordsOutcome?: boolean;
}

/** What a run's {@link LockContext} says it belongs to, beyond its lock. */
export interface RunDetails {
  /** The nominal fire time of a once-per-occurrence cron job's run (epoch ms). */
  readonly occurrence?: number;
  readonly catchUp?: boolean;
  /** A re-run of an occurrence whose node died, or a retry of one that failed: the attempt, and who ran the last. */
  readonly recovery?: { readonly attempt: number; readonly previousNode: string };
  /** A run an operator asked for (`trigger`). */
  readonly manual?: { readonly actor: string; readonly triggerId: string };
}

/** A run that did not start, and why. */
export type SkippedRun = Extract<TaskResult<never>, { executed: false }>;
