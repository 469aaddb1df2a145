import { assertKnownOptions, SchedulerLockConfigurationError } from './lock-configuration.js';
import { quoted } from './message-text.js';

/** The largest whole number a count option takes: PostgreSQL's `integer`, which also stores it. */
export const MAX_WHOLE_NUMBER = 2 ** 31 - 1;

/** A whole-number option from `min` to `max`, `fallback` when absent; anything else fails the startup naming it. */
export function wholeNumberOption(
  value: unknown,
  fallback: number,
  option: string,
  subject: string,
  [min, max]: readonly [number, number] = [1, MAX_WHOLE_NUMBER],
): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  throw new SchedulerLockConfigurationError(
    `${subject}: ${option} must be a whole number from ${min} to ${max} (got ${quoted(value)})`,
  );
}

/** A string option that must not be empty (a name, a prefix), `fallback` when absent. */
export function nonEmptyStringOption(value: unknown, fallback: string, option: string, subject: string): string {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && value !== '') return value;
  throw new SchedulerLockConfigurationError(`${subject}: ${option} must be a non-empty string (got ${quoted(value)})`);
}

/**
 * Checks that `options` is an options object (absent: none given) with no key but `known`, see
 * {@link assertKnownOptions}; returns it, or `{}`.
 */
export function optionsObject<T extends object>(
  options: T | undefined,
  known: readonly (keyof T & string)[],
  subject: string,
): Partial<T> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SchedulerLockConfigurationError(`${subject}: expected an options object (got ${quoted(options)})`);
  }
  assertKnownOptions(options, known, subject);
  return options;
}
