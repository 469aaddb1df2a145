import { forceUnlockMarker, readOwnerValue } from '../../core/provider/owner-value.js';
import { readLockValue } from './fenced-value.js';
import type { SkipCounts } from '../../core/task/task-result.js';
import type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  OperatorNote,
  TriggerRequest,
  TriggerResult,
} from '../../operators/cluster-records.js';
import {
  HEALTH_REPORT_TTL,
  TRIGGER_RESULT_TTL,
  type ClusterReading,
  type HealthReportClaim,
  type HealthTurn,
  type HealthTurnBid,
  type LockState,
  type OperatorProvider,
  type TriggerQueueing,
} from '../../operators/operator-provider.js';
import { pauseState, operatorEntry, triggerRequest } from '../../operators/operator-records.js';
import { parseStored, storedJson } from '../../operators/stored-records.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure } from './redis-failures.js';
import type { RedisKeys } from './redis-keys.js';
import { lockStateOf, RedisClusterReader } from './redis-lock-reads.js';
import type { RedisScripts } from './redis-scripts.js';

/**
 * The operator store in Redis (the {@link OperatorProvider} port), beside the locks under the provider's
 * `keyPrefix` (the layout: {@link RedisKeys}). Every value is JSON. Used by the nodes (heartbeat, skips,
 * triggers) and by the admin service and the CLI; no call is on a tick's path.
 */
export class RedisOperatorProvider implements OperatorProvider {
  private readonly client: RedisClient;
  private readonly reader: RedisClusterReader;

  constructor(
    private readonly scripts: RedisScripts,
    private readonly keys: RedisKeys,
    /** How many entries each job's history keeps. */
    private readonly historyLimit: number,
  ) {
    this.client = scripts.client;
    this.reader = new RedisClusterReader(scripts, keys, () => Promise.all([this.nodes(), this.jobs()]));
  }

  // Nodes: heartbeat, catalogue, skip counts, triggers.

  /**
   * Publishes this node and the jobs it runs (only those changed since the last call are written), adds its skips,
   * and bids for the health turn: commands sent together, one round trip, not a MULTI, as their keys may live on
   * different Cluster nodes. The skips are one script call, however many locks and reasons.
   */
  async publish(
    node: ClusterNode,
    jobs: readonly CatalogueJob[],
    skips: SkipCounts,
    bid: HealthTurnBid,
  ): Promise<HealthTurn | null> {
    const fields = jobs.flatMap((job) => [job.jobName, JSON.stringify(job)]);
    const writes: Promise<unknown>[] = [this.client.hset(this.keys.nodes, node.node, storedJson(node))];
    if (fields.length > 0) writes.push(this.client.hset(this.keys.catalogue, ...fields));
    const counts = [...skips].flatMap(([lock, reasons]) =>
      [...reasons].flatMap(([reason, count]) => [`${lock}|${reason}`, count]),
    );
    // The scripts' failures are said in Redis's terms already.
    const [turn] = await Promise.all([
      this.scripts.bidHealthTurn(this.keys, node.node, bid.lease, JSON.stringify(bid.unhealthy)),
      this.send(Promise.all(writes)),
      counts.length > 0 && this.scripts.addSkips(this.keys.skips, counts),
    ]);
    return turn && { taken: turn[0] === 1, unhealthy: JSON.parse(turn[1]) };
  }

  /** Takes the pending triggers of `jobNames`: each one is taken by exactly one node, and none once withdrawn. */
  async takeTriggers(jobNames: ReadonlySet<string>): Promise<TriggerRequest[]> {
    const pending = await this.send(this.client.hgetall(this.keys.triggers));
    const mine = Object.entries(pending).filter(([jobName]) => jobNames.has(jobName));
    const taken: TriggerRequest[] = [];
    for (const [jobName, json] of mine) {
      const request = parseStored<TriggerRequest>(json);
      // Removed by id: one node has it, and none if its operator withdrew it since it was read.
      if (await this.scripts.removeTrigger(this.keys.triggers, jobName, request.id)) taken.push(request);
    }
    return taken;
  }

  /** Records what became of a trigger, for the operator waiting for it. */
  async reportTrigger(id: string, result: TriggerResult): Promise<void> {
    await this.send(this.client.set(this.keys.triggerResult(id), JSON.stringify(result), 'PX', TRIGGER_RESULT_TTL));
  }

  /** One `SET NX` per report, in one MULTI; on a Cluster one MULTI per job, whose keys share a slot. */
  async claimHealthReports(claims: readonly HealthReportClaim[]): Promise<HealthReportClaim[]> {
    const byJob = new Map<string, HealthReportClaim[]>();
    for (const claim of claims) byJob.set(claim.lockName, [...(byJob.get(claim.lockName) ?? []), claim]);
    const groups = this.client.isCluster ? [...byJob.values()] : [claims];
    const claimed = new Set((await Promise.all(groups.map((group) => this.claimTogether(group)))).flat());
    return claims.filter((claim) => claimed.has(claim));
  }

  /** Claims `claims` in one MULTI: resolves to those claimed. */
  private async claimTogether(claims: readonly HealthReportClaim[]): Promise<HealthReportClaim[]> {
    if (claims.length === 0) return [];
    const claiming = this.client.multi();
    for (const { lockName, kind, at } of claims) {
      claiming.set(this.keys.healthReport(lockName, kind, at.getTime()), '1', 'PX', HEALTH_REPORT_TTL, 'NX');
    }
    const replies = (await this.send(claiming.exec())) ?? [];
    return claims.filter((_, index) => replies[index]?.[1] === 'OK');
  }

  // Operators: reading.

