import { Logger } from '@nestjs/common';
import { formatDuration } from './core/duration.js';
import type { LockedJob } from './locked-job.registry.js';
import { CronSchedule, type CronTimeLike } from './occurrence/cron-schedule.js';

const logger = new Logger('SchedulerLock');

/**
 * Warns when a cron job's `lockAtLeastFor` is at least the shortest gap between its fire times: each
 * run keeps the lock past the next tick, so the job runs far less often than its schedule says, which
 * would otherwise show only as DEBUG skip lines.
 */
export function warnIfLockOutlastsCron(job: LockedJob, cronTime: CronTimeLike): void {
  const { minGap } = new CronSchedule(cronTime);
  const gap = `${formatDuration(minGap)}, '${String(cronTime.source)}'`;
  warnIfLockOutlasts(job, minGap, `the shortest gap between its fire times (${gap})`);
}

/** {@link warnIfLockOutlastsCron} for an interval job: its period is the Node.js timer's repeat. */
export function warnIfLockOutlastsInterval(job: LockedJob, timer: unknown): void {
  const period = (timer as { _repeat?: unknown } | undefined)?._repeat;
  if (typeof period === 'number') warnIfLockOutlasts(job, period, `its interval (${formatDuration(period)})`);
}

function warnIfLockOutlasts(job: LockedJob, period: number, what: string): void {
  const { lockAtLeastFor } = job.configuration;
  if (lockAtLeastFor === 0 || lockAtLeastFor < period) return;
  const hold = formatDuration(lockAtLeastFor);
  logger.warn(
    `Job "${job.jobName}": lockAtLeastFor ${hold} is not shorter than ${what}, so each run holds the lock past the ` +
      `next tick: the job runs at most once per ${hold} cluster-wide, and the ticks in between are skipped`,
  );
}
