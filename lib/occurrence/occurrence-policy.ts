import { formatDuration } from '../core/provider/duration.js';
import { durationOption, SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { optionsObject, wholeNumberOption } from '../core/provider/option-values.js';
import { quoted } from '../core/provider/message-text.js';
import type { JobKind, OccurrenceOptions, RetryOptions } from './occurrence-options.js';
import type { CronSchedule } from './cron-schedule.js';

/** A cron job's once-per-occurrence settings, validated; durations in ms. */
export interface OccurrencePolicy {
  /** `undefined`: derived from the schedule once it is known. */
  readonly maxClockSkew: number | undefined;
  readonly onCrash: 'skip' | 'rerun';
  readonly maxRecoveries: number;
  /** `undefined`: derived from the lease, see {@link recoveryGraceFor}. */
  readonly recoveryGrace: number | undefined;
  /** `undefined`: no catch-up. */
  readonly catchUpWindow: number | undefined;
  /** How a failed occurrence is retried; `null`: it is not. */
  readonly retry: RetryPolicy | null;
}

/** The `retry` option, validated: the most retries, and the first wait in ms (each next one doubles). */
export interface RetryPolicy {
  readonly retries: number;
  readonly backoff: number;
}

const DEFAULT_RETRY_BACKOFF = 1_000;

const DEFAULT_CATCH_UP_WINDOW = 3_600_000;
const MAX_DEFAULT_SKEW = 5_000;
/**
 * Long enough for a node whose Redis came back to reconnect (ioredis backs off up to 2 s by default) and
 * record its run's outcome (retried at least every second).
 */
const MIN_DEFAULT_RECOVERY_GRACE = 5_000;
const OCCURRENCE_OPTIONS = [
  'occurrence',
  'maxClockSkew',
  'onCrash',
  'maxRecoveries',
  'recoveryGrace',
  'catchUp',
  'retry',
] as const;

/**
 * The occurrence policy a job's options ask for: `undefined` when the job runs with plain ShedLock
 * semantics (`occurrence: false`, or an interval / timeout job). `kind` is `undefined` for a job
 * declared for runtime registration, whose kind is known only when it is added.
 */
export function resolveOccurrencePolicy(
  options: OccurrenceOptions,
  kind: JobKind | undefined,
  subject: string,
  defaultRetry: RetryPolicy | null,
): OccurrencePolicy | undefined {
  if (kind === 'interval' || kind === 'timeout') {
    const set = OCCURRENCE_OPTIONS.filter((option) => options[option] !== undefined && options[option] !== false);
    if (set.length > 0) {
      throw new SchedulerLockConfigurationError(
        `${subject}: ${set.join(', ')} apply to cron jobs only; ${kind} jobs have no scheduled occurrences`,
      );
    }
    return undefined;
  }
  if (options.occurrence === false) {
    if (options.retry !== undefined && options.retry !== false) {
      throw new SchedulerLockConfigurationError(
        `${subject}: retry needs once-per-occurrence locking, which occurrence: false turns off`,
      );
    }
    return undefined;
  }
  if (options.onCrash !== undefined && options.onCrash !== 'skip' && options.onCrash !== 'rerun') {
    throw new SchedulerLockConfigurationError(
      `${subject}: onCrash must be 'skip' or 'rerun' (got ${JSON.stringify(options.onCrash)})`,
    );
  }
  const maxRecoveries = options.maxRecoveries ?? 1;
  if (!Number.isInteger(maxRecoveries) || maxRecoveries < 1) {
    throw new SchedulerLockConfigurationError(
      `${subject}: maxRecoveries must be a whole number of at least 1 (got ${JSON.stringify(options.maxRecoveries)})`,
    );
  }
  const { catchUp } = options;
  const catchUpWindow =
    catchUp === undefined || catchUp === false
      ? undefined
      : catchUp === true
        ? DEFAULT_CATCH_UP_WINDOW
        : durationOption(catchUp.window, DEFAULT_CATCH_UP_WINDOW, 'catchUp.window', subject);
  return {
    maxClockSkew:
      options.maxClockSkew === undefined ? undefined : durationOption(options.maxClockSkew, 0, 'maxClockSkew', subject),
    onCrash: options.onCrash ?? 'skip',
    maxRecoveries,
    recoveryGrace:
      options.recoveryGrace === undefined
        ? undefined
        : durationOption(options.recoveryGrace, 0, 'recoveryGrace', subject),
    catchUpWindow,
    retry:
      options.retry === false ? null : options.retry === undefined ? defaultRetry : retryPolicy(options.retry, subject),
  };
}

/** A `retry` option, checked: each key known, `retries` a whole number from 1, `backoff` a duration. */
export function retryPolicy(option: RetryOptions, subject: string): RetryPolicy {
  const given = optionsObject(option, ['retries', 'backoff'], `${subject} retry`);
  if (given.retries === undefined) {
    throw new SchedulerLockConfigurationError(`${subject}: retry.retries is required (got ${quoted(option)})`);
  }
  return {
    retries: wholeNumberOption(given.retries, 0, 'retry.retries', subject),
    backoff: durationOption(given.backoff, DEFAULT_RETRY_BACKOFF, 'retry.backoff', subject),
  };
}

/**
 * How many runs of one occurrence at most, the first one included: its retries, and with `onCrash: 'rerun'` its
 * re-runs. Recoveries and retries share the count, so a failed re-run is retried and a crashed retry re-run.
 */
export function maxAttemptsOf(policy: OccurrencePolicy): number {
  return 1 + (policy.retry?.retries ?? 0) + (policy.onCrash === 'rerun' ? policy.maxRecoveries : 0);
}

/**
 * The clock skew tolerance of a job on `schedule`: the configured one, or the smaller of 5 s and a
 * quarter of the shortest gap. A tolerance of half the gap or more cannot tell one occurrence from the next.
 */
export function clockSkewFor(
  policy: OccurrencePolicy,
  schedule: CronSchedule,
  subject: string,
  expression: string,
): number {
  const skew = policy.maxClockSkew ?? Math.min(MAX_DEFAULT_SKEW, schedule.minGap / 4);
  if (skew >= schedule.minGap / 2) {
    throw new SchedulerLockConfigurationError(
      `${subject}: maxClockSkew ${formatDuration(skew)} is not below half the shortest gap ` +
        `(${formatDuration(schedule.minGap)}) between fire times of '${expression}'`,
    );
  }
  return skew;
}

/**
 * How long a job waits, once an occurrence's lock is gone, before re-running it: the option, else the
 * lease, at least 5 s.
 */
export function recoveryGraceFor(policy: OccurrencePolicy, lease: number | undefined): number {
  return policy.recoveryGrace ?? Math.max(MIN_DEFAULT_RECOVERY_GRACE, lease ?? 0);
}

/**
 * Checks that a job's first retry can start before its next occurrence: `room` ms, the shortest gap between its
 * fire times less `maxClockSkew`, must be longer than `retry.backoff`.
 */
export function assertRetryFits(policy: OccurrencePolicy, room: number, subject: string, expression: string): void {
  if (policy.retry === null || policy.retry.backoff < room) return;
  throw new SchedulerLockConfigurationError(
    `${subject}: retry.backoff ${formatDuration(policy.retry.backoff)} leaves no time for a retry: it must be ` +
      `shorter than the shortest gap between fire times of '${expression}' less maxClockSkew ` +
      `(${formatDuration(room)})`,
  );
}
