import { defaultLockedBy } from '../../core/provider/default-locked-by.js';
import { SchedulerLockConfigurationError, type LockConfiguration } from '../../core/provider/lock-configuration.js';
import { quoted } from '../../core/provider/message-text.js';
import { nonEmptyStringOption, optionsObject, wholeNumberOption } from '../../core/provider/option-values.js';
import { DEFAULT_HISTORY_LIMIT } from '../../operators/operator-provider.js';
import {
  LockNotHeldError,
  type JobRecord,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type OccurrenceClaim,
  type RecoveryClaim,
  type SimpleLock,
} from '../../core/provider/lock-provider.js';
import type {
  JobRecordReader,
  LeaseRenewingLockProvider,
  OwnerAddressedLockProvider,
  OwnerRelease,
  OwnerRenewal,
  RecoveringLockProvider,
  RetryingLockProvider,
} from '../../core/provider/provider-abilities.js';
import { ttlMillis } from '../../core/provider/abstract-simple-lock.js';
import { assertCallerOwner, CALLER_OWNER_TAG } from '../../core/provider/owner-value.js';
import type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../../operators/operator-abilities.js';
import type { InMemoryLocks, InMemorySimpleLock } from './in-memory-locks.js';
import type { InMemoryOperatorProvider } from './in-memory-operator-provider.js';
import { InMemoryStore, type StoredRecord } from './in-memory-store.js';

/**
 * Options of {@link InMemoryLockProvider}, checked when it is constructed: a value outside what each option says,
 * or a key that is none of these, throws a `SchedulerLockConfigurationError` naming the option and the value.
 */
export interface InMemoryLockProviderOptions {
  /**
   * Who runs the locks this provider takes, in job records and for operators: a non-empty string. Default
   * `<hostname>:<pid>`. The module's own `node` option does not reach a provider the app builds: set it here.
   */
  node?: string;
  /** How many runs (and operator actions) each job's history keeps: a whole number from 1 to 2^31-1. Default 50. */
  historyLimit?: number;
  /**
   * @internal The store this provider is one node of, shared with other providers (`nest-scheduler-lock/testing`
   * simulates a cluster with it), without `historyLimit`: that is the store's. Default: a store of its own.
   */
  store?: InMemoryStore;
}

const SUBJECT = 'InMemoryLockProvider options';
const OPTIONS: readonly (keyof InMemoryLockProviderOptions)[] = ['node', 'historyLimit', 'store'];

/** The `store` option, checked: a store of `nest-scheduler-lock/testing`, whose `historyLimit` is its own. */
function sharedStore({ store, historyLimit }: Partial<InMemoryLockProviderOptions>): InMemoryStore {
  if (!(store instanceof InMemoryStore)) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: store must be an InMemoryStore (got ${quoted(store)})`);
  }
  if (historyLimit !== undefined) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: historyLimit is the store's; set it on the store`);
  }
  return store;
}

/** The token of a lock taken for the caller's `owner`: no random token starts with the tag. */
function callerToken(owner: string): string {
  assertCallerOwner(owner);
  return `${CALLER_OWNER_TAG}${owner}`;
}

/**
 * Locks in this process's memory, with the same semantics as {@link RedisLockProvider} (expiry,
 * `lockAtLeastFor`, owner checks, fencing tokens, occurrence claims, pauses) and its operator store, so the
 * console works too. For tests and single-process apps.
 */
