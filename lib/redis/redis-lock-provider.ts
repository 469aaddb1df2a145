import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AbstractSimpleLock, ttlMillis } from '../core/abstract-simple-lock.js';
import type { LockConfiguration } from '../core/lock-configuration.js';
import {
  LockNotHeldError,
  type JobRecord,
  type JobRunState,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type LockProvider,
  type OccurrenceClaim,
  type RecoveryClaim,
  type RunOutcome,
  type SimpleLock,
} from '../core/lock-provider.js';
import {
  acquireLock,
  claimOccurrence,
  OwnerCheck,
  recoverOccurrence,
  releaseLock,
  renewLocks,
  type OccurrenceArgs,
  type RedisClient,
} from './redis-scripts.js';
import { redisFailure } from './redis-failures.js';

/** Options of {@link RedisLockProvider}. */
export interface RedisLockProviderOptions {
  /** Prefix of every key, so several apps or environments can share one Redis. Default `job-lock`. */
  keyPrefix?: string;
  /** Stored with each lock so an operator can see who holds it. Default `<hostname>:<pid>`. */
  lockedBy?: string;
}

/** The default key prefix, shared by the module and the provider. */
export const DEFAULT_KEY_PREFIX = 'job-lock';

/** The default `lockedBy`: this host and process. */
export function defaultLockedBy(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * Locks in Redis (single node, Sentinel or Cluster through ioredis). A lock is the string key
 * `<keyPrefix>:{<name>}` whose value names its owner, `<lockedBy>|<epoch ms taken>|<unique id>`, with a
 * TTL of `lockAtMostFor`; its fencing counter is `<keyPrefix>:{<name>}:fence`, and a
 * once-per-occurrence job's record is the hash `<keyPrefix>:{<name>}:record` (neither has a TTL). The
 * braces keep a lock's keys in one Cluster slot. One round trip to acquire (`SET NX PX`, then the
 * fence `INCR`), one to release (compare-and-delete), both Lua scripts sent as `EVALSHA` (`EVAL` once
 * when a server lacks the script; see `redis-scripts.ts`). The client is used as it is: nothing is
 * defined on it.
 *
 * Leases of `keepAlive` runs are renewed in one script call per renewal round on a single node; on a
 * Cluster, where keys live in different slots, one call per lock, sent together.
 *
 * The client is the caller's: the provider never closes it.
 */
export class RedisLockProvider implements LockProvider {
  private readonly client: RedisClient;
  readonly keyPrefix: string;
  readonly lockedBy: string;
  /** Random per provider, so owner values stay unique even when several processes share a `lockedBy`. */
  private readonly ownerId = randomUUID().slice(0, 13);
  private acquisitions = 0;

  constructor(client: RedisClient, options: RedisLockProviderOptions = {}) {
    this.client = client;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.lockedBy = options.lockedBy ?? defaultLockedBy();
  }

  /** The Redis key of a lock name, for operators and tests. */
  lockKey(name: string): string {
    return `${this.keyPrefix}:{${name}}`;
  }

