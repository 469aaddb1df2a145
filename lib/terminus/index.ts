/**
 * nest-scheduler-lock/terminus: apart from the main entry, so that an app without @nestjs/terminus never loads it.
 *
 * @module nest-scheduler-lock/terminus
 */

export {
  SchedulerLockHealthIndicator,
  type JobHealth,
  type SchedulerLockHealthOptions,
} from './scheduler-lock.health.js';
