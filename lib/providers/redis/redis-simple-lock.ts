import { AbstractSimpleLock, ttlMillis } from '../../core/provider/abstract-simple-lock.js';
import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import {
  LockNotHeldError,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type RunOutcome,
  type RunReport,
  type SimpleLock,
} from '../../core/provider/lock-provider.js';
import { runEntry, storedJson } from '../../operators/stored-records.js';
import type { OwnerCheckCode } from '../owner-checks.js';
import type { JobKeys } from './redis-keys.js';
import { ownerOutcome, type RedisScripts } from './redis-scripts.js';

/** What a {@link RedisSimpleLock} is made of. */
export interface RedisSimpleLockOptions {
  readonly scripts: RedisScripts;
  /** The lock's key, holding `token` until it expires. */
  readonly key: string;
  readonly token: string;
  readonly configuration: LockConfiguration;
  readonly fencingToken: number;
  /** When Redis confirmed the lock (monotonic ms; see {@link acquiredAt}). */
  readonly acquiredAt: number;
}

/** A lock in Redis: the string key `key` holding `token` until it expires; released with `release.lua`. */
export class RedisSimpleLock extends AbstractSimpleLock {
  readonly key: string;
  readonly token: string;
  readonly fencingToken: number;
  protected readonly scripts: RedisScripts;

  constructor(options: RedisSimpleLockOptions) {
    super(options.configuration, options.acquiredAt);
    ({ key: this.key, token: this.token, fencingToken: this.fencingToken, scripts: this.scripts } = options);
  }

  /** `outcome` is `undefined` for `unlock()`: a lock given back unused (or by a caller that records nothing). */
  protected release(keepFor: number, outcome?: RunOutcome): Promise<void> {
    return this.releaseRecording(keepFor, outcome, undefined);
  }

  /** release.lua; release-recording.lua with a `recordKey`, which also records `outcome` in that job record. */
  protected releaseRecording(keepFor: number, outcome: RunOutcome | undefined, recordKey: string | undefined) {
    // A release the store never answered may be made again, to record the run's outcome once it does.
    const failed = () => this.releaseFailed();
    return this.scripts.release(this.key, recordKey, this.token, keepFor, outcome ?? '', this.ownerChecked, failed);
  }

  /** Throws {@link LockNotHeldError} unless the owner check of a release passed. */
  protected readonly ownerChecked = (check: OwnerCheckCode): void => {
    const outcome = ownerOutcome(check, 'released');
    if (outcome !== 'released') throw new LockNotHeldError(this.configuration.name, outcome);
  };

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const [check] = await this.scripts.renew([this.key], [this.token], [ttlMillis(configuration.lockAtMostFor)]);
    return ownerOutcome(check, 'renewed') === 'renewed' ? this.successor(configuration) : undefined;
  }

  /** The lock that follows this one after an `extend()`. */
  protected successor(configuration: LockConfiguration): RedisSimpleLock {
    const { scripts, key, token, fencingToken } = this;
    return new RedisSimpleLock({
      scripts,
      key,
      token,
      fencingToken,
      configuration,
      acquiredAt: acquiredAt(configuration),
    });
  }
}

/** Where a job's run is recorded: its keys, how many history entries are kept, and this node's name. */
export interface RunRecording {
  readonly keys: JobKeys;
  readonly historyLimit: number;
  readonly node: string;
  /** Whether the job record holds this run (an occurrence's run), so that `unlock()` records its outcome too. */
  readonly inRecord: boolean;
}

/**
 * The lock of a scheduled job's run: its release (`finish.lua`) also adds the run to the job's history, and
 * records an occurrence's outcome in its job record.
 */
export class RedisJobLock extends RedisSimpleLock {
  constructor(
    options: RedisSimpleLockOptions,
    private readonly recording: RunRecording,
  ) {
    super(options);
  }

  protected override release(keepFor: number, outcome?: RunOutcome, report?: RunReport): Promise<void> {
    const { keys, historyLimit, node, inRecord } = this.recording;
    if (!report || outcome === undefined) {
      // unlock() records no outcome: an occurrence whose lock is given back unused still reads running, as after
      // a crash, so that onCrash 'rerun' runs it.
      return this.releaseRecording(keepFor, outcome, inRecord && outcome !== undefined ? keys.record : undefined);
    }
    // finish.lua adds the outcome and the closing brace.
    const entry = storedJson(runEntry(report, node, this.fencingToken)).slice(0, -1);
    const failed = () => this.releaseFailed();
    const finishing = this.scripts.finishRun(keys, this.token, keepFor, outcome, entry, historyLimit, inRecord, failed);
    return finishing.then(this.ownerChecked);
  }

  protected override successor(configuration: LockConfiguration): RedisJobLock {
    const { scripts, key, token, fencingToken } = this;
    const options = { scripts, key, token, fencingToken, configuration, acquiredAt: acquiredAt(configuration) };
    return new RedisJobLock(options, this.recording);
  }
}

/**
 * Now (monotonic ms) for a lock with `lockAtLeastFor`, the only case that reads it; 0 otherwise. A clock
 * read costs ~50–100 ns on the measuring VM, and most locks have no `lockAtLeastFor`.
 */
export function acquiredAt(configuration: LockConfiguration): number {
  return configuration.lockAtLeastFor > 0 ? performance.now() : 0;
}

/**
 * Renews the leases of `renewals`' locks (each a {@link RedisSimpleLock}) in one script call on a single node;
 * on a Cluster, where keys live in different slots, one call per lock, sent together.
 */
export async function renewLeasesOf(
  scripts: RedisScripts,
  renewals: readonly LeaseRenewal[],
): Promise<LeaseRenewalOutcome[]> {
  const locks = renewals.map(({ lock }) => lock as RedisSimpleLock);
  const ttls = renewals.map(({ ttl }) => ttlMillis(ttl));
  let outcomes: OwnerCheckCode[];
  if (scripts.client.isCluster) {
    const renewOne = (lock: RedisSimpleLock, i: number) => scripts.renew([lock.key], [lock.token], [ttls[i]]);
    const replies = await Promise.all(locks.map(renewOne));
    outcomes = replies.map(([outcome]) => outcome);
  } else {
    outcomes = await scripts.renew(
      locks.map((lock) => lock.key),
      locks.map((lock) => lock.token),
      ttls,
    );
  }
  return outcomes.map((outcome) => ownerOutcome(outcome, 'renewed'));
}
