import { parseDuration, type Duration } from '../provider/duration.js';
import { LockExtensionError, LockLostError } from '../provider/errors.js';
import type { AcquiredLock, RunDetails } from './lock-acquisition.js';
import { initialTtl, type RunLockConfiguration } from '../provider/lock-configuration.js';
import type { LockContext } from '../task/lock-context.js';
import type { LockLostReason } from '../provider/errors.js';
import type { SimpleLock } from '../provider/lock-provider.js';
import { usableLock } from '../provider/provider-checks.js';

/** What an {@link ActiveLock} reports to the executor that owns it. */
export interface ActiveLockListener {
  /** The provider's class, for an error about a lock it returned. */
  readonly providerName: string;
  extended(lock: ActiveLock): void;
  lost(lock: ActiveLock, reason: LockLostReason): void;
}

/**
 * The signal aborts this long before the known expiry (a tenth of the lease or of `lockAtMostFor`, at
 * most 1 s), so the run can stop while the lock is still its own.
 */
const ABORT_MARGIN_MS = 1_000;

/**
 * A lock held by a run in progress: the {@link LockContext} the run sees, and the timing the
 * {@link LeaseKeeper} and the executor need. Times without a `Date` type are `performance.now()` values,
 * so a wall-clock jump cannot move a deadline. `lock` changes on every `extend`, since a
 * {@link SimpleLock} is single-use.
 */
export class ActiveLock implements LockContext {
  /** Made when the run first reads `signal` or loses the lock: most runs do neither, and it is not free. */
  private controller: AbortController | undefined;
  private lostReason: LockLostError | undefined;
  readonly name: string;
  readonly jobName: string | null;
  readonly lease: number | undefined;
  readonly occurrence: Date | null;
  readonly catchUp: boolean;
  readonly recovery: NonNullable<RunDetails['recovery']> | null;
  readonly manual: RunDetails['manual'];
  /** Whether the release records how the run ended (an occurrence's run). */
  readonly recordsOutcome: boolean;
  /** When the lock expires in the store at the latest, as far as this node knows. */
  expiresAt = 0;
  /** `lockAtMostFor` after the lock was taken or last extended: renewals never go past it. */
  capAt = 0;
  /** When the {@link LeaseKeeper} renews the lease next; `Infinity` when not renewing. */
  renewAt: number;
  private readonly epochOffset = Date.now() - performance.now();
  private readonly requestedAt: number;
  /** How long before the known expiry the signal aborts; follows the lock's length through `extend`. */
  private abortMargin = 0;
  /** Until when the lock must be kept on release (`lockAtLeastFor`), which `extend` keeps by default. */
  private leastUntil: number;

  private current: SimpleLock;

  constructor(
    acquired: AcquiredLock,
    configuration: RunLockConfiguration,
    requestedAt: number,
    readonly node: string,
    jobName: string | null,
    private readonly listener: ActiveLockListener,
  ) {
    const details = acquired.run ?? {};
    this.current = acquired.lock;
    this.recordsOutcome = acquired.recordsOutcome ?? false;
    this.occurrence = details.occurrence === undefined ? null : new Date(details.occurrence);
    this.catchUp = details.catchUp ?? false;
    this.recovery = details.recovery ?? null;
    this.manual = details.manual;
    this.requestedAt = requestedAt;
    // The configuration the lock was asked for, not the lock's own: a provider's lock need not carry one.
    this.name = configuration.name;
    this.jobName = jobName;
    this.lease = configuration.lease;
    this.leastUntil = requestedAt + configuration.lockAtLeastFor;
    this.grant(requestedAt, configuration.lockAtMostFor);
    this.renewAt = this.lease === undefined ? Infinity : requestedAt + this.renewalInterval;
    this.expire(requestedAt, initialTtl(configuration));
  }

  get lock(): SimpleLock {
    return this.current;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.lostReason && !this.controller.signal.aborted) this.controller.abort(this.lostReason);
    return this.controller.signal;
  }

  get lockedAt(): Date {
    return new Date(this.epochOffset + this.requestedAt);
  }

  get lockedUntil(): Date {
    return new Date(this.epochOffset + this.expiresAt);
  }

  get fencingToken(): number | null {
    return this.current.fencingToken ?? null;
  }

  get lost(): boolean {
    return this.lostReason !== undefined;
  }

  /** How often the lease is renewed: three chances before it runs out. */
  get renewalInterval(): number {
    return this.lease === undefined ? Infinity : this.lease / 3;
  }

  /** When the signal aborts unless the lock is renewed or extended first. */
  get abortAt(): number {
    return this.expiresAt - this.abortMargin;
  }

  /** The next moment the keeper must look at this lock. */
  get dueAt(): number {
    return Math.min(this.abortAt, this.renewAt);
  }

  /**
   * Without `lockAtLeastFor`, the run keeps the minimum hold it still had (its `lockAtLeastFor` does not
   * lapse because the run extended its lock), capped at the new `lockAtMostFor`.
   */
  async extend(lockAtMostFor: Duration, lockAtLeastFor?: Duration): Promise<void> {
    const atMost = parseDuration(lockAtMostFor);
    const now = performance.now();
    const atLeast =
      lockAtLeastFor === undefined
        ? Math.min(atMost, Math.max(0, Math.ceil(this.leastUntil - now)))
        : parseDuration(lockAtLeastFor);
    if (this.lost) {
      throw new LockExtensionError(`Lock "${this.name}" cannot be extended: ${this.lostReason!.message}`);
    }
    const sentAt = performance.now();
    const extended = await this.current.extend(atMost, atLeast);
    const next = usableLock(extended, this.listener.providerName, "a lock's extend()");
    if (!next) {
      this.markLost('expired');
      throw new LockExtensionError(`Lock "${this.name}" cannot be extended: it expired or another node holds it`);
    }
    this.current = next;
    this.leastUntil = sentAt + atLeast;
    this.grant(sentAt, atMost);
    this.expire(sentAt, atMost);
    this.listener.extended(this);
  }

  /** Records a successful lease renewal sent at `sentAt` with `ttl`. */
  renewed(sentAt: number, ttl: number): void {
    this.expire(sentAt, ttl);
    this.renewAt = sentAt + this.renewalInterval;
    this.listener.extended(this);
  }

  /** Aborts the run's signal once; later calls keep the first reason. */
  markLost(reason: LockLostReason): void {
    if (this.lost) return;
    this.renewAt = Infinity;
    this.lostReason = new LockLostError(this.name, reason);
    this.controller?.abort(this.lostReason);
    this.listener.lost(this, reason);
  }

  /**
   * Starts a grant of `lockAtMostFor` at `sentAt`: renewals stop at its end, and the signal aborts a
   * tenth of the lock's real length (the lease, or the whole grant if shorter) before a known expiry.
   */
  private grant(sentAt: number, lockAtMostFor: number): void {
    this.capAt = sentAt + lockAtMostFor;
    this.abortMargin = Math.min(ABORT_MARGIN_MS, Math.min(this.lease ?? Infinity, lockAtMostFor) / 10);
  }

  private expire(sentAt: number, ttl: number): void {
    this.expiresAt = sentAt + ttl;
  }
}
