import type { LockNotHeldReason } from '../../core/provider/lock-provider.js';
import { claimRefusalOf, type ClaimRefusal } from '../claim-refusals.js';
import { ownerCheckOf, type OwnerCheckCode } from '../owner-checks.js';
import type { RedisClient } from './redis-client.js';
import type { JobKeys, RedisKeys } from './redis-keys.js';
import { LuaScript } from './lua-script.js';
import { ScriptBatch } from './script-batch.js';

/** What a claim script's reply `code` says, decoded here alone: a fence (positive) is `taken`, else a refusal. */
export function claimRefusal(code: number): 'taken' | ClaimRefusal {
  return code > 0 ? 'taken' : claimRefusalOf(code);
}

/**
 * What the owner check `code` of a release, finish or renew script says, decoded here alone: `done` when the
 * caller held the lock (so the script released or renewed it), else why not.
 */
export function ownerOutcome<D extends string>(code: OwnerCheckCode, done: D): D | LockNotHeldReason {
  const check = ownerCheckOf(code);
  return check === 'held' ? done : check;
}

/** What read-locks.lua reads of one job: lock value, its PTTL, fence, pause, newest history entries. */
export type LockRead = [string | null, number, string | null, string | null, string[]];

/** What read-cluster.lua reads: the nodes' and the catalogue's hashes (field, value, …), and each job's lock. */
export type ClusterRead = [string[], string[], LockRead[]];

/** A new owner of a job's lock: its owner value, TTL (ms) and node. */
export interface LockOwner {
  readonly owner: string;
  readonly ttl: number;
  readonly node: string;
}

const ACQUIRE = new LuaScript('acquire.lua');
const RELEASE = new LuaScript('release.lua');
const RELEASE_RECORDING = new LuaScript('release-recording.lua');
const RENEW = new LuaScript('renew.lua');
const RECOVER = new LuaScript('recover.lua');
const RENEW_OWNER = new LuaScript('renew-owner.lua');
const RELEASE_OWNER = new LuaScript('release-owner.lua');
const FORCE_UNLOCK = new LuaScript('force-unlock.lua');
const CLAIM_OCCURRENCE = new LuaScript('claim-occurrence.lua');
const ACQUIRE_JOB = new LuaScript('acquire-job.lua');
const FINISH = new LuaScript('finish.lua');
const CHECK_ACL = new LuaScript('check-acl.lua');
const REQUEST_TRIGGER = new LuaScript('request-trigger.lua');
const REMOVE_TRIGGER = new LuaScript('remove-trigger.lua');
const READ_LOCKS = new LuaScript('read-locks.lua');
const READ_CLUSTER = new LuaScript('read-cluster.lua');
const BID_HEALTH_TURN = new LuaScript('bid-health-turn.lua');
const ADD_SKIPS = new LuaScript('add-skips.lua');

/**
 * The `lua/` scripts of one client, each called one way: a typed method here. The scripts of scheduled jobs'
 * runs (claims, job locks, run ends) are batched per turn of the event loop (see {@link ScriptBatch}): those
 * that happen together go to Redis together.
 */
export class RedisScripts {
  private readonly claims: ScriptBatch<[number, string?]>;
  private readonly acquisitions: ScriptBatch<number>;
  private readonly finishes: ScriptBatch<OwnerCheckCode>;

  constructor(readonly client: RedisClient) {
    this.claims = new ScriptBatch(CLAIM_OCCURRENCE, client);
    this.acquisitions = new ScriptBatch(ACQUIRE_JOB, client);
    this.finishes = new ScriptBatch(FINISH, client);
  }

  /**
   * acquire.lua: takes `lockKey` for `owner` for `ttl` ms if it is free, and draws the next fencing token (the
   * server's clock in µs, past the last token at `fenceKey` if one is on record), written before the owner value
   * (`fencedValue`). `onFence` gets the token, or 0 when the lock is held, in the same promise step.
   */
  acquire<T>(lockKey: string, fenceKey: string, owner: string, ttl: number, onFence: (fence: number) => T): Promise<T> {
    return ACQUIRE.run(this.client, 2, [lockKey, fenceKey, owner, ttl], onFence);
  }

