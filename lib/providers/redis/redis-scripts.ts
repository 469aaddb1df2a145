import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts.generated.js';
import { redisFailure, replyCode, type ScriptCommands } from './redis-failures.js';

/** A Redis client the provider can use: a single node (also behind Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Owner-check outcome of the release and extend scripts. */
export const enum OwnerCheck {
  Done = 1,
  Expired = 0,
  NotOwner = -1,
}

/** The keys of one job: its lock, fencing counter, job record, pause marker and run history (one Cluster slot). */
export interface JobKeys {
  readonly lock: string;
  readonly fence: string;
  readonly record: string;
  readonly paused: string;
  readonly history: string;
}

/** A new owner of a job's lock: its owner value, TTL (ms) and node. */
export interface LockOwner {
  readonly owner: string;
  readonly ttl: number;
  readonly lockedBy: string;
}

export type ScriptArgument = string | number;

/**
 * One of the `lua/` scripts, called as `EVALSHA` with its SHA1 computed here once. When the server answers
 * NOSCRIPT (it restarted, a replica was promoted, someone ran `SCRIPT FLUSH`, a Cluster node never saw the
 * script), the same call is sent once as `EVAL`, which runs the script and caches it on that server. NOSCRIPT
 * means the script did not run, so the resend cannot apply it twice.
 *
 * Called through ioredis's plain `evalsha`, not `defineCommand`: its script wrapper (a command subclass and a
 * `.catch` layer per call) cost ~0.4 µs per call, which a lock cycle at c=64 feels.
 */
export class LuaScript {
  private readonly source: string;
  private readonly sha: string;
  /** The commands the script runs, named when Redis refuses one of them to the client's user (ACL). */
  private readonly commands: ScriptCommands;

