import type { AcquiredLock, LockAcquisition, SkippedRun } from '../core/executor/lock-acquisition.js';
import { SchedulerLockConfigurationError, type LockConfiguration } from '../core/provider/lock-configuration.js';
import type { LockProvider, OccurrenceClaim } from '../core/provider/lock-provider.js';
import {
  canClaimOccurrences,
  canReadJobRecords,
  canRecoverOccurrences,
  type JobRecordReader,
  type OccurrenceLockProvider,
  type RecoveringLockProvider,
} from '../core/provider/provider-abilities.js';
import { awaitProviderCall, checkedClaim, describeProvider } from '../core/provider/provider-checks.js';
import type { OccurrencePolicy } from './occurrence-policy.js';

/** What a once-per-occurrence job needs of its provider, found (or refused) at startup. */
export interface OccurrenceStore {
  readonly claims: OccurrenceLockProvider;
  /** Set for `onCrash: 'rerun'`. */
  readonly recovery: RecoveringLockProvider | undefined;
  /** For catch-up: a provider without records never catches up. */
  readonly records: JobRecordReader | undefined;
  /** The provider's class, for a message about a claim it broke: named once, not on every tick. */
  readonly providerName: string;
}

/**
 * The provider's abilities that `policy` needs, or a {@link SchedulerLockConfigurationError} naming
 * `subject`, the provider and the missing methods.
 */
export function occurrenceStore(provider: LockProvider, policy: OccurrencePolicy, subject: string): OccurrenceStore {
  const recovers = policy.onCrash === 'rerun';
  if (canClaimOccurrences(provider) && (!recovers || canRecoverOccurrences(provider))) {
    return {
      claims: provider,
      recovery: recovers && canRecoverOccurrences(provider) ? provider : undefined,
      records: canReadJobRecords(provider) ? provider : undefined,
      providerName: describeProvider(provider),
    };
  }
  const needed = recovers ? (['lockOccurrence', 'recoverOccurrence'] as const) : (['lockOccurrence'] as const);
  const missing = needed.filter(
    (method) => typeof (provider as Partial<RecoveringLockProvider>)[method] !== 'function',
  );
  throw new SchedulerLockConfigurationError(
    `${subject}: once-per-occurrence locking needs a provider with ${missing.join('() and ')}(), which provider ` +
      `${describeProvider(provider)} does not have; set occurrence: false`,
  );
}

/** Takes the lock for one occurrence of a cron job (a tick, or the catch-up run of a missed one). */
export class OccurrenceLock implements LockAcquisition {
  constructor(
    private readonly store: OccurrenceStore,
    private readonly occurrence: number,
    private readonly catchUp = false,
  ) {}

  // Not `async`: a tick's claim waits for Redis with the node's whole burst of ticks, and every promise
  // layer it holds meanwhile is memory per job (see bench/README.md, Scale).
  acquire(configuration: LockConfiguration): Promise<AcquiredLock | SkippedRun> {
    const { claims, providerName } = this.store;
    const source = 'lockOccurrence()';
    const claiming = awaitProviderCall(
      claims.lockOccurrence(configuration, new Date(this.occurrence)),
      providerName,
      source,
    );
    return claiming.then((claim) => this.taken(checkedClaim(claim, providerName, source)));
  }

  private taken(claimed: OccurrenceClaim): AcquiredLock | SkippedRun {
    if ('lock' in claimed) {
      return { lock: claimed.lock, run: { occurrence: this.occurrence, catchUp: this.catchUp }, recordsOutcome: true };
    }
    if (claimed.refused !== 'already-ran') return { executed: false, reason: claimed.refused };
    return { executed: false, reason: 'already-ran', running: claimed.running };
  }
}

/** Takes over an occurrence whose node died, once its lock has been gone for `grace` ms. */
export class OccurrenceRecovery implements LockAcquisition {
  constructor(
    private readonly provider: RecoveringLockProvider,
    private readonly providerName: string,
    private readonly occurrence: number,
    /** How many runs of the occurrence at most, the first one included. */
    private readonly maxAttempts: number,
    private readonly grace: number,
  ) {}

  async acquire(configuration: LockConfiguration): Promise<AcquiredLock | SkippedRun> {
    const recovering = this.provider.recoverOccurrence(
      configuration,
      new Date(this.occurrence),
      this.maxAttempts,
      this.grace,
    );
    const source = 'recoverOccurrence()';
    const recovered = checkedClaim(
      await awaitProviderCall(recovering, this.providerName, source),
      this.providerName,
      source,
    );
    if ('lock' in recovered) {
      const recovery = { attempt: recovered.attempt, previousNode: recovered.previousNode };
      return { lock: recovered.lock, run: { occurrence: this.occurrence, recovery }, recordsOutcome: true };
    }
    if (recovered.refused === 'running') return { executed: false, reason: 'locked' };
    if (recovered.refused === 'paused') return { executed: false, reason: 'paused' };
    return { executed: false, reason: 'already-ran', running: false };
  }
}