  // Not `async`: lock() and the release are every lock cycle's path, and each promise layer costs there.
  lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const key = this.lockKey(configuration.name);
    const token = this.ownerValue();
    return acquireLock(this.client, key, `${key}:fence`, token, ttlMillis(configuration.lockAtMostFor), (fence) =>
      fence === 0
        ? undefined
        : new RedisSimpleLock(this.client, key, token, configuration, fence, acquiredAt(configuration)),
    );
  }

  async lockOccurrence(configuration: LockConfiguration, occurrence: number): Promise<OccurrenceClaim> {
    const { token, args } = this.occurrenceArgs(configuration);
    const [fence, state] = await claimOccurrence(this.client, args, occurrence);
    if (fence === 0) return { refused: 'locked' };
    if (fence < 0) return { refused: 'already-ran', running: state === 'running' };
    return { lock: this.recordedLock(configuration, token, fence) };
  }

  async recoverOccurrence(configuration: LockConfiguration, occurrence: number, maxAttempts: number, grace: number): Promise<RecoveryClaim> {
    const { token, args } = this.occurrenceArgs(configuration);
    const recovering = recoverOccurrence(this.client, args, occurrence, maxAttempts, Math.ceil(grace));
    const [fence, attemptOrState, previousHolder] = await recovering;
    if (fence === 0) return { refused: 'running' };
    if (fence < 0) return { refused: 'settled', state: (attemptOrState ?? '') as JobRunState | '' };
    return { lock: this.recordedLock(configuration, token, fence), attempt: Number(attemptOrState), previousHolder: previousHolder ?? '' };
  }

  async readJobRecord(name: string): Promise<JobRecord | undefined> {
    const key = this.lockKey(name);
    const reading = this.client.multi().hgetall(`${key}:record`).exists(key).exec();
    const [[, record], [, held]] = (await reading.catch((error: unknown) => Promise.reject(redisFailure(this.client, error)))) as [
      [unknown, Record<string, string>],
      [unknown, number],
    ];
    if (!record.occurrence) return undefined;
    return {
      occurrence: new Date(Number(record.occurrence)),
      state: record.state as JobRunState,
      runBy: record.runBy,
      startedAt: new Date(Number(record.startedAt)),
      finishedAt: record.finishedAt ? new Date(Number(record.finishedAt)) : undefined,
      attempt: Number(record.attempt),
      previousHolder: record.previousHolder || undefined,
      held: held === 1,
    };
  }

  /** The keys and first arguments of the occurrence scripts, with a new owner value. */
  private occurrenceArgs(configuration: LockConfiguration): { token: string; args: OccurrenceArgs } {
    const key = this.lockKey(configuration.name);
    const token = this.ownerValue();
    return { token, args: [key, `${key}:fence`, `${key}:record`, token, ttlMillis(configuration.lockAtMostFor), this.lockedBy] };
  }

  /** A lock whose run is recorded in its job record. */
  private recordedLock(configuration: LockConfiguration, token: string, fence: number): RedisSimpleLock {
    const key = this.lockKey(configuration.name);
    const recordKey = `${key}:record`;
    return new RedisSimpleLock(this.client, key, token, configuration, fence, acquiredAt(configuration), recordKey);
  }

  /**
   * A lock's value: who took it and when (epoch ms), for operators, and a part unique to this
   * acquisition. A counter behind a random prefix costs a fraction of a UUID (or an ISO date) per
   * acquisition, which the lock cycle feels.
   */
  private ownerValue(): string {
    return `${this.lockedBy}|${Date.now()}|${this.ownerId}-${++this.acquisitions}`;
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    const locks = renewals.map(({ lock }) => lock as RedisSimpleLock);
    const ttls = renewals.map(({ ttl }) => ttlMillis(ttl));
    let outcomes: OwnerCheck[];
    if (this.client.isCluster) {
      const renewOne = (lock: RedisSimpleLock, i: number) =>
        renewLocks(this.client, [lock.key], [lock.token], [ttls[i]]);
      const replies = await Promise.all(locks.map(renewOne));
      outcomes = replies.map(([outcome]) => outcome);
    } else {
      outcomes = await renewLocks(this.client, locks.map((lock) => lock.key), locks.map((lock) => lock.token), ttls);
    }
    return outcomes.map((outcome) => (outcome === OwnerCheck.Done ? 'renewed' : notHeldReason(outcome)));
  }
}

class RedisSimpleLock extends AbstractSimpleLock {
  constructor(
    private readonly client: RedisClient,
    readonly key: string,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
    /** The job record this lock's run is recorded in, for an occurrence lock. */
    private readonly recordKey?: string,
  ) {
    super(configuration, acquiredAt);
  }

  protected release(keepFor: number, outcome: RunOutcome = 'succeeded'): Promise<void> {
    const onCheck = (check: OwnerCheck) => {
      if (check !== OwnerCheck.Done) throw new LockNotHeldError(this.configuration.name, notHeldReason(check));
    };
    // A release the store never answered may be made again, to record the run's outcome once it does.
    return releaseLock(this.client, this.key, this.recordKey, this.token, keepFor, outcome, onCheck, () => this.releaseFailed());
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const [check] = await renewLocks(this.client, [this.key], [this.token], [ttlMillis(configuration.lockAtMostFor)]);
    if (check !== OwnerCheck.Done) return undefined;
    const { client, key, token, fencingToken, recordKey } = this;
    return new RedisSimpleLock(client, key, token, configuration, fencingToken, acquiredAt(configuration), recordKey);
  }
}

/**
 * Now (monotonic ms) for a lock with `lockAtLeastFor`, the only case that reads it; 0 otherwise. A clock
 * read costs ~50–100 ns on the measuring VM, and most locks have no `lockAtLeastFor`.
 */
function acquiredAt(configuration: LockConfiguration): number {
  return configuration.lockAtLeastFor > 0 ? performance.now() : 0;
}

function notHeldReason(outcome: OwnerCheck): LockNotHeldReason {
  return outcome === OwnerCheck.Expired ? 'expired' : 'not-owner';
}