  constructor(file: keyof typeof LUA_SCRIPTS) {
    // The script as `lua/<file>` reads, its includes in place: embedded at build time (scripts/embed-assets.mjs),
    // so loading the provider reads no file, from the CommonJS build, the ESM entries or a bundle alike.
    this.source = LUA_SCRIPTS[file];
    this.sha = createHash('sha1').update(this.source).digest('hex');
    const called = [...this.source.matchAll(/redis\.call\('(\w+)'/g)].map(([, command]) => command.toUpperCase());
    this.commands = { file, commands: [...new Set(called)] };
  }

  /**
   * Runs the script with `numberOfKeys` keys first in `keysThenArguments`, and hands its reply to `onReply`.
   * The reply, the NOSCRIPT fallback and the translation of a failure into what it says about Redis
   * ({@link redisFailure}) share one promise step, so a call adds no promise layer of its own. `onFailure`
   * sees that translated failure before the returned promise rejects with it.
   */
  run<Reply, T>(
    client: RedisClient,
    numberOfKeys: number,
    keysThenArguments: readonly ScriptArgument[],
    onReply: (reply: Reply) => T,
    onFailure?: (failure: unknown) => void,
  ): Promise<T> {
    // Typed as one client: the union of Redis's and Cluster's overloaded `evalsha` is not callable in TS.
    const redis = client as Redis;
    const fail = (error: unknown): never => {
      const failure = redisFailure(client, error, this.commands);
      onFailure?.(failure);
      throw failure;
    };
    const sent = redis.evalsha(this.sha, numberOfKeys, ...keysThenArguments) as Promise<Reply>;
    return sent.then(onReply, (error: unknown) => {
      if (!isNoScript(error)) return fail(error);
      return (redis.eval(this.source, numberOfKeys, ...keysThenArguments) as Promise<Reply>).then(onReply, fail);
    });
  }

  /** {@link run} for callers that take the reply as it is. */
  call<Reply>(client: RedisClient, numberOfKeys: number, keysThenArguments: readonly ScriptArgument[]): Promise<Reply> {
    return this.run(client, numberOfKeys, keysThenArguments, same<Reply>);
  }
}

function isNoScript(error: unknown): boolean {
  return replyCode(error) === 'NOSCRIPT';
}

function same<T>(reply: T): T {
  return reply;
}

const ACQUIRE = new LuaScript('acquire.lua');
/** Scripts that take one or more jobs at once: see `job-scripts.ts`. */
export const CLAIM_OCCURRENCE = new LuaScript('claim-occurrence.lua');
const RELEASE = new LuaScript('release.lua');
const RENEW = new LuaScript('renew.lua');
const RECOVER = new LuaScript('recover.lua');
export const ACQUIRE_JOB = new LuaScript('acquire-job.lua');
export const FINISH = new LuaScript('finish.lua');
const FORCE_UNLOCK = new LuaScript('force-unlock.lua');
const REQUEST_TRIGGER = new LuaScript('request-trigger.lua');
const REMOVE_TRIGGER = new LuaScript('remove-trigger.lua');

/**
 * acquire.lua: takes `lockKey` for `owner` for `ttl` ms if it is free, and draws the next fencing token from
 * `fenceKey`. `onFence` gets the token, or 0 when the lock is held, in the same promise step.
 */
export function acquireLock<T>(
  client: RedisClient,
  lockKey: string,
  fenceKey: string,
  owner: string,
  ttl: number,
  onFence: (fence: number) => T,
): Promise<T> {
  return ACQUIRE.run(client, 2, [lockKey, fenceKey, owner, ttl], onFence);
}

/**
 * release.lua: deletes `lockKey` if `owner` holds it, or keeps it `keepFor` ms more; with a `recordKey`, also
 * records the run's `outcome` there. `onCheck` gets the owner check, and `onFailure` a store failure, in the
 * same promise step.
 */
export function releaseLock<T>(
  client: RedisClient,
  lockKey: string,
  recordKey: string | undefined,
  owner: string,
  keepFor: number,
  outcome: string,
  onCheck: (check: OwnerCheck) => T,
  onFailure: (failure: unknown) => void,
): Promise<T> {
  if (recordKey !== undefined) {
    return RELEASE.run(client, 2, [lockKey, recordKey, owner, keepFor, outcome], onCheck, onFailure);
  }
  // Without lockAtLeastFor (the common release) keepFor is left out: Redis spends about as much on building one
  // more script argument as on the rest of the release's logic (see bench/README.md, Redis instructions).
  return RELEASE.run(client, 1, keepFor === 0 ? [lockKey, owner] : [lockKey, owner, keepFor], onCheck, onFailure);
}

/**
 * renew.lua: sets each of `lockKeys` to expire `ttls[i]` ms from now if `owners[i]` still holds it; one
 * owner check per key. On a Cluster, all keys must hash to one slot (one lock per call there).
 */
export function renewLocks(
  client: RedisClient,
  lockKeys: readonly string[],
  owners: readonly string[],
  ttls: readonly number[],
): Promise<OwnerCheck[]> {
  const ownersAndTtls = owners.flatMap((owner, i) => [owner, ttls[i]]);
  return RENEW.call(client, lockKeys.length, [...lockKeys, ...ownersAndTtls]);
}

/**
 * recover.lua: `[fence, attempt, previousHolder]`, `[0]` held or within `grace` ms of a watcher first finding
 * the lock gone, `[-1, state]` nothing to recover, `[-2]` paused. The crashed attempt goes into the history.
 */
export function recoverOccurrence(
  client: RedisClient,
  keys: JobKeys,
  { owner, ttl, lockedBy }: LockOwner,
  occurrence: number,
  maxAttempts: number,
  grace: number,
  historyLimit: number,
): Promise<[number, (number | string)?, string?]> {
  const { lock, fence, record, paused, history } = keys;
  const args = [owner, ttl, lockedBy, occurrence, maxAttempts, grace, historyLimit];
  return RECOVER.call(client, 5, [lock, fence, record, paused, history, ...args]);
}

/** force-unlock.lua: the former holder's owner value, or `null` when the lock was free. */
export function forceUnlock(client: RedisClient, keys: JobKeys, entry: string, historyLimit: number, marker: string) {
  return FORCE_UNLOCK.call<string | null>(client, 2, [keys.lock, keys.history, entry, historyLimit, marker]);
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
