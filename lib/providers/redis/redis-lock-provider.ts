import { ttlMillis } from '../../core/provider/abstract-simple-lock.js';
import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import { assertCallerOwner, OwnerValues } from '../../core/provider/owner-value.js';
import type {
  JobRecord,
  JobRunState,
  LeaseRenewal,
  LeaseRenewalOutcome,
  OccurrenceClaim,
  RecoveryClaim,
  SimpleLock,
} from '../../core/provider/lock-provider.js';
import type {
  StartupCheckingLockProvider,
  JobRecordReader,
  LeaseRenewingLockProvider,
  OwnerAddressedLockProvider,
  OwnerRelease,
  OwnerRenewal,
  RecoveringLockProvider,
  RetryingLockProvider,
} from '../../core/provider/provider-abilities.js';
import type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../../operators/operator-abilities.js';
import { asRedisClient, type IoredisForkClient, type RedisClient } from './redis-client.js';
import { fencedValue } from './fenced-value.js';
import { redisFailure } from './redis-failures.js';
import { RedisKeys, type JobKeys } from './redis-keys.js';
import { RedisOperatorProvider } from './redis-operator-provider.js';
import { claimRefusal, ownerOutcome, RedisScripts, type LockOwner } from './redis-scripts.js';
import { acquiredAt, RedisJobLock, RedisSimpleLock, renewLeasesOf } from './redis-simple-lock.js';
import { checkRedisProvider } from './redis-startup-check.js';
import { ReplicaAck } from './replica-ack.js';
import { redisProviderSettings, type RedisLockProviderOptions } from './redis-options.js';

export { DEFAULT_KEY_PREFIX, type RedisLockProviderOptions } from './redis-options.js';

/**
 * Locks in Redis (single node, Sentinel or Cluster through ioredis). A lock is the string key
 * `<keyPrefix>:{<name>}` whose value names its owner (an owner value, `owner-value.ts`), with a TTL of
 * `lockAtMostFor`; a job's fence key (its last fencing token: the server's clock in µs, `fence.include.lua`) and a
 * once-per-occurrence job's record sit beside it, in its Cluster slot (the layout: `redis-keys.ts`). A plain lock
 * is its key alone, its token in its value (`fenced-value.ts`), and a released one leaves no key behind. One round
 * trip to acquire (the token drawn with the lock), one to release (compare-and-delete), both Lua scripts sent as
 * `EVALSHA` (`EVAL` once when a server lacks the script; see `lua-script.ts`). The client is used as it is: nothing
 * is defined on it.
 *
 * Leases of `keepAlive` runs are renewed in one script call per renewal round on a single node; on a
 * Cluster, where keys live in different slots, one call per lock, sent together.
 *
 * The client is the caller's: the provider never closes it.
 */
