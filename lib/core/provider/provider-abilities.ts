import type {
  JobRecord,
  LeaseRenewal,
  LeaseRenewalOutcome,
  LockNotHeldReason,
  LockProvider,
  OccurrenceClaim,
  RecoveryClaim,
  SimpleLock,
} from './lock-provider.js';
import type { LockConfiguration } from './lock-configuration.js';
import type { OutageReporter } from './store-outage-report.js';

/*
 * What a provider can do beyond `lock()`, one interface per ability (ShedLock's `ExtensibleLockProvider`
 * idea): the options that need an ability check for it at startup with these guards, and code that
 * holds a provider with an ability calls it without `!`.
 */

/** Renews the leases of `keepAlive` runs. */
export interface LeaseRenewingLockProvider extends LockProvider {
  /**
   * Sets each lock's TTL to its `ttl` if the lock is still ours, all in one store round trip where the
   * store allows. Resolves to one outcome per renewal, in order; rejects on a store error. Unlike
   * `extend`, the lock objects stay usable.
   */
  renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]>;
}

/** What a renewal or release by name and owner found: done, or why the owner no longer held a live lock. */
export type OwnerRenewal = 'renewed' | LockNotHeldReason;
export type OwnerRelease = 'released' | LockNotHeldReason;

/**
 * Locks addressed by an owner the caller chooses (any non-empty string, never reused for another acquisition):
 * taken with `lock(configuration, { owner })`, then renewed and released by name and owner, with no lock object,
 * from any process. Each call is one compare-and-set on the owner and the expiry, by the store's clock.
 */
export interface OwnerAddressedLockProvider extends LockProvider {
  /** `lock()`, storing `options.owner` as the lock's owner (operators see it as its holder). */
  lock(configuration: LockConfiguration, options?: { readonly owner?: string }): Promise<SimpleLock | undefined>;
  /** Sets `owner`'s live lock on `name` to expire `ttl` ms from now; otherwise changes nothing. */
  renewByOwner(name: string, owner: string, ttl: number): Promise<OwnerRenewal>;
  /** Frees `owner`'s live lock on `name` at once (no `lockAtLeastFor`); otherwise changes nothing. */
  releaseByOwner(name: string, owner: string): Promise<OwnerRelease>;
}

/** Claims one scheduled occurrence of a cron job, for once-per-occurrence locking. */
export interface OccurrenceLockProvider extends LockProvider {
  /**
   * Takes the lock for one scheduled occurrence (its fire time), refused if the lock is held or that
   * occurrence (or a later one) was already claimed. Records the run in the job record, in the same
   * store round trip.
   */
  lockOccurrence(configuration: LockConfiguration, occurrence: Date): Promise<OccurrenceClaim>;
}

/** Re-runs an occurrence whose node died, for `onCrash: 'rerun'`. */
export interface RecoveringLockProvider extends OccurrenceLockProvider {
  /**
   * Takes over `occurrence` if its run died (record still running, lock gone for at least `grace` ms by
   * the store's clock) and fewer than `maxAttempts` runs of it have started. Refused as `running` while
   * the lock is held or the grace has not passed.
   */
  recoverOccurrence(
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    grace: number,
  ): Promise<RecoveryClaim>;
}

/** Retries an occurrence whose run failed, for the `retry` option. */
export interface RetryingLockProvider extends OccurrenceLockProvider {
  /**
   * Takes `occurrence` for its next attempt if its last attempt failed, fewer than `maxAttempts` attempts have
   * started, and `backoff` × 2^(attempt − 1) ms have passed since attempt `attempt` failed, by the store's clock.
   * Refused as `running` while an attempt runs, the lock is held or the backoff has not passed.
   */
  retryOccurrence(
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    backoff: number,
  ): Promise<RecoveryClaim>;
}

/** Reads the job record of a lock name, for operators and catch-up. */
export interface JobRecordReader {
  readJobRecord(name: string): Promise<JobRecord | undefined>;
}

/**
 * Reports its store's outages itself: one line when the store becomes unreachable (naming it, never a
 * password), one when it is back. The module uses it for a `provider` it is given.
 */
export interface OutageReportingLockProvider extends LockProvider, OutageReporter {}

/**
 * Checks once, at startup, that its store accepts the provider's configuration: credentials, the
 * commands it needs, the TLS certificate. The module fails the startup on what it finds (option
 * `startupCheck`).
 */
export interface StartupCheckingLockProvider extends LockProvider {
  /**
   * Resolves when the store answered the check, and when it is unreachable (an outage, which the app
   * must survive). Rejects with a `LockProviderMisconfiguredError` naming the store and what is wrong.
   */
  checkProvider(): Promise<void>;
}

/** The abilities, by the method each one adds. */
export const PROVIDER_ABILITY_METHODS = [
  'renewLeases',
  'lockOccurrence',
  'recoverOccurrence',
  'retryOccurrence',
  'readJobRecord',
  'reportOutages',
  'checkProvider',
  'renewByOwner',
  'releaseByOwner',
] as const;

export function canRenewLeases(provider: LockProvider): provider is LeaseRenewingLockProvider {
  return typeof (provider as Partial<LeaseRenewingLockProvider>).renewLeases === 'function';
}

export function canClaimOccurrences(provider: LockProvider): provider is OccurrenceLockProvider {
  return typeof (provider as Partial<OccurrenceLockProvider>).lockOccurrence === 'function';
}

export function canRecoverOccurrences(provider: LockProvider): provider is RecoveringLockProvider {
  return (
    canClaimOccurrences(provider) &&
    typeof (provider as Partial<RecoveringLockProvider>).recoverOccurrence === 'function'
  );
}

export function canRetryOccurrences(provider: LockProvider): provider is RetryingLockProvider {
  return (
    canClaimOccurrences(provider) && typeof (provider as Partial<RetryingLockProvider>).retryOccurrence === 'function'
  );
}

export function canReadJobRecords(provider: LockProvider): provider is LockProvider & JobRecordReader {
  return typeof (provider as Partial<JobRecordReader>).readJobRecord === 'function';
}

export function canReportOutages(provider: LockProvider): provider is OutageReportingLockProvider {
  return typeof (provider as Partial<OutageReportingLockProvider>).reportOutages === 'function';
}

export function canCheckProvider(provider: LockProvider): provider is StartupCheckingLockProvider {
  return typeof (provider as Partial<StartupCheckingLockProvider>).checkProvider === 'function';
}

export function canAddressOwners(provider: LockProvider): provider is OwnerAddressedLockProvider {
  const candidate = provider as Partial<OwnerAddressedLockProvider>;
  return typeof candidate.renewByOwner === 'function' && typeof candidate.releaseByOwner === 'function';
}
