import type { Duration } from '../provider/duration.js';
import { LockExtensionError } from '../provider/errors.js';
import { currentLock } from './lock-context.js';

/** ShedLock's `LockExtender`: extends the lock of the run in progress. */
export class LockExtender {
  /**
   * Moves the current run's lock expiry to `lockAtMostFor` from now.
   * @throws LockExtensionError outside a locked run, or when the lock can no longer be extended.
   */
  static async extendActiveLock(lockAtMostFor: Duration, lockAtLeastFor?: Duration): Promise<void> {
    const lock = currentLock();
    if (!lock) throw new LockExtensionError('LockExtender.extendActiveLock: no lock is held by the current run');
    await lock.extend(lockAtMostFor, lockAtLeastFor);
  }
}