  /**
   * release.lua: deletes `lockKey` if `owner` holds it, or keeps it `keepFor` ms more; with a `recordKey`,
   * release-recording.lua, which also records the run's `outcome` there. `onCheck` gets the owner check (see
   * {@link ownerOutcome}), and `onFailure` a store failure, in the same promise step.
   */
  release<T>(
    lockKey: string,
    recordKey: string | undefined,
    owner: string,
    keepFor: number,
    outcome: string,
    onCheck: (check: OwnerCheckCode) => T,
    onFailure: (failure: unknown) => void,
  ): Promise<T> {
    if (recordKey !== undefined) {
      const args = [lockKey, recordKey, owner, keepFor, outcome];
      return RELEASE_RECORDING.run(this.client, 2, args, onCheck, onFailure);
    }
    // Without lockAtLeastFor (the common release) keepFor is left out: Redis spends about as much on building one
    // more script argument as on the rest of the release's logic (see bench/README.md, Redis instructions).
    const args = keepFor === 0 ? [lockKey, owner] : [lockKey, owner, keepFor];
    return RELEASE.run(this.client, 1, args, onCheck, onFailure);
  }

  /**
   * renew.lua: sets each of `lockKeys` to expire `ttls[i]` ms from now if `owners[i]` still holds it; one
   * owner check per key. On a Cluster, all keys must hash to one slot (one lock per call there).
   */
  renew(lockKeys: readonly string[], owners: readonly string[], ttls: readonly number[]): Promise<OwnerCheckCode[]> {
    const ownersAndTtls = owners.flatMap((owner, i) => [owner, ttls[i]]);
    return RENEW.call(this.client, lockKeys.length, [...lockKeys, ...ownersAndTtls]);
  }

  /** renew-owner.lua: sets `lockKey` to expire `ttl` ms from now if the caller's `owner` holds it. */
  renewByOwner(lockKey: string, owner: string, ttl: number): Promise<OwnerCheckCode> {
    return RENEW_OWNER.call(this.client, 1, [lockKey, owner, ttl]);
  }

  /** release-owner.lua: deletes `lockKey` if the caller's `owner` holds it. */
  releaseByOwner(lockKey: string, owner: string): Promise<OwnerCheckCode> {
    return RELEASE_OWNER.call(this.client, 1, [lockKey, owner]);
  }

  /**
   * recover.lua: `[fence, attempt, previousNode]`, or a refusal (see {@link claimRefusal}): locked (held, running
   * or within `grace` ms: a recovery's grace from a watcher first finding the lock gone, a retry's backoff),
   * `[already-ran, state]` (nothing to take over), paused. A recovery puts the crashed attempt into the history.
   */
  recover(
    keys: JobKeys,
    { owner, ttl, node }: LockOwner,
    occurrence: number,
    maxAttempts: number,
    grace: number,
    historyLimit: number,
    kind: 'recover' | 'retry',
  ): Promise<[number, (number | string)?, string?]> {
    const { lock, fence, record, paused, history } = keys;
    const args = [owner, ttl, node, occurrence, maxAttempts, grace, historyLimit, kind];
    return RECOVER.call(this.client, 5, [lock, fence, record, paused, history, ...args]);
  }

  /** force-unlock.lua: the former holder's owner value, or `null` when the lock was free. */
  forceUnlock(keys: JobKeys, entry: string, historyLimit: number, marker: string): Promise<string | null> {
    return FORCE_UNLOCK.call(this.client, 2, [keys.lock, keys.history, entry, historyLimit, marker]);
  }

  /** request-trigger.lua: queues `request` (JSON) for `jobName`; resolves to the pending request instead, if any. */
  queueTrigger(triggersKey: string, jobName: string, request: string): Promise<string | null> {
    return REQUEST_TRIGGER.call(this.client, 1, [triggersKey, jobName, request]);
  }

  /**
   * remove-trigger.lua: removes trigger `id` of `jobName` if it is still pending; `true` when it did (a node takes
   * it, or its operator withdraws it: the first one has it).
   */
  removeTrigger(triggersKey: string, jobName: string, id: string): Promise<boolean> {
    return REMOVE_TRIGGER.run(this.client, 1, [triggersKey, jobName, id], (removed: number) => removed === 1);
  }

  /**
   * bid-health-turn.lua: takes or keeps the health turn for `node` for `lease` ms, leaving `unhealthy` (JSON) while
   * it held the turn already. Resolves to whether it took the turn (1) or kept it (0) and the unhealthy jobs the
   * turn keeps (JSON), or to `null` while another node holds it.
   */
  bidHealthTurn(keys: RedisKeys, node: string, lease: number, unhealthy: string): Promise<[0 | 1, string] | null> {
    const keysThenArguments = [keys.healthTurn, keys.unhealthyJobs, node, lease, unhealthy];
    return BID_HEALTH_TURN.run(this.client, 2, keysThenArguments, (turn: [0 | 1, string] | null) => turn);
  }

