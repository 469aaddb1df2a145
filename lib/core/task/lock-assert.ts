import { currentLock } from './lock-context.js';

/** Checks, inside a task, that it really runs under a lock (catches a missing `@SchedulerLock`). */
export class LockAssert {
  /** @throws Error unless the current async context holds a lock. */
  static assertLocked(): void {
    if (!currentLock()) {
      throw new Error('LockAssert.assertLocked: this code is not running under a scheduler lock');
    }
  }
}
