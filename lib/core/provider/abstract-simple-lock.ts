import type { LockConfiguration } from './lock-configuration.js';
import type { RunOutcome, RunReport, SimpleLock } from './lock-provider.js';

/**
 * The single-use rule and the `lockAtLeastFor` arithmetic shared by every provider's lock.
 * Times are `performance.now()` values, so a wall-clock jump cannot shorten or stretch a lock.
 */
export abstract class AbstractSimpleLock implements SimpleLock {
  private spent = false;

  protected constructor(
    readonly configuration: LockConfiguration,
    /** When the store confirmed the lock (monotonic ms); read only when `lockAtLeastFor` > 0. */
    protected readonly acquiredAt: number,
  ) {}

  unlock(): Promise<void> {
    return this.releaseOnce('unlock', undefined, undefined);
  }

  /** {@link SimpleLock.finish}; providers whose locks carry no job record or history ignore the rest. */
  finish(outcome: RunOutcome, report?: RunReport): Promise<void> {
    return this.releaseOnce('finish', outcome, report);
  }

  async extend(lockAtMostFor: number, lockAtLeastFor: number): Promise<SimpleLock | undefined> {
    if (lockAtLeastFor > lockAtMostFor) {
      throw new Error(
        `Cannot extend lock "${this.configuration.name}": ` +
          `lockAtLeastFor ${lockAtLeastFor} ms > lockAtMostFor ${lockAtMostFor} ms`,
      );
    }
    this.spend('extend');
    return this.prolong({ name: this.configuration.name, lockAtMostFor, lockAtLeastFor });
  }

  /**
   * Deletes the lock, or keeps it `keepFor` ms more (owner-checked), recording `outcome` if the lock has a
   * job record, and the run's `report` in its history if the store keeps one.
   */
  protected abstract release(keepFor: number, outcome?: RunOutcome, report?: RunReport): Promise<void>;

  /** Sets the lock to expire `lockAtMostFor` from now (owner-checked) and returns the lock that follows. */
  protected abstract prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined>;

  /** Not `async`: a run's release is on every lock cycle's path, and each promise layer costs there. */
  private releaseOnce(
    operation: string,
    outcome: RunOutcome | undefined,
    report: RunReport | undefined,
  ): Promise<void> {
    try {
      this.spend(operation);
    } catch (error) {
      return Promise.reject(error);
    }
    // Most locks have no lockAtLeastFor: they skip reading the clock on the way out.
    const { lockAtLeastFor } = this.configuration;
    const keepFor = lockAtLeastFor > 0 ? lockAtLeastFor - (performance.now() - this.acquiredAt) : 0;
    return this.release(keepFor >= 1 ? Math.ceil(keepFor) : 0, outcome, report);
  }

  /**
   * For a release that failed with a store error (not an owner check): the lock may be released again,
   * so that the outcome of its run can still be recorded once the store answers.
   */
  protected releaseFailed(): void {
    this.spent = false;
  }

  private spend(operation: string): void {
    if (this.spent) {
      throw new Error(
        `Lock "${this.configuration.name}" was already unlocked or extended; cannot ${operation} it again`,
      );
    }
    this.spent = true;
  }
}

/** TTLs sent to a store: whole milliseconds, never 0 (Redis rejects `PX 0`). */
export function ttlMillis(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
