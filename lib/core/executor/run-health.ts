import type { ActiveLock } from './active-lock.js';

/** A run in progress on this node, as a health check sees it. */
export interface RunInProgress {
  readonly lockName: string;
  /** The scheduler job's registry name, when the lock belongs to a job. */
  readonly jobName: string | null;
  /** How long the run has been going (ms). */
  readonly runningForMs: number;
  /**
   * Whether the run has outlived its lock (`lockAtMostFor` reached, lease not renewed in time, or taken
   * over) and goes on without it.
   */
  readonly outlivedLock: boolean;
  /**
   * For a `keepAlive` lease: how long its renewal is overdue (ms), 0 while it is on schedule. A lease is
   * renewed every third of it ({@link renewalIntervalMs}): a renewal that failed, or has not come back,
   * leaves it overdue until one succeeds.
   */
  readonly renewalOverdueMs: number;
  /** How often the lease is renewed (ms); `undefined` for a lock without a lease. */
  readonly renewalIntervalMs: number | undefined;
}

/** What `active`'s run looks like at `now` (a `performance.now()` value). */
export function describeRun(active: ActiveLock, now: number): RunInProgress {
  return {
    lockName: active.name,
    jobName: active.jobName,
    runningForMs: Date.now() - active.lockedAt.getTime(),
    outlivedLock: active.lost,
    renewalOverdueMs: renewalOverdue(active, now),
    renewalIntervalMs: active.lease === undefined ? undefined : active.renewalInterval,
  };
}

/**
 * A lease renewed on schedule expires a whole lease after its last renewal was sent, and the next one is
 * due an interval later. Near `lockAtMostFor` the last renewals stop at the cap (the lease then ends at
 * `capAt`), so a lease that reaches the cap is never overdue.
 */
function renewalOverdue(active: ActiveLock, now: number): number {
  if (active.lease === undefined || active.lost || active.expiresAt >= active.capAt) return 0;
  const lastRenewal = active.expiresAt - active.lease;
  return Math.max(0, now - lastRenewal - active.renewalInterval);
}
