import { SetMetadata } from '@nestjs/common';
import { SCHEDULER_LOCK_OPTIONS } from './scheduler-lock.constants.js';
import type { SchedulerLockOptions } from './scheduler-lock-options.interface.js';

/**
 * Runs a `@Cron`, `@Interval` or `@Timeout` job on one node at a time: each tick takes the job's lock
 * first and is skipped if another node holds it. Only metadata: the job is wrapped when
 * `@nestjs/schedule` registers it, so decorator order does not matter and direct calls of the method
 * are never locked.
 */
export const SchedulerLock = (options: SchedulerLockOptions = {}): MethodDecorator =>
  SetMetadata(SCHEDULER_LOCK_OPTIONS, options);
