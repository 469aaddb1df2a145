import { randomUUID } from 'node:crypto';
import type { SkipReason } from '../../core/task-result.js';
import type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  PauseState,
  SteeringNote,
  TriggerRequest,
  TriggerResult,
} from '../../operators/cluster-records.js';
import { TRIGGER_RESULT_TTL, type LockState, type OperatorStore } from '../../operators/operator-store.js';
import { redisFailure } from './redis-failures.js';
import type { RedisLockProvider } from './redis-lock-provider.js';
import { forceUnlock, queueTrigger, removeTrigger, type RedisClient } from './redis-scripts.js';

/**
 * The operator store in Redis (the {@link OperatorStore} port), under the lock
 * provider's `keyPrefix`: `<prefix>:nodes` (hash: lockedBy → node), `<prefix>:jobs` (hash: job name → catalogue
 * entry), `<prefix>:skips` (hash: `<lock>|<reason>` → count), `<prefix>:triggers` (hash: job name → request),
 * `<prefix>:trigger:<id>` (a trigger's result); per lock, beside it in its Cluster slot, `…:paused` and
 * `…:history` (a list, newest first). Every value is JSON. Used by the nodes (heartbeat, skips, triggers) and
 * by the admin service and the CLI; no call is on a tick's path.
 */
export class RedisOperatorStore implements OperatorStore {
  private readonly client: RedisClient;
  readonly keyPrefix: string;

  constructor(private readonly provider: RedisLockProvider) {
    this.client = provider.client;
    this.keyPrefix = provider.keyPrefix;
  }

  // Nodes: heartbeat, catalogue, skip counts, triggers.

  /** Publishes this node and the jobs it runs (only those changed since the last call are written). */
  async publish(node: ClusterNode, jobs: readonly CatalogueJob[]): Promise<void> {
    // Two commands, not a MULTI: the two keys may live on different Cluster nodes.
    const writes: Promise<unknown>[] = [this.client.hset(this.key('nodes'), node.lockedBy, JSON.stringify(node))];
    const fields = jobs.flatMap((job) => [job.jobName, JSON.stringify(job)]);
    if (fields.length > 0) writes.push(this.client.hset(this.key('jobs'), ...fields));
    await this.send(Promise.all(writes));
  }

  /** Adds skips counted by a node since its last heartbeat: lock name → reason → count. */
  async addSkips(counts: ReadonlyMap<string, ReadonlyMap<SkipReason, number>>): Promise<void> {
    if (counts.size === 0) return;
    const writing = this.client.multi();
    for (const [lock, reasons] of counts) {
      for (const [reason, count] of reasons) writing.hincrby(this.key('skips'), `${lock}|${reason}`, count);
    }
    await this.send(writing.exec());
  }

  /** Takes the pending triggers of `jobNames`: each one is taken by exactly one node, and none once withdrawn. */
  async takeTriggers(jobNames: ReadonlySet<string>): Promise<TriggerRequest[]> {
    const pending = await this.send(this.client.hgetall(this.key('triggers')));
    const mine = Object.entries(pending).filter(([jobName]) => jobNames.has(jobName));
    const taken: TriggerRequest[] = [];
    for (const [jobName, json] of mine) {
      const request = JSON.parse(json) as TriggerRequest;
      // Removed by id: one node has it, and none if its operator withdrew it since it was read.
      if (await removeTrigger(this.client, this.key('triggers'), jobName, request.id)) taken.push(request);
    }
    return taken;
  }

  /** Records what became of a trigger, for the operator waiting for it. */
  async reportTrigger(id: string, result: TriggerResult): Promise<void> {
    await this.send(this.client.set(this.key(`trigger:${id}`), JSON.stringify(result), 'PX', TRIGGER_RESULT_TTL));
  }

  // Operators: reading.

  /**
   * Forgets the nodes last seen before `cutoff` (epoch ms), so the list stays bounded however many pods come
   * and go; resolves to how many.
   */
  async forgetNodes(cutoff: number): Promise<number> {
    const gone = (await this.nodes()).filter((node) => node.lastSeen < cutoff).map((node) => node.lockedBy);
    return gone.length === 0 ? 0 : this.send(this.client.hdel(this.key('nodes'), ...gone));
  }

  async nodes(): Promise<ClusterNode[]> {
    const nodes = await this.send(this.client.hgetall(this.key('nodes')));
    return Object.values(nodes).map((node) => JSON.parse(node) as ClusterNode);
  }

  async jobs(): Promise<CatalogueJob[]> {
    const jobs = await this.send(this.client.hgetall(this.key('jobs')));
    return Object.values(jobs).map((job) => JSON.parse(job) as CatalogueJob);
  }

  async job(jobName: string): Promise<CatalogueJob | undefined> {
    const job = await this.send(this.client.hget(this.key('jobs'), jobName));
    return job === null ? undefined : (JSON.parse(job) as CatalogueJob);
  }

  /** The last `limit` entries of a lock's history, newest first. */
  async history(lockName: string, limit: number): Promise<HistoryEntry[]> {
    const entries = await this.send(this.client.lrange(this.provider.jobKeys(lockName).history, 0, limit - 1));
    return entries.map((entry) => JSON.parse(entry) as HistoryEntry);
  }

