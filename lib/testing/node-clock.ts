import type { TickClock } from '../nest/scheduler-lock.settings.js';

/**
 * A test node's tick clock: the wall clock (a fake one under fake timers), or a time pinned while one tick
 * fires, so a test fires a tick late as cron does without touching the global clock.
 */
export class NodeClock implements TickClock {
  private pinned: number | undefined;

  now(): number {
    return this.pinned ?? Date.now();
  }

  /** Calls `fire` with this clock reading `at`: a tick reads it once, synchronously, to pick its occurrence. */
  readingAt<T>(at: number, fire: () => T): T {
    this.pinned = at;
    try {
      return fire();
    } finally {
      this.pinned = undefined;
    }
  }
}
