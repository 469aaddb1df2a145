import { randomUUID } from 'node:crypto';
import { AbstractSimpleLock } from '../../core/abstract-simple-lock.js';
import type { LockConfiguration } from '../../core/lock-configuration.js';
import {
  LockNotHeldError,
  type JobRecord,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type OccurrenceClaim,
  type RecoveryClaim,
  type RunOutcome,
  type SimpleLock,
} from '../../core/lock-provider.js';
import type {
  JobRecordReader,
  LeaseRenewingLockProvider,
  RecoveringLockProvider,
} from '../../core/provider-abilities.js';
import { defaultLockedBy } from '../../core/locked-by.js';

interface HeldLock {
  token: string;
  /** `performance.now()` after which the lock is gone. */
  expiresAt: number;
}

/**
 * A job record as kept in memory: the stored fields of a {@link JobRecord}, plus the run's token and
 * when a recovery first found its lock gone (monotonic ms).
 */
type StoredRecord = Omit<JobRecord, 'held'> & { token: string; orphanedAt?: number };

/**
 * Locks in this process's memory, with the same semantics as {@link RedisLockProvider}
 * (expiry, `lockAtLeastFor`, owner checks, fencing tokens, occurrence claims). For tests and
 * single-process apps.
 */
export class InMemoryLockProvider implements LeaseRenewingLockProvider, RecoveringLockProvider, JobRecordReader {
  private readonly locks = new Map<string, HeldLock>();
  private readonly fences = new Map<string, number>();
  private readonly records = new Map<string, StoredRecord>();
  private readonly lockedBy: string;

  /** @param options.lockedBy who runs occurrences recorded in job records; default `<hostname>:<pid>`. */
  constructor(options: { lockedBy?: string } = {}) {
    this.lockedBy = options.lockedBy ?? defaultLockedBy();
  }

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    return this.holder(configuration.name) ? undefined : this.take(configuration);
  }

  async lockOccurrence(configuration: LockConfiguration, occurrence: number): Promise<OccurrenceClaim> {
    const record = this.records.get(configuration.name);
    if (record && record.occurrence.getTime() >= occurrence) {
      return {
        refused: 'already-ran',
        running: record.occurrence.getTime() === occurrence && record.state === 'running',
      };
    }
    if (this.holder(configuration.name)) return { refused: 'locked' };
    const lock = this.take(configuration);
    this.records.set(configuration.name, {
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
    const record = this.records.get(configuration.name);
    if (!record || record.occurrence.getTime() !== occurrence) return { refused: 'settled', state: '' };
    if (record.state !== 'running') return { refused: 'settled', state: record.state };
    if (this.holder(configuration.name)) return { refused: 'running' };
    record.orphanedAt ??= performance.now();
    if (performance.now() - record.orphanedAt < grace) return { refused: 'running' };
    if (record.attempt + 1 > maxAttempts) {
      this.records.set(configuration.name, { ...record, state: 'crashed' });
      return { refused: 'settled', state: 'crashed' };
    }
    const lock = this.take(configuration);
    const attempt = record.attempt + 1;
    this.records.set(configuration.name, {
      ...record,
      token: lock.token,
      runBy: this.lockedBy,
      startedAt: new Date(),
      attempt,
      previousHolder: record.runBy,
      orphanedAt: undefined,
    });
    return { lock, attempt, previousHolder: record.runBy };
  }

  async readJobRecord(name: string): Promise<JobRecord | undefined> {
    const record = this.records.get(name);
    if (!record) return undefined;
    const { token: _token, orphanedAt: _orphanedAt, ...stored } = record;
    return { ...stored, held: this.holder(name) !== undefined };
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    return renewals.map(({ lock, ttl }) => {
      const own = lock as InMemorySimpleLock;
      const held = this.ownedBy(own.configuration.name, own.token);
      if (held instanceof LockNotHeldError) return held.reason;
      held.expiresAt = performance.now() + ttl;
      return 'renewed';
    });
  }

  /** @internal The live lock of a name, dropping it if it has expired. */
  holder(name: string, now = performance.now()): HeldLock | undefined {
    const held = this.locks.get(name);
    if (held && held.expiresAt <= now) {
      this.locks.delete(name);
      return undefined;
    }
    return held;
  }

  /** @internal The lock of `name` if `token` still owns it; otherwise why not. */
  ownedBy(name: string, token: string): HeldLock | LockNotHeldError {
    const held = this.holder(name);
    if (!held) return new LockNotHeldError(name, 'expired');
    if (held.token !== token) return new LockNotHeldError(name, 'not-owner');
    return held;
  }

  /** @internal */
  delete(name: string): void {
    this.locks.delete(name);
  }

  /** @internal Records how the run holding `token` ended, if the record is still that run's. */
  finishRun(name: string, token: string, outcome: RunOutcome): void {
    const record = this.records.get(name);
    if (record?.token === token) this.records.set(name, { ...record, state: outcome, finishedAt: new Date() });
  }

  private take(configuration: LockConfiguration): InMemorySimpleLock {
    const now = performance.now();
    const token = randomUUID();
    const fencingToken = (this.fences.get(configuration.name) ?? 0) + 1;
    this.fences.set(configuration.name, fencingToken);
    this.locks.set(configuration.name, { token, expiresAt: now + configuration.lockAtMostFor });
    return new InMemorySimpleLock(this, token, configuration, fencingToken, now);
  }
}

class InMemorySimpleLock extends AbstractSimpleLock {
  constructor(
    private readonly store: InMemoryLockProvider,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
  ) {
    super(configuration, acquiredAt);
  }

  protected async release(keepFor: number, outcome?: RunOutcome): Promise<void> {
    // unlock() records no outcome: an occurrence given back unused still reads running, as after a crash.
    if (outcome !== undefined) this.store.finishRun(this.configuration.name, this.token, outcome);
    const held = this.store.ownedBy(this.configuration.name, this.token);
    if (held instanceof LockNotHeldError) throw held;
    if (keepFor > 0) held.expiresAt = performance.now() + keepFor;
    else this.store.delete(this.configuration.name);
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const held = this.store.ownedBy(configuration.name, this.token);
    if (held instanceof LockNotHeldError) return undefined;
    const now = performance.now();
    held.expiresAt = now + configuration.lockAtMostFor;
    return new InMemorySimpleLock(this.store, this.token, configuration, this.fencingToken, now);
  }
}
