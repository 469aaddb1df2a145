import type { ActiveLock } from './active-lock.js';

/** The first wait before trying again, doubled after each failure up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 100;
/** At least one try a second: the recovery grace (5 s or more) must leave room for a few. */
const MAX_RETRY_MS = 1_000;

/**
 * Runs whose outcome could not be recorded: the release of an occurrence's lock failed with a store
 * error (Redis down or cut off), so its job record still says running. Other nodes re-run such an
 * occurrence once its lock has been gone for the recovery grace; recording the outcome as soon as Redis
 * answers again is what keeps a finished occurrence from running twice. One timer per pending run, and
 * `unref`'d: a pending outcome never keeps the process alive.
 */
export class OutcomeRetries {
  private readonly timers = new Map<ActiveLock, NodeJS.Timeout>();

  /**
   * Calls `finish` again, backing off, until it resolves or rejects for a reason other than a store
   * error (`isStoreError`); then calls `settled` with the error, if any.
   */
  retry(
    active: ActiveLock,
    finish: () => Promise<void>,
    isStoreError: (error: unknown) => boolean,
    settled: (error?: unknown) => void,
  ): void {
    const tryAfter = (delay: number) => {
      const timer = setTimeout(() => {
        finish().then(
          () => this.end(active, settled),
          (error: unknown) => {
            if (!this.timers.has(active)) return; // stopped meanwhile
            if (isStoreError(error)) tryAfter(Math.min(2 * delay, MAX_RETRY_MS));
            else this.end(active, settled, error);
          },
        );
      }, delay);
      timer.unref();
      this.timers.set(active, timer);
    };
    tryAfter(FIRST_RETRY_MS);
  }

  has(active: ActiveLock): boolean {
    return this.timers.has(active);
  }

  /** Stops every retry; returns how many outcomes stay unrecorded. */
  stop(): number {
    for (const timer of this.timers.values()) clearTimeout(timer);
    const pending = this.timers.size;
    this.timers.clear();
    return pending;
  }

  private end(active: ActiveLock, settled: (error?: unknown) => void, error?: unknown): void {
    if (!this.timers.delete(active)) return; // stopped meanwhile
    settled(error);
  }
}
