import { strict as assert } from 'node:assert';
import type {
  LockProvider,
  OccurrenceClaim,
  RecoveryClaim,
  RunOutcome,
  SimpleLock,
} from '../core/provider/lock-provider.js';
import { canReadJobRecords } from '../core/provider/provider-abilities.js';
import { HELD_FOR_THE_TEST, lockConfig } from './lock-probes.js';
import type { KitClock } from './provider-subject.js';
import { pollUntil, sleepUntil } from './timing.js';

/** An occurrence and the one after it, for claims made outside a scheduler. */
export const OCCURRENCE = new Date('2026-01-01T00:00:10.000Z');
export const NEXT_OCCURRENCE = new Date(OCCURRENCE.getTime() + 10_000);

/** A job's configuration as the executor passes it with an occurrence. */
export const jobConfig = (name: string, lockAtMostFor = HELD_FOR_THE_TEST) => lockConfig(name, lockAtMostFor);

/** The lock of a claim that the check needs to have won. */
export function claimed(claim: OccurrenceClaim | RecoveryClaim): SimpleLock {
  if (!('lock' in claim))
    throw new assert.AssertionError({ message: `expected the occurrence, got ${JSON.stringify(claim)}` });
  return claim.lock;
}

/** Records how the run of an occurrence's lock ended, as the executor does: through `finish()`. */
export function finish(lock: SimpleLock, outcome: RunOutcome): Promise<void> {
  assert.equal(typeof lock.finish, 'function', "an occurrence's lock records how its run ended: it needs finish()");
  return lock.finish!(outcome);
}

/**
 * Resolves once the lock of `name`, taken at `takenAt` for `lockAtMostFor` ms and never released, is gone:
 * as its job record says, or after twice its time for a provider that has no records to read.
 */
export async function lockGone(
  clock: KitClock,
  provider: LockProvider,
  name: string,
  takenAt: number,
  lockAtMostFor: number,
): Promise<void> {
  if (!canReadJobRecords(provider)) return sleepUntil(clock, takenAt + 2 * lockAtMostFor);
  const deadline = takenAt + lockAtMostFor + 1_000;
  await pollUntil(clock, async () => (await provider.readJobRecord(name))?.held === false || undefined, deadline);
}
