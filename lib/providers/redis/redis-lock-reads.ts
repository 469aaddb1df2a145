import { readOwnerValue } from '../../core/provider/owner-value.js';
import type { CatalogueJob, ClusterNode, HistoryEntry, PauseState } from '../../operators/cluster-records.js';
import { watchedJobs, type ClusterReading, type LockState } from '../../operators/operator-provider.js';
import { parseStored } from '../../operators/stored-records.js';
import { readLockValue } from './fenced-value.js';
import type { JobKeys, RedisKeys } from './redis-keys.js';
import type { LockRead, RedisScripts } from './redis-scripts.js';

/** A lock's state from what read-lock.include.lua read of it. */
export function lockStateOf([value, ttl, fence, paused]: LockRead): LockState {
  const { owner, fencingToken = fence === null ? null : Number(fence) } = readLockValue(value ?? '');
  // A lock an operator force-released holds a marker until the old lock would have expired: it is free.
  const held = readOwnerValue(owner);
  return {
    holder: held ? { node: held.node, since: new Date(held.since), ttl } : null,
    fencingToken: held ? fencingToken : null,
    paused: paused === null ? null : parseStored<PauseState>(paused),
  };
}

/**
 * The health watch's reading ({@link OperatorProvider.clusterReading}). On one server, one script call, with the
 * locks of the jobs watched at the last reading: a job new since then costs one more. On a Cluster, the nodes and
 * the catalogue, then each job's lock: each job's keys have a slot of their own.
 */
export class RedisClusterReader {
  /** The lock names of the jobs watched at the last reading: read with the nodes at the next. */
  private watchedLocks: string[] = [];

  constructor(
    private readonly scripts: RedisScripts,
    private readonly keys: RedisKeys,
    /** The nodes and the catalogue, each read on its own. */
    private readonly readApart: () => Promise<[ClusterNode[], CatalogueJob[]]>,
  ) {}

  async read(limit: number): Promise<ClusterReading> {
    if (this.scripts.client.isCluster) {
      const [nodes, catalogue] = await this.readApart();
      const jobs = watchedJobs(nodes, catalogue);
      const reading = (job: CatalogueJob) => this.scripts.readLocks(this.jobKeys([job.lockName]), limit);
      return readingOf(nodes, jobs, (await Promise.all(jobs.map(reading))).flat());
    }
    const expected = this.watchedLocks;
    const [nodesHash, catalogueHash, reads] = await this.scripts.readCluster(this.keys, this.jobKeys(expected), limit);
    const nodes = hashValues(nodesHash).map((node) => parseStored<ClusterNode>(node));
    const jobs = watchedJobs(
      nodes,
      hashValues(catalogueHash).map((job) => JSON.parse(job) as CatalogueJob),
    );
    const byLock = new Map(expected.map((name, index) => [name, reads[index]]));
    this.watchedLocks = [...new Set(jobs.map((job) => job.lockName))];
    const unexpected = this.watchedLocks.filter((name) => !byLock.has(name));
    if (unexpected.length > 0) {
      const more = await this.scripts.readLocks(this.jobKeys(unexpected), limit);
      unexpected.forEach((name, index) => byLock.set(name, more[index]));
    }
    return readingOf(
      nodes,
      jobs,
      jobs.map((job) => byLock.get(job.lockName)!),
    );
  }

  private jobKeys(lockNames: readonly string[]): JobKeys[] {
    return lockNames.map((name) => this.keys.job(name));
  }
}

/** The reading of `nodes` and `jobs`, with `reads[i]` the lock of `jobs[i]`. */
function readingOf(nodes: ClusterNode[], jobs: CatalogueJob[], reads: LockRead[]): ClusterReading {
  const readings = jobs.map(({ lockName }, index) => {
    const recent = reads[index][4].map((entry) => parseStored<HistoryEntry>(entry));
    return [lockName, { lock: lockStateOf(reads[index]), recent }] as const;
  });
  return { nodes, jobs, readings: new Map(readings) };
}

/** The values of a hash as a script's HGETALL replies it (field, value, field, value, …). */
function hashValues(fieldsAndValues: readonly string[]): string[] {
  return fieldsAndValues.filter((_, index) => index % 2 === 1);
}