  /**
   * Forgets the nodes last seen before `cutoff`, so the list stays bounded however many pods come and go;
   * resolves to how many.
   */
  async forgetNodes(cutoff: Date): Promise<number> {
    const gone = (await this.nodes()).filter((node) => node.lastSeen < cutoff).map((node) => node.node);
    return gone.length === 0 ? 0 : this.send(this.client.hdel(this.keys.nodes, ...gone));
  }

  async nodes(): Promise<ClusterNode[]> {
    const nodes = await this.send(this.client.hgetall(this.keys.nodes));
    return Object.values(nodes).map((node) => parseStored<ClusterNode>(node));
  }

  async jobs(): Promise<CatalogueJob[]> {
    const jobs = await this.send(this.client.hgetall(this.keys.catalogue));
    return Object.values(jobs).map((job) => JSON.parse(job) as CatalogueJob);
  }

  async job(jobName: string): Promise<CatalogueJob | undefined> {
    const job = await this.send(this.client.hget(this.keys.catalogue, jobName));
    return job === null ? undefined : (JSON.parse(job) as CatalogueJob);
  }

  /** The last `limit` entries of a lock's history, newest first. */
  async history(lockName: string, limit: number): Promise<HistoryEntry[]> {
    const entries = await this.send(this.client.lrange(this.keys.job(lockName).history, 0, limit - 1));
    return entries.map((entry) => parseStored<HistoryEntry>(entry));
  }

  async lockState(lockName: string): Promise<LockState> {
    const [read] = await this.scripts.readLocks([this.keys.job(lockName)], 0);
    return lockStateOf(read);
  }

  /** One script call on one server, two reads and one per job on a Cluster: see `RedisClusterReader`. */
  clusterReading(limit: number): Promise<ClusterReading> {
    return this.reader.read(limit);
  }

  /** Skip counts of every lock: lock name → reason → count. */
  async skips(): Promise<Map<string, Record<string, number>>> {
    const counts = await this.send(this.client.hgetall(this.keys.skips));
    const byLock = new Map<string, Record<string, number>>();
    for (const [field, count] of Object.entries(counts)) {
      const split = field.lastIndexOf('|');
      const lock = field.slice(0, split);
      byLock.set(lock, { ...byLock.get(lock), [field.slice(split + 1)]: Number(count) });
    }
    return byLock;
  }

  // Operators: actions. Each action goes into the job's history.

  /** Pauses the job that locks `lockName`; `false` if it was paused already. */
  async pause(lockName: string, note: OperatorNote): Promise<boolean> {
    const keys = this.keys.job(lockName);
    const state = pauseState(note);
    const set = await this.send(this.client.set(keys.paused, storedJson(state), 'NX'));
    if (set === null) return false;
    await this.record(lockName, operatorEntry('pause', note, state.at));
    return true;
  }

  /** Resumes a paused job; `false` if it was not paused. */
  async resume(lockName: string, note: OperatorNote): Promise<boolean> {
    const removed = await this.send(this.client.del(this.keys.job(lockName).paused));
    if (removed === 0) return false;
    await this.record(lockName, operatorEntry('resume', note));
    return true;
  }

  /**
   * Asks a node that runs `jobName` to run it once now: resolves to the request queued, or, while another is
   * pending for the job, to that one (this one is dropped and not recorded): one pending trigger per job.
   */
  async requestTrigger(jobName: string, lockName: string, note: OperatorNote): Promise<TriggerQueueing> {
    const request = triggerRequest(jobName, note);
    const pending = await this.scripts.queueTrigger(this.keys.triggers, jobName, storedJson(request));
    if (pending !== null) return { request: parseStored<TriggerRequest>(pending), queued: false };
    await this.record(lockName, operatorEntry('trigger', note, request.at));
    return { request, queued: true };
  }

  /** Withdraws trigger `id` of `jobName` if no node has taken it yet; `false` when one has. */
  async withdrawTrigger(jobName: string, id: string): Promise<boolean> {
    return this.scripts.removeTrigger(this.keys.triggers, jobName, id);
  }

  /** What became of a trigger, once a node has taken it. */
  async triggerResult(id: string): Promise<TriggerResult | undefined> {
    const result = await this.send(this.client.get(this.keys.triggerResult(id)));
    return result === null ? undefined : (JSON.parse(result) as TriggerResult);
  }

  /**
   * Force-releases the job's lock whoever holds it; resolves to the former holder, or to undefined when the lock
   * was free, and then records nothing.
   */
  async unlock(lockName: string, note: OperatorNote): Promise<string | undefined> {
    const keys = this.keys.job(lockName);
    const at = new Date();
    // Without its formerNode: force-unlock.lua adds the holder it finds.
    const entry = storedJson({ ...operatorEntry('unlock', note, at), formerNode: undefined });
    const marker = forceUnlockMarker(note.actor, at.getTime());
    const holder = await this.scripts.forceUnlock(keys, entry, this.historyLimit, marker);
    return holder === null ? undefined : (readOwnerValue(readLockValue(holder).owner)?.node ?? holder);
  }

  private async record(lockName: string, entry: HistoryEntry): Promise<void> {
    const { history } = this.keys.job(lockName);
    const writing = this.client
      .multi()
      .lpush(history, storedJson(entry))
      .ltrim(history, 0, this.historyLimit - 1);
    await this.send(writing.exec());
  }

  /** A command's reply, its failure said in terms of Redis (endpoint, cause), as the provider's are. */
  private send<T>(reply: Promise<T>): Promise<T> {
    return reply.catch((error: unknown) => Promise.reject(redisFailure(this.client, error)));
  }
}
