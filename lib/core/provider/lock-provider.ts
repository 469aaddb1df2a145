import type { LockConfiguration, SchedulerLockConfigurationError } from './lock-configuration.js';

/**
 * The storage plug-in, ShedLock's `LockProvider`: takes a named lock if it is free. Not reentrant: a
 * second `lock()` of a held name returns `undefined`, even from the process that holds it.
 *
 * That is all a provider must do. Some options need more, each an ability of its own interface (see
 * `provider-abilities.ts`: `LeaseRenewingLockProvider`, `OccurrenceLockProvider`,
 * `RecoveringLockProvider`, `JobRecordReader`); the module refuses those options at startup,
 * naming the provider, when it lacks the ability. What a provider returns is checked: a value that
 * breaks this contract skips the run with a {@link SchedulerLockConfigurationError} naming the
 * provider's class and the missing member.
 */
export interface LockProvider {
  /**
   * Takes the lock for `configuration.lockAtMostFor` ms if no one holds it. Returns a promise (never a
   * bare value) that resolves to the lock (an object with `unlock()` and `extend()`), or to `undefined`
   * (`null` is read the same) when another holder has it. Rejects on a store error.
   */
  lock(configuration: LockConfiguration): Promise<SimpleLock | undefined>;
}

/** What `OccurrenceLockProvider.lockOccurrence` got. */
export type OccurrenceClaim =
  | { readonly lock: SimpleLock }
  | { readonly refused: 'locked' | 'paused' }
  | { readonly refused: 'already-ran'; /** that very occurrence is still running */ readonly running: boolean };

/** What `RecoveringLockProvider.recoverOccurrence` or `RetryingLockProvider.retryOccurrence` got. */
export type RecoveryClaim =
  | { readonly lock: SimpleLock; readonly attempt: number; readonly previousNode: string }
  | { readonly refused: 'running' | 'paused' }
  | { readonly refused: 'settled'; readonly state: JobRunState | '' };

/** How a job's last claimed occurrence stands. `crashed`: its node died and it was not (or no more) re-run. */
export type JobRunState = 'running' | 'succeeded' | 'failed' | 'crashed';

/** How a run ended, as {@link SimpleLock.finish} records it. */
export type RunOutcome = 'succeeded' | 'failed';

/** The last claimed occurrence of a once-per-occurrence job, as stored with its lock. */
export interface JobRecord {
  /** The occurrence's nominal fire time. */
  readonly occurrence: Date;
  /** `running` with `held: false` means the run's node died (or it is being recovered). */
  readonly state: JobRunState;
  readonly node: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  /** 1 for the first run of the occurrence, 2+ for recoveries and retries. */
  readonly attempt: number;
  /** Who ran the attempt before this one, for a recovery. */
  readonly previousNode: string | null;
  /** Whether the job's lock is held right now. */
  readonly held: boolean;
}

/** One lease to renew: a lock this provider returned, and its new TTL in ms. */
export interface LeaseRenewal {
  readonly lock: SimpleLock;
  readonly ttl: number;
}

/** What a renewal found. */
export type LeaseRenewalOutcome = 'renewed' | LockNotHeldReason;

/**
 * One acquisition of a lock. The library needs `unlock()` and `extend()`; `finish()` and
 * `fencingToken` are optional. It releases a lock once (only a `finish()` that rejected with a store
 * error is called again), and after `extend()` it uses only the lock that `extend()` resolved to, so a
 * provider may make its locks single-use, as `AbstractSimpleLock` does (a second `unlock()` or
 * `extend()` throws).
 */
export interface SimpleLock {
  /**
   * What the lock was taken with. Optional and never read by the library, which keeps the
   * configuration it asked for; `AbstractSimpleLock` sets it.
   */
  readonly configuration?: LockConfiguration;
  /** Strictly greater than every earlier token of the same lock name, when the provider supports fencing. */
  readonly fencingToken?: number;
  /**
   * Releases the lock, keeping it until `lockAtLeastFor` after it was taken. Rejects with
   * {@link LockNotHeldError} if the lock had expired or belongs to someone else by then.
   */
  unlock(): Promise<void>;
  /**
   * For the lock of a scheduled job's run: {@link unlock}, and record how the run ended, in the same store
   * round trip: in the job record (an occurrence's run), and with `report` in the job's run history where
   * the store keeps one. The record is updated even if the lock had expired meanwhile, as long as no other
   * node took the occurrence over. A call that rejected with a store error (not {@link LockNotHeldError})
   * may be made again: the executor retries it until the store answers.
   */
  finish?(outcome: RunOutcome, report?: RunReport): Promise<void>;
  /**
   * Moves the expiry to `lockAtMostFor` from now (and `lockAtLeastFor` from now for the release).
   * Resolves to a new lock object, or `undefined` if this lock had expired or is not ours anymore.
   */
  extend(lockAtMostFor: number, lockAtLeastFor: number): Promise<SimpleLock | undefined>;
}

/**
 * What a run's release tells a store that keeps a run history (the operators' view), beyond what the store
 * knows itself: see {@link SimpleLock.finish}.
 */
export interface RunReport {
  /** The cron occurrence, for once-per-occurrence jobs. */
  readonly occurrence?: Date;
  /** By this node's clock. */
  readonly startedAt: Date;
  readonly durationMs: number;
  /** The error's message, cut to 500 characters, when the run failed. */
  readonly error?: string;
  readonly attempt: number;
  /** For a run an operator asked for (`trigger`): who. */
  readonly manual?: { readonly actor: string; readonly triggerId: string };
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
