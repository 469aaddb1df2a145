import type { LockDurations } from '../core/lock-configuration.js';

/** Options of `@SchedulerLock()`. Durations default to the module's. */
export interface SchedulerLockOptions extends LockDurations {
  /**
   * The lock's name, the same on every node. Default: the job's name (`@Cron(..., { name })`,
   * `@Interval(name, ms)`, `@Timeout(name, ms)`), else `ClassName.methodName`.
   */
  name?: string;
}
