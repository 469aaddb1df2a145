import { Cluster } from 'ioredis';
import { madeOncePerRun } from './made-once-per-run.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './redis-cluster.js';

/** The run's Redis Cluster: what a spec may use of it; never kill or reconfigure its nodes. */
export type SharedRedisCluster = Pick<PrivateRedisCluster, 'ports' | 'startupNodes' | 'connect'>;

/**
 * The one 3-master Redis Cluster of this run, started by the first spec that asks (in any worker) and stopped by
 * the run's teardown: for specs that neither kill nor fail over a node (those start their own). Use a unique key
 * prefix and delete its keys with `deleteClusterKeys`.
 */
export async function sharedRedisCluster(): Promise<SharedRedisCluster> {
  const ports = await madeOncePerRun('redis-cluster', async () => {
    const cluster = await startPrivateRedisCluster();
    return { value: cluster.ports, ...cluster.handOver() };
  });
  const startupNodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  return { ports, startupNodes, connect: (options) => new Cluster(startupNodes, options) };
}
