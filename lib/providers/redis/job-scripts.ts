import {
  ACQUIRE_JOB,
  CLAIM_OCCURRENCE,
  FINISH,
  type JobKeys,
  type LockOwner,
  type OwnerCheck,
  type RedisClient,
} from './redis-scripts.js';
import { ScriptBatch } from './script-batch.js';

/**
 * The scripts of scheduled jobs' runs, each behind a typed function and batched per turn of the event loop
 * (see {@link ScriptBatch}): one client's claims, job locks and run ends that happen together go to Redis
 * together.
 */
export class JobScripts {
  private readonly claims: ScriptBatch<[number, string?]>;
  private readonly acquisitions: ScriptBatch<number>;
  private readonly finishes: ScriptBatch<OwnerCheck>;

  constructor(client: RedisClient) {
    this.claims = new ScriptBatch(CLAIM_OCCURRENCE, client);
    this.acquisitions = new ScriptBatch(ACQUIRE_JOB, client);
    this.finishes = new ScriptBatch(FINISH, client);
  }

  /** claim-occurrence.lua: `[fence]`, `[0]` held, `[-1, state]` occurrence already claimed, `[-2]` paused. */
  claimOccurrence(keys: JobKeys, { owner, ttl, lockedBy }: LockOwner, occurrence: number): Promise<[number, string?]> {
    return this.claims.call([keys.lock, keys.fence, keys.record, keys.paused], [owner, ttl, lockedBy, occurrence]);
  }

  /** acquire-job.lua: the fencing token, 0 held, -1 paused (a `manual` run ignores the pause). */
  acquireJobLock(keys: JobKeys, owner: string, ttl: number, manual: boolean): Promise<number> {
    return this.acquisitions.call([keys.lock, keys.fence, keys.paused], [owner, ttl, manual ? 1 : 0]);
  }

  /**
   * finish.lua: releases `keys.lock` if `owner` holds it (or keeps it `keepFor` ms more), records `outcome` in
   * the job record if it is this run's (`recorded`: an occurrence's run), and adds `entry` to the history.
   * Resolves to the owner check;
   * `onFailure` sees a store failure first.
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
  ): Promise<OwnerCheck> {
    const args = [owner, keepFor, outcome, entry, historyLimit, recorded ? 1 : 0];
    return this.finishes.call([keys.lock, keys.record, keys.history], args, onFailure);
  }
}
