import { parseDuration, type Duration } from './duration.js';
import { LockExtensionError, LockLostError } from './errors.js';
import type { LockLostReason } from './lock-events.js';
import type { LockContext } from './lock-context.js';
import type { SimpleLock } from './lock-provider.js';

/** What an {@link ActiveLock} reports to the executor that owns it. */
export interface ActiveLockListener {
  extended(lock: ActiveLock): void;
  lost(lock: ActiveLock, reason: LockLostReason): void;
}

/**
 * A lock held by a run in progress: the {@link LockContext} the run sees, and the state the executor
 * needs to release it. `lock` changes on every extension, since a {@link SimpleLock} is single-use.
 */
export class ActiveLock implements LockContext {
  private readonly controller = new AbortController();
  readonly signal: AbortSignal = this.controller.signal;
  readonly lockedAt: Date;
  private until: number;

  constructor(
    private current: SimpleLock,
    readonly lockedBy: string,
    requestedAt: number,
    private readonly listener: ActiveLockListener,
  ) {
    this.lockedAt = new Date(requestedAt);
    this.until = requestedAt + current.configuration.lockAtMostFor;
  }

  get name(): string {
    return this.current.configuration.name;
  }

  get lock(): SimpleLock {
    return this.current;
  }

  get lockedUntil(): Date {
    return new Date(this.until);
  }

  get fencingToken(): number | undefined {
    return this.current.fencingToken;
  }

  get lost(): boolean {
    return this.signal.aborted;
  }

  async extend(lockAtMostFor: Duration, lockAtLeastFor: Duration = 0): Promise<void> {
    const atMost = parseDuration(lockAtMostFor);
    const atLeast = parseDuration(lockAtLeastFor);
    if (this.lost) {
      throw new LockExtensionError(`Lock "${this.name}" cannot be extended: ${String(this.signal.reason?.message)}`);
    }
    const requestedAt = Date.now();
    const next = await this.current.extend(atMost, atLeast);
    if (!next) {
      this.markLost('expired');
      throw new LockExtensionError(`Lock "${this.name}" cannot be extended: it expired or another node holds it`);
    }
    this.current = next;
    this.until = requestedAt + atMost;
    this.listener.extended(this);
  }

  /** Aborts the run's signal once; later calls keep the first reason. */
  markLost(reason: LockLostReason): void {
    if (this.lost) return;
    this.controller.abort(new LockLostError(this.name, reason));
    this.listener.lost(this, reason);
  }
}
