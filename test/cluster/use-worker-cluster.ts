import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { createSchema, dropSchema, postgresPool, uniqueSchema } from '../support/shared-postgres.js';
import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import { WorkerCluster, type WorkerLaunch } from './worker-cluster.js';

/** What {@link useWorkerCluster} gives a describe block. */
export interface UsedWorkerCluster {
  /** Launches the block's workers, each running `jobs`, and resolves once every one is ready. */
  start(...jobs: WorkerJobSpec[]): Promise<WorkerCluster>;
}

/** The lock store a cluster's workers share. */
export type WorkerStore = 'Redis' | 'PostgreSQL';

/**
 * Registers, in the describe block that calls it, the hooks of tests that each start worker processes
 * (named `workers`) on the shared Redis, or the shared PostgreSQL: a fresh key prefix (or schema) for each
 * test, and after each test its workers killed -9, so the next test gets the CPU to itself, then the
 * prefix's keys deleted (or the schema dropped). `launchEnv` gives a worker variables of its own.
 */
export function useWorkerCluster(
  label: string,
  instances: readonly string[],
  store: WorkerStore = 'Redis',
  launchEnv: (instance: string) => NodeJS.ProcessEnv = () => ({}),
) {
  const workers = () => instances.map((instance) => ({ instance, env: launchEnv(instance) }));
  let cluster: WorkerCluster | undefined;
  const stop = async () => {
    await cluster?.killAll();
    cluster = undefined;
  };
  if (store === 'PostgreSQL') return usePostgresSchema(label, stop, workers, (started) => (cluster = started));
  const shared = useSharedRedisPrefix(label, stop);
  return {
    async start(...jobs) {
      cluster = await WorkerCluster.start({ workers: workers(), jobs, keyPrefix: shared.prefix });
      return cluster;
    },
  } satisfies UsedWorkerCluster;
}

function usePostgresSchema(
  label: string,
  stop: () => Promise<void>,
  workers: () => WorkerLaunch[],
  started: (cluster: WorkerCluster) => void,
): UsedWorkerCluster {
  const admin = postgresPool();
  let schema = '';
  beforeEach(async () => {
    schema = uniqueSchema(label);
    await createSchema(admin, schema);
  });
  afterEach(async () => {
    await stop();
    await dropSchema(admin, schema);
  });
  afterAll(() => admin.end());
  return {
    async start(...jobs) {
      const cluster = await WorkerCluster.start({
        workers: workers(),
        jobs,
        keyPrefix: '',
        postgresSchema: schema,
      });
      started(cluster);
      return cluster;
    },
  };
}
