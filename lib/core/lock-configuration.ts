import { parseDuration, type Duration } from './duration.js';

/** What a {@link LockProvider} is asked to lock: durations already in milliseconds. */
export interface LockConfiguration {
  /** The lock's name, shared by every node that runs the job. */
  readonly name: string;
  /** The lock expires this long after it was taken, even if its holder died. */
  readonly lockAtMostFor: number;
  /** On release, the lock is kept until this long after it was taken. */
  readonly lockAtLeastFor: number;
}

/** Lock durations as a user writes them, before validation. */
export interface LockDurations {
  lockAtMostFor?: Duration;
  lockAtLeastFor?: Duration;
}

/** Module-wide durations, in milliseconds, used where a lock does not set its own. */
export interface LockDefaults {
  readonly lockAtMostFor: number;
  readonly lockAtLeastFor: number;
}

/** A configuration value that cannot work: thrown at startup, naming the job and the value. */
export class SchedulerLockConfigurationError extends Error {
  override readonly name = 'SchedulerLockConfigurationError';
}

/**
 * Validates a lock's name and durations once, the way ShedLock's `LockConfiguration` does, and
 * returns them in milliseconds. `subject` names the job in the error message.
 */
export function createLockConfiguration(
  name: string | undefined,
  durations: LockDurations,
  defaults: LockDefaults,
  subject = `lock "${name}"`,
): LockConfiguration {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new SchedulerLockConfigurationError(`${subject}: the lock name must be a non-empty string (got ${JSON.stringify(name)})`);
  }
  const lockAtMostFor = durationOption(durations.lockAtMostFor, defaults.lockAtMostFor, 'lockAtMostFor', subject);
  const lockAtLeastFor = durationOption(durations.lockAtLeastFor, defaults.lockAtLeastFor, 'lockAtLeastFor', subject);
  if (lockAtMostFor <= 0) {
    throw new SchedulerLockConfigurationError(`${subject}: lockAtMostFor must be greater than 0 (got ${JSON.stringify(durations.lockAtMostFor ?? defaults.lockAtMostFor)})`);
  }
  if (lockAtLeastFor > lockAtMostFor) {
    throw new SchedulerLockConfigurationError(
      `${subject}: lockAtLeastFor (${lockAtLeastFor} ms) must not be greater than lockAtMostFor (${lockAtMostFor} ms)`,
    );
  }
  return { name, lockAtMostFor, lockAtLeastFor };
}

/** Parses one duration option, wrapping a parse error with the option and the job it belongs to. */
export function durationOption(value: Duration | undefined, fallback: number, option: string, subject: string): number {
  if (value === undefined) return fallback;
  try {
    return parseDuration(value);
  } catch (error) {
    throw new SchedulerLockConfigurationError(`${subject}: ${option}: ${(error as Error).message}`);
  }
}
