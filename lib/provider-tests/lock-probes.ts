import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { LockConfiguration } from '../core/provider/lock-configuration.js';
import type { LockProvider, SimpleLock } from '../core/provider/lock-provider.js';
import type { CatalogueJob } from '../operators/cluster-records.js';
import type { KitClock } from './provider-subject.js';
import { pollUntil, type Polled } from './timing.js';

/** Long enough that no lock of a check expires unless the check means it to. */
export const HELD_FOR_THE_TEST = 10_000;

/** The catalogue entry of a job `jobName` that locks `lockName`, never due (on February 29 alone). */
export function catalogueEntry(jobName: string, lockName: string): CatalogueJob {
  const schedule = '0 0 0 29 2 *';
  return {
    jobName,
    lockName,
    kind: 'cron',
    schedule,
    lockAtMostFor: 60_000,
    lockAtLeastFor: 0,
    occurrence: true,
    timeZone: null,
    lease: null,
  };
}

/** A lock name no other check uses, so checks sharing one store never meet. */
export function uniqueLockName(label = 'lock'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A configuration as a provider receives it (milliseconds). */
export function lockConfig(name: string, lockAtMostFor = HELD_FOR_THE_TEST, lockAtLeastFor = 0): LockConfiguration {
  return { name, lockAtMostFor, lockAtLeastFor };
}

/** Takes a lock that the check needs to exist, failing clearly when the provider refuses it. */
export async function mustLock(provider: LockProvider, configuration: LockConfiguration): Promise<SimpleLock> {
  const lock = await provider.lock(configuration);
  if (!lock)
    throw new assert.AssertionError({ message: `expected to take lock "${configuration.name}", but it was held` });
  return lock;
}

/**
 * Whether `name` is held, asked the only way every provider answers: by trying to take it (and
 * releasing at once if that worked), like ShedLock's `assertLocked`/`assertUnlocked`.
 */
export async function isLocked(provider: LockProvider, name: string): Promise<boolean> {
  const probe = await provider.lock(lockConfig(name));
  if (!probe) return true;
  await probe.unlock();
  return false;
}

/**
 * Takes `configuration`'s lock as soon as it is free, polling until `deadline` (a `clock.now()` value).
 * `at` tells when it was first found free, so a check can also show it was NOT free earlier.
 */
export function lockWhenFree(
  clock: KitClock,
  provider: LockProvider,
  configuration: LockConfiguration,
  deadline: number,
): Promise<Polled<SimpleLock>> {
  return pollUntil(clock, () => provider.lock(configuration), deadline, 10, `lock "${configuration.name}" free`);
}

/** Fails unless `tokens` are integers, each greater than the one before. */
export function assertStrictlyIncreasing(tokens: readonly (number | undefined)[]): void {
  for (const token of tokens) assert.ok(Number.isInteger(token), `fencing token ${token} is not an integer`);
  const increasing = [...new Set(tokens as number[])].sort((a, b) => a - b);
  assert.deepEqual(tokens, increasing, 'fencing tokens must increase strictly, in the order the locks were taken');
}