  async lockState(lockName: string): Promise<LockState> {
    const keys = this.provider.jobKeys(lockName);
    const reading = this.client.multi().get(keys.lock).pttl(keys.lock).get(keys.fence).get(keys.paused).exec();
    const [[, owner], [, ttl], [, fence], [, paused]] = (await this.send(reading)) as [
      unknown,
      string | number | null,
    ][];
    // A lock an operator force-released holds a marker until the old lock would have expired: it is free.
    const held = typeof owner === 'string' && !owner.startsWith('unlocked|') ? owner : undefined;
    return {
      holder: held ? { lockedBy: lockedBy(held), since: Number(held.split('|')[1]), ttl: ttl as number } : undefined,
      // Only taking the lock draws a token: the holder's is the counter's value.
      fencingToken: held && fence !== null ? Number(fence) : undefined,
      paused: typeof paused === 'string' ? (JSON.parse(paused) as PauseState) : undefined,
    };
  }

  /** Skip counts of every lock: lock name → reason → count. */
  async skips(): Promise<Map<string, Record<string, number>>> {
    const counts = await this.send(this.client.hgetall(this.key('skips')));
    const byLock = new Map<string, Record<string, number>>();
    for (const [field, count] of Object.entries(counts)) {
      const split = field.lastIndexOf('|');
      const lock = field.slice(0, split);
      byLock.set(lock, { ...byLock.get(lock), [field.slice(split + 1)]: Number(count) });
    }
    return byLock;
  }

  // Operators: steering. Each action goes into the job's history.

  /** Pauses the job that locks `lockName`; `false` if it was paused already. */
  async pause(lockName: string, note: SteeringNote): Promise<boolean> {
    const keys = this.provider.jobKeys(lockName);
    const state: PauseState = { actor: note.actor, reason: note.reason, at: Date.now() };
    const set = await this.send(this.client.set(keys.paused, JSON.stringify(state), 'NX'));
    if (set === null) return false;
    await this.record(lockName, { type: 'pause', ...state });
    return true;
  }

  /** Resumes a paused job; `false` if it was not paused. */
  async resume(lockName: string, note: SteeringNote): Promise<boolean> {
    const removed = await this.send(this.client.del(this.provider.jobKeys(lockName).paused));
    if (removed === 0) return false;
    await this.record(lockName, { type: 'resume', actor: note.actor, reason: note.reason, at: Date.now() });
    return true;
  }

  /**
   * Asks a node that runs `jobName` to run it once now: resolves to the request queued, or, while another is
   * pending for the job, to that one (this one is dropped and not recorded): one pending trigger per job.
   */
  async requestTrigger(
    jobName: string,
    lockName: string,
    note: SteeringNote,
  ): Promise<{ readonly request: TriggerRequest; readonly queued: boolean }> {
    const request: TriggerRequest = {
      id: randomUUID(),
      jobName,
      actor: note.actor,
      reason: note.reason,
      at: Date.now(),
    };
    const json = JSON.stringify(request);
    const pending = await queueTrigger(this.client, this.key('triggers'), jobName, json);
    if (pending !== null) return { request: JSON.parse(pending) as TriggerRequest, queued: false };
    await this.record(lockName, { type: 'trigger', actor: note.actor, reason: note.reason, at: request.at });
    return { request, queued: true };
  }

  /** Withdraws trigger `id` of `jobName` if no node has taken it yet; `false` when one has. */
  async withdrawTrigger(jobName: string, id: string): Promise<boolean> {
    return removeTrigger(this.client, this.key('triggers'), jobName, id);
  }

  /** What became of a trigger, once a node has taken it. */
  async triggerResult(id: string): Promise<TriggerResult | undefined> {
    const result = await this.send(this.client.get(this.key(`trigger:${id}`)));
    return result === null ? undefined : (JSON.parse(result) as TriggerResult);
  }

  /**
   * Force-releases the job's lock whoever holds it; resolves to the former holder, or to undefined when the lock
   * was free, and then records nothing.
   */
  async unlock(lockName: string, note: SteeringNote): Promise<string | undefined> {
    const keys = this.provider.jobKeys(lockName);
    const at = Date.now();
    const entry = JSON.stringify({ type: 'unlock', actor: note.actor, reason: note.reason, at });
    const marker = `unlocked|${note.actor}|${at}`;
    const holder = await forceUnlock(this.client, keys, entry, this.provider.historyLimit, marker);
    return holder === null ? undefined : lockedBy(holder);
  }

  private async record(lockName: string, entry: HistoryEntry): Promise<void> {
    const { history } = this.provider.jobKeys(lockName);
    const writing = this.client
      .multi()
      .lpush(history, JSON.stringify(entry))
      .ltrim(history, 0, this.provider.historyLimit - 1);
    await this.send(writing.exec());
  }

  private key(name: string): string {
    return `${this.keyPrefix}:${name}`;
  }

  /** A command's reply, its failure said in terms of Redis (endpoint, cause), as the provider's are. */
  private send<T>(reply: Promise<T>): Promise<T> {
    return reply.catch((error: unknown) => Promise.reject(redisFailure(this.client, error)));
  }
}

/** The `lockedBy` part of a lock's owner value (`<lockedBy>|<epoch ms>|<id>`). */
function lockedBy(owner: string): string {
  return owner.slice(0, owner.indexOf('|'));
}