  /** add-skips.lua: adds each count of `fieldsAndCounts` (`<lock>|<reason>`, count, …) to the hash `skipsKey`. */
  addSkips(skipsKey: string, fieldsAndCounts: readonly (string | number)[]): Promise<number> {
    return ADD_SKIPS.call(this.client, 1, [skipsKey, ...fieldsAndCounts]);
  }

  /**
   * read-locks.lua: per job of `jobs`, its lock's value and PTTL, its fence, its pause and its newest `limit`
   * history entries, in one call (the jobs' keys must share a Cluster slot).
   */
  readLocks(jobs: readonly JobKeys[], limit: number): Promise<LockRead[]> {
    const keys = jobKeysOf(jobs);
    return READ_LOCKS.call<LockRead[]>(this.client, keys.length, [...keys, limit]);
  }

  /**
   * read-cluster.lua (not on a Cluster: the keys have several slots): the nodes' and the catalogue's hashes, and
   * per job of `jobs` what {@link readLocks} reads, in one call.
   */
  readCluster(keys: RedisKeys, jobs: readonly JobKeys[], limit: number): Promise<ClusterRead> {
    const allKeys = [keys.nodes, keys.catalogue, ...jobKeysOf(jobs)];
    return READ_CLUSTER.call<ClusterRead>(this.client, allKeys.length, [...allKeys, limit]);
  }

  /**
   * check-acl.lua: which of the commands in `args` (each its length, then its name and arguments) the client's
   * ACL refuses, without running any of them.
   */
  checkAcl(args: readonly (string | number)[]): Promise<string[] | number> {
    return CHECK_ACL.call(this.client, 0, args);
  }

  /** claim-occurrence.lua: `[fence]`, or a refusal (see {@link claimRefusal}), `[already-ran, state]` with a state. */
  claimOccurrence(keys: JobKeys, { owner, ttl, node }: LockOwner, occurrence: number): Promise<[number, string?]> {
    return this.claims.call([keys.lock, keys.fence, keys.record, keys.paused], [owner, ttl, node, occurrence]);
  }

  /** acquire-job.lua: the fencing token, or a refusal (see {@link claimRefusal}; a `manual` run ignores a pause). */
  acquireJobLock(keys: JobKeys, owner: string, ttl: number, manual: boolean): Promise<number> {
    return this.acquisitions.call([keys.lock, keys.fence, keys.paused], [owner, ttl, manual ? 1 : 0]);
  }

  /**
   * finish.lua: releases `keys.lock` if `owner` holds it (or keeps it `keepFor` ms more), records `outcome` in
   * the job record if it is this run's (`recorded`: an occurrence's run), and adds `entry` to the history.
   * Resolves to the owner check; `onFailure` sees a store failure first.
   */
  finishRun(
    keys: JobKeys,
    owner: string,
    keepFor: number,
    outcome: string,
    entry: string,
    historyLimit: number,
    recorded: boolean,
    onFailure: (failure: unknown) => void,
  ): Promise<OwnerCheckCode> {
    const args = [owner, keepFor, outcome, entry, historyLimit, recorded ? 1 : 0];
    return this.finishes.call([keys.lock, keys.record, keys.history], args, onFailure);
  }
}

/** request-trigger.lua: queues `request` (JSON) for `jobName`; resolves to the pending request instead, if any. */
export function queueTrigger(client: RedisClient, triggersKey: string, jobName: string, request: string) {
  return REQUEST_TRIGGER.call<string | null>(client, 1, [triggersKey, jobName, request]);
}

/**
 * remove-trigger.lua: removes trigger `id` of `jobName` if it is still pending; `true` when it did (a node takes
 * it, or its operator withdraws it: the first one has it).
 */
export async function removeTrigger(client: RedisClient, triggersKey: string, jobName: string, id: string) {
  return (await REMOVE_TRIGGER.call<number>(client, 1, [triggersKey, jobName, id])) === 1;
}

/** The keys read-locks.lua and read-cluster.lua read of each of `jobs`, four per job. */
function jobKeysOf(jobs: readonly JobKeys[]): string[] {
  return jobs.flatMap((job) => [job.lock, job.fence, job.paused, job.history]);
}
