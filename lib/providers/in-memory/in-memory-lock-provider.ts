import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import { defaultLockedBy } from '../../core/provider/default-locked-by.js';
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
  RecoveringLockProvider,
} from '../../core/provider/provider-abilities.js';
import type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../../operators/operator-abilities.js';
import { DEFAULT_HISTORY_LIMIT } from '../../operators/operator-store.js';
import { InMemoryLocks, type InMemorySimpleLock, type RunEnd } from './in-memory-locks.js';
import { InMemoryOperatorStore } from './in-memory-operator-store.js';

/**
 * A job record as kept in memory: the stored fields of a {@link JobRecord}, plus the run's token and
 * when a recovery first found its lock gone (monotonic ms).
 */
type StoredRecord = Omit<JobRecord, 'held'> & { token: string; orphanedAt?: number };

/** Options of {@link InMemoryLockProvider}. */
export interface InMemoryLockProviderOptions {
  /** Who runs the locks this provider takes, in job records and for operators. Default `<hostname>:<pid>`. */
  lockedBy?: string;
  /** How many runs (and operator actions) each job's history keeps. Default 50. */
  historyLimit?: number;
}

/**
 * Locks in this process's memory, with the same semantics as {@link RedisLockProvider} (expiry,
 * `lockAtLeastFor`, owner checks, fencing tokens, occurrence claims, pauses) and its operator store, so the
 * console works too. For tests and single-process apps.
 */
export class InMemoryLockProvider
  implements LeaseRenewingLockProvider, RecoveringLockProvider, JobRecordReader, JobLockProvider, OperatorLockProvider
{
  private readonly records = new Map<string, StoredRecord>();
  private readonly lockedBy: string;
  private readonly locks: InMemoryLocks;
  private readonly operators: InMemoryOperatorStore;

  constructor(options: InMemoryLockProviderOptions = {}) {
    this.lockedBy = options.lockedBy ?? defaultLockedBy();
    this.locks = new InMemoryLocks(this.lockedBy, (end) => this.runEnded(end));
    this.operators = new InMemoryOperatorStore(this.locks, options.historyLimit ?? DEFAULT_HISTORY_LIMIT);
  }

  /** The operator console's records, beside the locks. */
  operatorStore(): InMemoryOperatorStore {
    return this.operators;
  }

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    return this.locks.holder(configuration.name) ? undefined : this.locks.take(configuration);
  }

  async lockJob(configuration: LockConfiguration, manual: boolean): Promise<JobLockClaim> {
    const { name } = configuration;
    if (this.locks.holder(name)) return { refused: 'locked' };
    if (!manual && this.operators.isPaused(name)) return { refused: 'paused' };
    return { lock: this.locks.take(configuration, true) };
  }

  async lockOccurrence(configuration: LockConfiguration, occurrence: number): Promise<OccurrenceClaim> {
    const { name } = configuration;
    const record = this.records.get(name);
    if (record && record.occurrence.getTime() >= occurrence) {
      return {
        refused: 'already-ran',
        running: record.occurrence.getTime() === occurrence && record.state === 'running',
      };
    }
    if (this.locks.holder(name)) return { refused: 'locked' };
    if (this.operators.isPaused(name)) return { refused: 'paused' };
    const lock = this.locks.take(configuration, true);
    this.records.set(name, {
      occurrence: new Date(occurrence),
      state: 'running',
      token: lock.token,
      runBy: this.lockedBy,
      startedAt: new Date(),
      attempt: 1,
    });
    return { lock };
  }

  async recoverOccurrence(
    configuration: LockConfiguration,
    occurrence: number,
    maxAttempts: number,
    grace: number,
  ): Promise<RecoveryClaim> {
    const { name } = configuration;
    const record = this.records.get(name);
    if (!record || record.occurrence.getTime() !== occurrence) return { refused: 'settled', state: '' };
    if (record.state !== 'running') return { refused: 'settled', state: record.state };
    if (this.locks.holder(name)) return { refused: 'running' };
    if (this.operators.isPaused(name)) return { refused: 'paused' };
    record.orphanedAt ??= performance.now();
    if (performance.now() - record.orphanedAt < grace) return { refused: 'running' };
    const { runBy, startedAt, attempt } = record;
    this.operators.record(name, {
      type: 'run',
      occurrence,
      node: runBy,
      startedAt: +startedAt,
      outcome: 'crashed',
      attempt,
    });
    if (attempt + 1 > maxAttempts) {
      this.records.set(name, { ...record, state: 'crashed' });
      return { refused: 'settled', state: 'crashed' };
    }
    const lock = this.locks.take(configuration, true);
    this.records.set(name, {
      ...record,
      token: lock.token,
      runBy: this.lockedBy,
      startedAt: new Date(),
      attempt: attempt + 1,
      previousHolder: runBy,
      orphanedAt: undefined,
    });
    return { lock, attempt: attempt + 1, previousHolder: runBy };
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

  /**
   * A run ended (`finish()`): its job record says how, if the record is still that run's, and a scheduled
   * job's run goes into its history (`lost` when its lock was gone).
   */
  private runEnded({ lock, outcome, report, held }: RunEnd): void {
    const { name } = lock.configuration;
    const record = this.records.get(name);
    if (record?.token === lock.token) this.records.set(name, { ...record, state: outcome, finishedAt: new Date() });
    if (!lock.ofJob || !report) return;
    const finishedAt = Math.round(report.startedAt + report.durationMs);
    const { fencingToken } = lock;
    const entry = { type: 'run', ...report, finishedAt, node: this.lockedBy, fencingToken } as const;
    this.operators.record(name, { ...entry, outcome: held ? outcome : 'lost' });
  }
}