export class RedisLockProvider
  implements
    LeaseRenewingLockProvider,
    RecoveringLockProvider,
    RetryingLockProvider,
    OwnerAddressedLockProvider,
    JobRecordReader,
    JobLockProvider,
    OperatorLockProvider,
    StartupCheckingLockProvider
{
  readonly keyPrefix: string;
  readonly node: string;
  readonly historyLimit: number;
  /** @internal Every key of the store, under `keyPrefix`. */
  readonly keys: RedisKeys;
  /** @internal The scripts, on the caller's client. */
  readonly scripts: RedisScripts;
  private readonly owners = new OwnerValues();
  private operators: RedisOperatorProvider | undefined;
  /** With `minReplicasToAck`: confirms each lock taken on the replicas. */
  private readonly replicaAck: ReplicaAck | undefined;

  constructor(client: RedisClient | IoredisForkClient, options?: RedisLockProviderOptions) {
    const { replicaAck, ...settings } = redisProviderSettings(options);
    ({ keyPrefix: this.keyPrefix, node: this.node, historyLimit: this.historyLimit } = settings);
    this.keys = new RedisKeys(this.keyPrefix);
    this.scripts = new RedisScripts(asRedisClient(client));
    if (replicaAck) {
      this.replicaAck = new ReplicaAck(this.scripts.client, replicaAck.minReplicasToAck, replicaAck.replicaAckTimeout);
    }
  }

  /** Checks once that Redis accepts the client's credentials, certificate and commands: {@link checkRedisProvider}. */
  checkProvider(): Promise<void> {
    const replicaAck = this.replicaAck ? [['wait', '0', '0']] : [];
    return checkRedisProvider(this.scripts, this.keys.lock('startup-check'), replicaAck);
  }

  /** The Redis key of a lock name, for operators and tests. */
  lockKey(name: string): string {
    return this.keys.lock(name);
  }

  /** The operator console's records, beside the locks under the same `keyPrefix`. */
  operatorProvider(): RedisOperatorProvider {
    return (this.operators ??= new RedisOperatorProvider(this.scripts, this.keys, this.historyLimit));
  }

  async lockJob(configuration: LockConfiguration, manual: boolean): Promise<JobLockClaim> {
    const keys = this.keys.job(configuration.name);
    const token = this.ownerValue();
    const fence = await this.scripts.acquireJobLock(keys, token, ttlMillis(configuration.lockAtMostFor), manual);
    const refused = claimRefusal(fence);
    if (refused === 'locked' || refused === 'paused') return { refused };
    return { lock: await this.replicated(this.jobLock(configuration, keys, token, fence, false)) };
  }

  // Not `async`: lock() and the release are every lock cycle's path, and each promise layer costs there.
  lock(configuration: LockConfiguration, options?: { owner?: string }): Promise<SimpleLock | undefined> {
    const key = this.keys.lock(configuration.name);
    const token = this.owners.forLock(this.node, options);
    const { scripts } = this;
    const locking = scripts.acquire(
      key,
      this.keys.fence(key),
      token,
      ttlMillis(configuration.lockAtMostFor),
      (fence) =>
        claimRefusal(fence) !== 'taken'
          ? undefined
          : new RedisSimpleLock({
              scripts,
              key,
              token: fencedValue(fence, token),
              configuration,
              fencingToken: fence,
              acquiredAt: acquiredAt(configuration),
            }),
    );
    return this.replicaAck ? locking.then((lock) => lock && this.replicated(lock)) : locking;
  }

  // Not `async`, like lock(): a tick's claim waits for Redis with the node's whole burst of ticks, and each
  // promise layer it holds meanwhile is memory per job.
  lockOccurrence(configuration: LockConfiguration, occurrence: Date): Promise<OccurrenceClaim> {
    const keys = this.keys.job(configuration.name);
    const owner = this.newOwner(configuration);
    return this.scripts
      .claimOccurrence(keys, owner, occurrence.getTime())
      .then(([fence, state]): OccurrenceClaim | Promise<OccurrenceClaim> => {
        const refused = claimRefusal(fence);
        if (refused === 'already-ran') return { refused, running: state === 'running' };
        if (refused !== 'taken') return { refused };
        const lock = this.replicated(this.jobLock(configuration, keys, owner.owner, fence, true));
        return lock instanceof RedisJobLock ? { lock } : lock.then((confirmed) => ({ lock: confirmed }));
      });
  }

  recoverOccurrence(configuration: LockConfiguration, occurrence: Date, maxAttempts: number, grace: number) {
    return this.takeOver(configuration, occurrence, maxAttempts, grace, 'recover');
  }

  retryOccurrence(configuration: LockConfiguration, occurrence: Date, maxAttempts: number, backoff: number) {
    return this.takeOver(configuration, occurrence, maxAttempts, backoff, 'retry');
  }

  /** recover.lua for a recovery or a retry; `wait` is the recovery's grace or the retry's first backoff (ms). */
  private async takeOver(
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    wait: number,
    kind: 'recover' | 'retry',
  ): Promise<RecoveryClaim> {
    const keys = this.keys.job(configuration.name);
    const owner = this.newOwner(configuration);
    const at = occurrence.getTime();
    const takingOver = this.scripts.recover(keys, owner, at, maxAttempts, Math.ceil(wait), this.historyLimit, kind);
    const [fence, attemptOrState, previousNode] = await takingOver;
    const refused = claimRefusal(fence);
    if (refused === 'locked') return { refused: 'running' };
    if (refused === 'paused') return { refused };
    if (refused === 'already-ran') return { refused: 'settled', state: (attemptOrState ?? '') as JobRunState | '' };
    return {
      lock: await this.replicated(this.jobLock(configuration, keys, owner.owner, fence, true)),
      attempt: Number(attemptOrState),
      previousNode: previousNode ?? '',
    };
  }

  async readJobRecord(name: string): Promise<JobRecord | undefined> {
    const { client } = this.scripts;
    const keys = this.keys.job(name);
    const reading = client.multi().hgetall(keys.record).exists(keys.lock).exec();
    const [[, record], [, held]] = (await reading.catch((error: unknown) =>
      Promise.reject(redisFailure(client, error)),
    )) as [[unknown, Record<string, string>], [unknown, number]];
    if (!record.occurrence) return undefined;
    return {
      occurrence: new Date(Number(record.occurrence)),
      state: record.state as JobRunState,
      node: record.node,
      startedAt: new Date(Number(record.startedAt)),
      finishedAt: record.finishedAt ? new Date(Number(record.finishedAt)) : null,
      attempt: Number(record.attempt),
      previousNode: record.previousNode || null,
      held: held === 1,
    };
  }

  /** `lock`, once `minReplicasToAck` replicas have it (at once without the option). */
  private replicated<L extends RedisSimpleLock>(lock: L): Promise<L> | L {
    return this.replicaAck ? this.replicaAck.confirm(lock, lock.configuration.name) : lock;
  }

  /** A new owner value for `configuration`'s lock, with its first TTL. */
  private newOwner(configuration: LockConfiguration): LockOwner {
    return { owner: this.ownerValue(), ttl: ttlMillis(configuration.lockAtMostFor), node: this.node };
  }

  /** The lock of a job's run, whose release records the run (in the job record too, for `inRecord`). */
  private jobLock(configuration: LockConfiguration, keys: JobKeys, token: string, fence: number, inRecord: boolean) {
    const { scripts, historyLimit, node } = this;
    const options = { scripts, key: keys.lock, token, configuration, fencingToken: fence };
    return new RedisJobLock(
      { ...options, acquiredAt: acquiredAt(configuration) },
      { keys, historyLimit, node, inRecord },
    );
  }

  /** A lock's value: who took it and when, for operators, and a part unique to this acquisition. */
  private ownerValue(): string {
    return this.owners.next(this.node);
  }

  renewByOwner(name: string, owner: string, ttl: number): Promise<OwnerRenewal> {
    assertCallerOwner(owner);
    const renewing = this.scripts.renewByOwner(this.keys.lock(name), owner, ttlMillis(ttl));
    return renewing.then((check) => ownerOutcome(check, 'renewed'));
  }

  releaseByOwner(name: string, owner: string): Promise<OwnerRelease> {
    assertCallerOwner(owner);
    const releasing = this.scripts.releaseByOwner(this.keys.lock(name), owner);
    return releasing.then((check) => ownerOutcome(check, 'released'));
  }

  renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    return renewLeasesOf(this.scripts, renewals);
  }
}
