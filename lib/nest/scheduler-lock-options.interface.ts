import type { LockDurations } from '../core/provider/lock-configuration.js';
import type { OccurrenceOptions } from '../occurrence/occurrence-options.js';

/**
 * Options of `@SchedulerLock()` (and of `LockedJobRegistry.declare()`): the lock's name, its durations
 * (defaulting to the module's), and for cron jobs the once-per-occurrence options.
 */
export interface SchedulerLockOptions extends LockDurations, OccurrenceOptions {
  /**
   * The lock's name, the same on every node. Default: the job's name (`@Cron(..., { name })`,
   * `@Interval(name, ms)`, `@Timeout(name, ms)`), else `ClassName.methodName`.
   */
  name?: string;
  /**
   * Run the job's ticks on the leader of this election only: the other nodes skip them (`follower`) without a
   * store call. `false` runs them on any node. Default: the module's `defaultLeader`.
   */
  leader?: string | false;
}
