import { formatDuration, parseDuration, type DurationInput } from './duration.js';
import { closestOption } from './closest-option.js';
import { quoted } from './message-text.js';

/** What a {@link LockProvider} is asked to lock: durations already in milliseconds. */
export interface LockConfiguration {
  /** The lock's name, shared by every node that runs the job. */
  readonly name: string;
  /** The lock expires this long after it was taken, even if its holder died. */
  readonly lockAtMostFor: number;
  /** On release, the lock is kept until this long after it was taken. */
  readonly lockAtLeastFor: number;
}

/**
 * A renewing lease: the lock is taken for `lease` (default 30 s) and renewed while the run goes on,
 * so a crashed node blocks the job for one lease, while `lockAtMostFor` stays the hard cap.
 */
export type KeepAlive = boolean | { lease?: DurationInput };

/** Lock durations as a user writes them, before validation. */
export interface LockDurations {
  /**
   * The lock's lifetime if it is never released: set it well above the normal run time, or use `keepAlive`.
   * Default: the module's `defaultLockAtMostFor`.
   */
  lockAtMostFor?: DurationInput;
  /**
   * On release, keep the lock until this long after it was taken. Cron jobs rarely need it; a job every second
   * with `occurrence: false` needs about `'500ms'`. Default: the module's `defaultLockAtLeastFor`.
   */
  lockAtLeastFor?: DurationInput;
  /** Renew the lock while the run goes on; see {@link KeepAlive}. Default: the module's setting. */
  keepAlive?: KeepAlive;
}

/** Module-wide settings, in milliseconds, used where a lock does not set its own. */
export interface LockDefaults {
  readonly lockAtMostFor: number;
  readonly lockAtLeastFor: number;
  /** The lease of `keepAlive` runs; `undefined` when locks do not renew by default. */
  readonly lease?: number;
}

/** A validated lock for a run: the provider's configuration plus the lease, if the lock renews. */
export interface RunLockConfiguration extends LockConfiguration {
  readonly lease?: number;
}

/**
 * How long a lock is taken for: one lease for a renewing lock (the lease keeper carries it towards
 * `lockAtMostFor`), else `lockAtMostFor`.
 */
export function initialTtl(configuration: RunLockConfiguration): number {
  return Math.min(configuration.lease ?? Infinity, configuration.lockAtMostFor);
}

/** What the store is asked for first: a renewing lock is taken for one lease, and the keeper carries it on. */
export function firstTake(configuration: RunLockConfiguration): RunLockConfiguration {
  const ttl = initialTtl(configuration);
  return ttl === configuration.lockAtMostFor ? configuration : { ...configuration, lockAtMostFor: ttl };
}

/** The longest delay a Node.js timer keeps (ms, about 24.8 days): a longer one fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The lease of `keepAlive: true`. */
export const DEFAULT_LEASE = 30_000;

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
): RunLockConfiguration {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new SchedulerLockConfigurationError(
      `${subject}: the lock name must be a non-empty string (got ${quoted(name)})`,
    );
  }
  const { lockAtMostFor, lockAtLeastFor } = lockDurations(
    durations,
    defaults,
    ['lockAtMostFor', 'lockAtLeastFor'],
    subject,
  );
  const lease = resolveLease(durations.keepAlive, defaults.lease, subject);
  return lease === undefined ? { name, lockAtMostFor, lockAtLeastFor } : { name, lockAtMostFor, lockAtLeastFor, lease };
}

/** The lease in ms a `keepAlive` option asks for, or `undefined` for a lock that does not renew. */
export function resolveLease(
  keepAlive: KeepAlive | undefined,
  fallback: number | undefined,
  subject: string,
): number | undefined {
  if (keepAlive === undefined) return fallback;
  if (keepAlive === false) return undefined;
  if (keepAlive === true) return DEFAULT_LEASE;
  if (typeof keepAlive !== 'object' || keepAlive === null || Array.isArray(keepAlive)) {
    throw new SchedulerLockConfigurationError(
      `${subject}: keepAlive must be true, false or { lease } (got ${quoted(keepAlive)})`,
    );
  }
  assertKnownOptions(keepAlive, ['lease'], `${subject}: keepAlive`);
  return positiveDurationOption(keepAlive.lease, DEFAULT_LEASE, 'keepAlive.lease', subject, MAX_TIMER_MS);
}

/**
 * Parses a `lockAtMostFor` / `lockAtLeastFor` pair (under the option names `names`, for messages): the
 * first must be greater than 0, the second not greater than the first.
 */
export function lockDurations(
  durations: LockDurations,
  defaults: Pick<LockDefaults, 'lockAtMostFor' | 'lockAtLeastFor'>,
  names: readonly [atMost: string, atLeast: string],
  subject: string,
): { lockAtMostFor: number; lockAtLeastFor: number } {
  const lockAtMostFor = positiveDurationOption(durations.lockAtMostFor, defaults.lockAtMostFor, names[0], subject);
  const lockAtLeastFor = durationOption(durations.lockAtLeastFor, defaults.lockAtLeastFor, names[1], subject);
  if (lockAtLeastFor > lockAtMostFor) {
    throw new SchedulerLockConfigurationError(
      `${subject}: ${names[1]} (${lockAtLeastFor} ms) must not be greater than ${names[0]} (${lockAtMostFor} ms)`,
    );
  }
  return { lockAtMostFor, lockAtLeastFor };
}

/** {@link durationOption} for a duration that must be greater than 0. */
export function positiveDurationOption(
  value: DurationInput | undefined,
  fallback: number,
  option: string,
  subject: string,
  max = Infinity,
): number {
  const ms = durationOption(value, fallback, option, subject, max);
  if (ms <= 0) {
    throw new SchedulerLockConfigurationError(
      `${subject}: ${option} must be greater than 0 (got ${quoted(value ?? fallback)})`,
    );
  }
  return ms;
}

/**
 * Parses one duration option, wrapping a parse error with the option and the job it belongs to; a duration
 * longer than `max` ms fails too (a timer's: {@link MAX_TIMER_MS}).
 */
export function durationOption(
  value: DurationInput | undefined,
  fallback: number,
  option: string,
  subject: string,
  max = Infinity,
): number {
  if (value === undefined) return fallback;
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    throw new SchedulerLockConfigurationError(`${subject}: ${option}: ${(error as Error).message}`);
  }
  if (ms > max) {
    throw new SchedulerLockConfigurationError(
      `${subject}: ${option} must be at most ${formatDuration(max)} (got ${quoted(value)})`,
    );
  }
  return ms;
}

/**
 * A boolean option: `true` or `false`, `fallback` when absent. Anything else (`'true'`, `1`) fails the startup
 * naming it: for a security switch, a truthy string must not count as on, nor `'false'` as off.
 */
export function booleanOption(value: unknown, fallback: boolean, option: string, subject: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  throw new SchedulerLockConfigurationError(`${subject}: ${option} must be true or false (got ${quoted(value)})`);
}

/**
 * Throws for the first key of `options` that is not one of `known`: a typo would otherwise be ignored (for a
 * security option, silently). The message names it, with the closest option or `hint(key)` when it has one.
 */
export function assertKnownOptions(
  options: object,
  known: readonly string[],
  subject: string,
  hint: (key: string) => string | undefined = () => undefined,
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const match = closestOption(key, known);
    const closest = match ? `; did you mean "${match}"?` : `; the options are ${known.join(', ')}`;
    throw new SchedulerLockConfigurationError(`${subject}: unknown option "${key}"${hint(key) ?? closest}`);
  }
}
