import { AbstractSimpleLock, ttlMillis } from '../../core/abstract-simple-lock.js';
import type { LockConfiguration } from '../../core/lock-configuration.js';
import {
  LockNotHeldError,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type RunOutcome,
  type RunReport,
  type SimpleLock,
} from '../../core/lock-provider.js';
import type { JobScripts } from './job-scripts.js';
import { OwnerCheck, releaseLock, renewLocks, type JobKeys, type RedisClient } from './redis-scripts.js';

/** Where a job's run is recorded: its keys, how many history entries are kept, and this node's name. */
export interface RunRecording {
  readonly keys: JobKeys;
  readonly historyLimit: number;
  readonly lockedBy: string;
  /** Whether the job record holds this run (an occurrence's run), so that `unlock()` records its outcome too. */
  readonly inRecord: boolean;
  readonly scripts: JobScripts;
}

/** A lock in Redis: the string key `key` holding `token` until it expires. */
export class RedisSimpleLock extends AbstractSimpleLock {
  constructor(
    private readonly client: RedisClient,
    readonly key: string,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
    /** For a job's lock: where its runs are recorded. */
    private readonly recording?: RunRecording,
  ) {
    super(configuration, acquiredAt);
  }

  /** `outcome` is `undefined` for `unlock()`: a lock given back unused (or by a caller that records nothing). */
  protected release(keepFor: number, outcome?: RunOutcome, report?: RunReport): Promise<void> {
    const onCheck = (check: OwnerCheck) => {
      if (check !== OwnerCheck.Done) throw new LockNotHeldError(this.configuration.name, notHeldReason(check));
    };
    // A release the store never answered may be made again, to record the run's outcome once it does.
    const failed = () => this.releaseFailed();
    const { recording } = this;
    if (recording && report && outcome !== undefined) {
      const finishedAt = Math.round(report.startedAt + report.durationMs);
      const run = { type: 'run', ...report, finishedAt, node: recording.lockedBy, fencingToken: this.fencingToken };
      // finish.lua adds the outcome and the closing brace.
      const entry = JSON.stringify(run).slice(0, -1);
      const { keys, historyLimit, scripts, inRecord } = recording;
      const finishing = scripts.finishRun(keys, this.token, keepFor, outcome, entry, historyLimit, inRecord, failed);
      return finishing.then(onCheck);
    }
    // unlock() records no outcome: an occurrence whose lock is given back unused still reads running, as after
    // a crash, so that onCrash 'rerun' runs it.
    const recordKey = recording?.inRecord && outcome !== undefined ? recording.keys.record : undefined;
    return releaseLock(this.client, this.key, recordKey, this.token, keepFor, outcome ?? '', onCheck, failed);
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const [check] = await renewLocks(this.client, [this.key], [this.token], [ttlMillis(configuration.lockAtMostFor)]);
    if (check !== OwnerCheck.Done) return undefined;
    const { client, key, token, fencingToken, recording } = this;
    return new RedisSimpleLock(client, key, token, configuration, fencingToken, acquiredAt(configuration), recording);
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
  client: RedisClient,
  renewals: readonly LeaseRenewal[],
): Promise<LeaseRenewalOutcome[]> {
  const locks = renewals.map(({ lock }) => lock as RedisSimpleLock);
  const ttls = renewals.map(({ ttl }) => ttlMillis(ttl));
  let outcomes: OwnerCheck[];
  if (client.isCluster) {
    const renewOne = (lock: RedisSimpleLock, i: number) => renewLocks(client, [lock.key], [lock.token], [ttls[i]]);
    const replies = await Promise.all(locks.map(renewOne));
    outcomes = replies.map(([outcome]) => outcome);
  } else {
    outcomes = await renewLocks(
      client,
      locks.map((lock) => lock.key),
      locks.map((lock) => lock.token),
      ttls,
    );
  }
  return outcomes.map((outcome) => (outcome === OwnerCheck.Done ? 'renewed' : notHeldReason(outcome)));
}

function notHeldReason(outcome: OwnerCheck): LockNotHeldReason {
  return outcome === OwnerCheck.Expired ? 'expired' : 'not-owner';
}
