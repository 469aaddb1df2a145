/** Metadata key of `@SchedulerLock()` options on a method. */
export const SCHEDULER_LOCK_OPTIONS = 'nest-scheduler-lock:options';

/** Injection token of the module's {@link LockProvider}. */
export const SCHEDULER_LOCK_PROVIDER = Symbol('SCHEDULER_LOCK_PROVIDER');

/** @internal Injection token of the validated module settings. */
export const SCHEDULER_LOCK_SETTINGS = Symbol('SCHEDULER_LOCK_SETTINGS');

/**
 * Metadata keys and job types `@nestjs/schedule` writes with `@Cron`, `@Interval` and `@Timeout`. The
 * package exports its decorators but not these constants; their values have not changed since its
 * first release.
 */
export const SCHEDULE_METADATA = {
  type: 'SCHEDULER_TYPE',
  name: 'SCHEDULER_NAME',
  cronOptions: 'SCHEDULE_CRON_OPTIONS',
  kinds: { 1: 'cron', 2: 'timeout', 3: 'interval' },
} as const;

/**
 * @internal Injection token of the provider's operator store (`undefined` for a provider without one): the port
 * the console's services read and steer through.
 */
export const SCHEDULER_LOCK_OPERATOR_PROVIDER = Symbol('SCHEDULER_LOCK_OPERATOR_PROVIDER');

/** How messages about the module's options begin. */
export const MODULE_OPTIONS_SUBJECT = 'SchedulerLockModule options';
