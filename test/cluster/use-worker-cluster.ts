import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import { WorkerCluster } from './worker-cluster.js';

/** What {@link useWorkerCluster} gives a describe block. */
export interface UsedWorkerCluster {
  /** Launches the block's workers, each running `job`, and resolves once every one is ready. */
  start(job: WorkerJobSpec): Promise<WorkerCluster>;
}

/**
 * Registers, in the describe block that calls it, the hooks of tests that each start worker processes
 * (named `workers`) on the shared Redis: a fresh key prefix for each test, and after each test its
 * workers killed -9, so the next test gets the CPU to itself, then the prefix's keys deleted.
 */
export function useWorkerCluster(label: string, workers: readonly string[]): UsedWorkerCluster {
  let cluster: WorkerCluster | undefined;
  const shared = useSharedRedisPrefix(label, async () => {
    await cluster?.killAll();
    cluster = undefined;
  });
  return {
    async start(job) {
      cluster = await WorkerCluster.start({ workers: [...workers], jobs: [job], keyPrefix: shared.prefix });
      return cluster;
    },
  };
}
