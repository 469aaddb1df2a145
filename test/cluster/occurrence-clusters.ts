import type { Redis } from 'ioredis';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import { tickOutcomes } from './occurrence-analysis.js';
import { WorkerCluster, type WorkerLaunch } from './worker-cluster.js';

/** What two trios starting at once (6 Nest apps on 2 cores) get to report `ready`. */
export const TWO_TRIOS_READY_MS = 40_000;

/**
 * Registers, in the describe block that calls it, the hooks of tests that start worker clusters on the shared
 * Redis, each on a key prefix of its own: after each test its workers die, so the next test gets the CPU to
 * itself; after all, the prefixes' keys are deleted.
 */
export function useOccurrenceClusters() {
  const keyPrefixes: string[] = [];
  const clusters: WorkerCluster[] = [];
  let redis: Redis;

  beforeAll(() => {
    redis = sharedRedis();
  });
  afterEach(async () => {
    await Promise.all(clusters.splice(0).map((cluster) => cluster.killAll()));
  });
  afterAll(async () => {
    for (const keyPrefix of keyPrefixes) await deleteKeys(redis, keyPrefix);
    await redis.quit();
  });

  return {
    /** Starts `workers`, each running `job`, on a fresh key prefix; resolves once every one is ready. */
    async startCluster(workers: Array<string | WorkerLaunch>, job: WorkerJobSpec, readyTimeoutMs?: number) {
      const keyPrefix = uniquePrefix('occurrence');
      keyPrefixes.push(keyPrefix);
      const cluster = await WorkerCluster.start({ workers, jobs: [job], keyPrefix, readyTimeoutMs });
      clusters.push(cluster);
      return cluster;
    },
  };
}

/** The ticks of `occurrence` so far, once each of the `count` workers has reported its own. */
export const everyTickOf =
  (cluster: WorkerCluster, job: WorkerJobSpec, occurrence: number, gapMs: number, count: number) => () => {
    const ticks = tickOutcomes(cluster, job.name, gapMs).filter((tick) => tick.occurrence === occurrence);
    return new Set(ticks.map((tick) => tick.instance)).size === count ? ticks : undefined;
  };
