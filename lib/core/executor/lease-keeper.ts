import type { ActiveLock } from './active-lock.js';
import type { FaultLog } from './fault-log.js';
import type { LeaseRenewingLockProvider } from '../provider/provider-abilities.js';

/**
 * One loop per node for every held lock: a single `unref`'d timer, set to the next moment any lock
 * needs attention. It renews all due leases in one `renewLeases` call (one round trip), and aborts the
 * signal of a lock whose known expiry is near (lease not renewed in time, or `lockAtMostFor` reached).
 */
export class LeaseKeeper {
  private readonly active = new Set<ActiveLock>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  /** `renewer` is `undefined` for a provider without the ability: then no lock has a lease to renew. */
  constructor(
    private readonly renewer: LeaseRenewingLockProvider | undefined,
    private readonly faults: FaultLog,
  ) {}

  track(lock: ActiveLock): void {
    this.active.add(lock);
    this.wakeAt(lock.dueAt);
  }

  /** Looks at `lock` again when its deadlines moved (an `extend` may have shortened them). */
  reschedule(lock: ActiveLock): void {
    if (this.active.has(lock)) this.wakeAt(lock.dueAt);
  }

  untrack(lock: ActiveLock): void {
    this.active.delete(lock);
  }

  /** Stops renewing: locks still held expire on their lease. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.active.clear();
  }

  private wakeAt(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => void this.wake(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private async wake(): Promise<void> {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    // Renewing a lease a little early costs nothing when it rides in the same round trip, and it keeps
    // every lease on one schedule: one call per renewal interval, however many locks this node holds.
    let window = Infinity;
    for (const lock of this.active) window = Math.min(window, lock.renewalInterval);
    const due: ActiveLock[] = [];
    for (const lock of this.active) {
      if (now >= lock.abortAt) {
        this.active.delete(lock);
        lock.markLost(lock.expiresAt < lock.capAt ? 'lease-expired' : 'expired');
      } else if (lock.renewAt !== Infinity && lock.renewAt <= now + window && lock.capAt > now) {
        // renewAt is Infinity for a lock without a lease (tracked only to abort its signal in time) and for a
        // renewal in flight; with no lease held, `window` is Infinity too, and Infinity <= Infinity.
        due.push(lock);
      }
    }
    // Without a renewer no lock has a lease (refused at startup), so nothing is ever due here.
    if (due.length === 0 || !this.renewer) return this.rearm();
    for (const lock of due) lock.renewAt = Infinity; // in flight: no second renewal of it meanwhile
    this.rearm(); // a renewal that hangs must not hold back the aborts
    await this.renew(this.renewer, due);
    this.rearm();
  }

  private async renew(renewer: LeaseRenewingLockProvider, due: ActiveLock[]): Promise<void> {
    const sentAt = performance.now();
    const renewals = due.map((lock) => ({ lock: lock.lock, ttl: Math.min(lock.lease!, lock.capAt - sentAt) }));
    try {
      const outcomes = await renewer.renewLeases(renewals);
      this.faults.storeAnswered('renewal');
      outcomes.forEach((outcome, i) => {
        const lock = due[i];
        if (!this.active.has(lock)) return; // released while the renewal was under way
        if (outcome === 'renewed') {
          lock.renewed(sentAt, renewals[i].ttl);
        } else {
          this.active.delete(lock);
          lock.markLost(outcome);
        }
      });
    } catch (error) {
      this.faults.storeFailed(
        'renewal',
        `Could not renew ${due.length} lock lease(s), retrying next interval: ${(error as Error).message}`,
        error,
        sentAt,
      );
      const retryAt = performance.now();
      for (const lock of due) lock.renewAt = retryAt + lock.renewalInterval;
    }
  }

  private rearm(): void {
    let next = Infinity;
    for (const lock of this.active) next = Math.min(next, lock.dueAt);
    if (next < Infinity) this.wakeAt(next);
  }
}