export class InMemoryLockProvider
  implements
    LeaseRenewingLockProvider,
    RecoveringLockProvider,
    RetryingLockProvider,
    OwnerAddressedLockProvider,
    JobRecordReader,
    JobLockProvider,
    OperatorLockProvider
{
  private readonly records: Map<string, StoredRecord>;
  /** This node's name, stored with each lock it takes. */
  readonly node: string;
  private readonly locks: InMemoryLocks;
  private readonly operators: InMemoryOperatorProvider;

  constructor(options?: InMemoryLockProviderOptions) {
    const given = optionsObject(options, OPTIONS, SUBJECT);
    this.node = nonEmptyStringOption(given.node, defaultLockedBy(), 'node', SUBJECT);
    const historyLimit = wholeNumberOption(given.historyLimit, DEFAULT_HISTORY_LIMIT, 'historyLimit', SUBJECT);
    const store = given.store === undefined ? new InMemoryStore(historyLimit) : sharedStore(given);
    ({ locks: this.locks, records: this.records, operators: this.operators } = store);
  }

  /** The operator console's records, beside the locks. */
  operatorProvider(): InMemoryOperatorProvider {
    return this.operators;
  }

  async lock(configuration: LockConfiguration, options?: { owner?: string }): Promise<SimpleLock | undefined> {
    const owner = options?.owner;
    const token = owner === undefined ? undefined : callerToken(owner);
    if (this.locks.holder(configuration.name)) return undefined;
    // Operators see the caller's owner as the lock's holder, as they do on the other stores.
    return this.locks.take(configuration, owner ?? this.node, false, token);
  }

  async renewByOwner(name: string, owner: string, ttl: number): Promise<OwnerRenewal> {
    return this.locks.settle(name, callerToken(owner), ttlMillis(ttl))?.reason ?? 'renewed';
  }

  async releaseByOwner(name: string, owner: string): Promise<OwnerRelease> {
    return this.locks.settle(name, callerToken(owner))?.reason ?? 'released';
  }

  async lockJob(configuration: LockConfiguration, manual: boolean): Promise<JobLockClaim> {
    const { name } = configuration;
    if (this.locks.holder(name)) return { refused: 'locked' };
    if (!manual && this.operators.isPaused(name)) return { refused: 'paused' };
    return { lock: this.locks.take(configuration, this.node, true) };
  }

  async lockOccurrence(configuration: LockConfiguration, occurrence: Date): Promise<OccurrenceClaim> {
    const { name } = configuration;
    const record = this.records.get(name);
    if (record && record.occurrence >= occurrence) {
      return {
        refused: 'already-ran',
        running: record.occurrence.getTime() === occurrence.getTime() && record.state === 'running',
      };
    }
    if (this.locks.holder(name)) return { refused: 'locked' };
    if (this.operators.isPaused(name)) return { refused: 'paused' };
    const lock = this.locks.take(configuration, this.node, true);
    this.records.set(name, {
      occurrence: new Date(occurrence.getTime()),
      state: 'running',
      token: lock.token,
      node: this.node,
      startedAt: new Date(),
      finishedAt: null,
      attempt: 1,
      previousNode: null,
    });
    return { lock };
  }

  async recoverOccurrence(
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    grace: number,
  ): Promise<RecoveryClaim> {
    const { name } = configuration;
    const record = this.records.get(name);
    if (!record || record.occurrence.getTime() !== occurrence.getTime()) return { refused: 'settled', state: '' };
    if (record.state !== 'running') return { refused: 'settled', state: record.state };
    if (this.locks.holder(name)) return { refused: 'running' };
    if (this.operators.isPaused(name)) return { refused: 'paused' };
    record.orphanedAt ??= performance.now();
    if (performance.now() - record.orphanedAt < grace) return { refused: 'running' };
    const { node, startedAt, attempt } = record;
    this.operators.record(name, {
      type: 'run',
      occurrence: record.occurrence,
      node,
      startedAt,
      finishedAt: null,
      durationMs: null,
      outcome: 'crashed',
      error: null,
      fencingToken: null,
      attempt,
      manual: null,
    });
    if (attempt + 1 > maxAttempts) {
      this.records.set(name, { ...record, state: 'crashed' });
      return { refused: 'settled', state: 'crashed' };
    }
    return this.takeOver(configuration, record);
  }

  async retryOccurrence(
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    backoff: number,
  ): Promise<RecoveryClaim> {
    const { name } = configuration;
    const record = this.records.get(name);
    if (!record || record.occurrence.getTime() !== occurrence.getTime()) return { refused: 'settled', state: '' };
    if (record.state === 'running') return { refused: 'running' };
    if (record.state !== 'failed' || record.attempt + 1 > maxAttempts)
      return { refused: 'settled', state: record.state };
    if (this.locks.holder(name)) return { refused: 'running' };
    if (this.operators.isPaused(name)) return { refused: 'paused' };
    const failedAt = record.finishedAt?.getTime() ?? 0;
    if (Date.now() - failedAt < backoff * 2 ** (record.attempt - 1)) return { refused: 'running' };
    return this.takeOver(configuration, record);
  }

  /** Takes `record`'s occurrence over for its next attempt: a recovery or a retry. */
  private takeOver(configuration: LockConfiguration, record: StoredRecord): RecoveryClaim {
    const { node, attempt, ...kept } = record;
    const lock = this.locks.take(configuration, this.node, true);
    this.records.set(configuration.name, {
      ...kept,
      state: 'running',
      token: lock.token,
      node: this.node,
      startedAt: new Date(),
      finishedAt: null,
      attempt: attempt + 1,
      previousNode: node,
      orphanedAt: undefined,
    });
    return { lock, attempt: attempt + 1, previousNode: node };
  }

  async readJobRecord(name: string): Promise<JobRecord | undefined> {
    const record = this.records.get(name);
    if (!record) return undefined;
    const { token: _token, orphanedAt: _orphanedAt, ...stored } = record;
    return { ...stored, held: this.locks.holder(name) !== undefined };
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    return renewals.map(({ lock, ttl }) => {
      const own = lock as InMemorySimpleLock;
      const held = this.locks.ownedBy(own.configuration.name, own.token);
      if (held instanceof LockNotHeldError) return held.reason;
      held.expiresAt = performance.now() + ttl;
      return 'renewed';
    });
  }
}
