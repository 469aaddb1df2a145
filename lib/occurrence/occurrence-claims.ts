import type { AcquiredLock, LockAcquisition, SkippedRun } from '../core/executor/lock-acquisition.js';
import { SchedulerLockConfigurationError, type LockConfiguration } from '../core/provider/lock-configuration.js';
import type { LockProvider, OccurrenceClaim, RecoveryClaim } from '../core/provider/lock-provider.js';
import {
  canClaimOccurrences,
  canReadJobRecords,
  canRecoverOccurrences,
  canRetryOccurrences,
  type JobRecordReader,
  type OccurrenceLockProvider,
  type RecoveringLockProvider,
  type RetryingLockProvider,
} from '../core/provider/provider-abilities.js';
import { awaitProviderCall, checkedClaim, describeProvider } from '../core/provider/provider-checks.js';
import type { OccurrencePolicy } from './occurrence-policy.js';

/** What a once-per-occurrence job needs of its provider, found (or refused) at startup. */
export interface OccurrenceStore {
  readonly claims: OccurrenceLockProvider;
  /** Set for `onCrash: 'rerun'`. */
  readonly recovery: RecoveringLockProvider | undefined;
  /** Set for `retry`. */
  readonly retries: RetryingLockProvider | undefined;
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
  const retries = policy.retry !== null;
  if (
    canClaimOccurrences(provider) &&
    (!recovers || canRecoverOccurrences(provider)) &&
    (!retries || canRetryOccurrences(provider))
  ) {
    return {
      claims: provider,
      recovery: recovers && canRecoverOccurrences(provider) ? provider : undefined,
      retries: retries && canRetryOccurrences(provider) ? provider : undefined,
      records: canReadJobRecords(provider) ? provider : undefined,
      providerName: describeProvider(provider),
    };
  }
  const needed = [
    'lockOccurrence',
    ...(recovers ? ['recoverOccurrence'] : []),
    ...(retries ? ['retryOccurrence'] : []),
  ];
  const missing = needed.filter(
    (method) => typeof (provider as unknown as Record<string, unknown>)[method] !== 'function',
  );
  const asked = [...(recovers ? ["onCrash: 'rerun'"] : []), ...(retries ? ['retry'] : [])];
  const instead = missing.includes('lockOccurrence') ? 'set occurrence: false' : `remove ${asked.join(' and ')}`;
  throw new SchedulerLockConfigurationError(
    `${subject}: once-per-occurrence locking needs a provider with ${missing.join('() and ')}(), which provider ` +
      `${describeProvider(provider)} does not have; ${instead}`,
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

/**
 * Takes over an occurrence for its next attempt: a re-run once its node died (`recoverOccurrence()`, its lock gone
 * for the grace), or a retry once its last attempt failed (`retryOccurrence()`, after the backoff).
 */
export class OccurrenceRecovery implements LockAcquisition {
  constructor(
    private readonly providerName: string,
    /** The provider's method, for a message about a claim it broke. */
    private readonly source: 'recoverOccurrence()' | 'retryOccurrence()',
    private readonly occurrence: number,
    private readonly claim: (configuration: LockConfiguration) => Promise<RecoveryClaim>,
  ) {}

  async acquire(configuration: LockConfiguration): Promise<AcquiredLock | SkippedRun> {
    const { providerName, source } = this;
    const claimed = await awaitProviderCall(this.claim(configuration), providerName, source);
    const recovered = checkedClaim(claimed, providerName, source);
    if ('lock' in recovered) {
      const recovery = { attempt: recovered.attempt, previousNode: recovered.previousNode };
      return { lock: recovered.lock, run: { occurrence: this.occurrence, recovery }, recordsOutcome: true };
    }
    if (recovered.refused === 'running') return { executed: false, reason: 'locked' };
    if (recovered.refused === 'paused') return { executed: false, reason: 'paused' };
    return { executed: false, reason: 'already-ran', running: false };
  }
}
