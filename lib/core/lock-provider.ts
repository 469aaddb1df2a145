import type { LockConfiguration } from './lock-configuration.js';

/**
 * The storage plug-in: takes a named lock if it is free. Not reentrant: a second `lock()` of a held
 * name returns `undefined`, even from the process that holds it.
 */
export interface LockProvider {
  /** Resolves to the lock, or to `undefined` when another holder has it. Rejects on a store error. */
  lock(configuration: LockConfiguration): Promise<SimpleLock | undefined>;
  /**
   * Optional, needed for `keepAlive`: sets each lock's TTL to its `ttl` if the lock is still ours, all
   * in one store round trip where the store allows. Resolves to one outcome per renewal, in order;
   * rejects on a store error. Unlike `extend`, the lock objects stay usable.
   */
  renewLeases?(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]>;
}

/** One lease to renew: a lock this provider returned, and its new TTL in ms. */
export interface LeaseRenewal {
  readonly lock: SimpleLock;
  readonly ttl: number;
}

/** What a renewal found. */
export type LeaseRenewalOutcome = 'renewed' | LockNotHeldReason;

/**
 * One acquisition of a lock. Single-use: calling `unlock` or `extend` on a lock that was already
 * unlocked or extended throws.
 */
export interface SimpleLock {
  readonly configuration: LockConfiguration;
  /** Strictly greater than every earlier token of the same lock name, when the provider supports fencing. */
  readonly fencingToken?: number;
  /**
   * Releases the lock, keeping it until `lockAtLeastFor` after it was taken. Rejects with
   * {@link LockNotHeldError} if the lock had expired or belongs to someone else by then.
   */
  unlock(): Promise<void>;
  /**
   * Moves the expiry to `lockAtMostFor` from now (and `lockAtLeastFor` from now for the release).
   * Resolves to a new lock object, or `undefined` if this lock had expired or is not ours anymore.
   */
  extend(lockAtMostFor: number, lockAtLeastFor: number): Promise<SimpleLock | undefined>;
}

/** Why a lock was no longer held when its holder tried to release it. */
export type LockNotHeldReason = 'expired' | 'not-owner';

/** Thrown by {@link SimpleLock.unlock} when the lock was lost before the release. */
export class LockNotHeldError extends Error {
  override readonly name = 'LockNotHeldError';
  constructor(
    readonly lockName: string,
    readonly reason: LockNotHeldReason,
  ) {
    super(
      reason === 'expired'
        ? `Lock "${lockName}" had expired before it was released`
        : `Lock "${lockName}" is held by another owner; it was not released`,
    );
  }
}
