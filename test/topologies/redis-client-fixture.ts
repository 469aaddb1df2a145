import { RedisLockProvider } from '../../lib/index.js';
import { type RedisClient } from '../../lib/provider/index.js';
import type { LockProviderFixture } from '../providers/lock-provider.acceptance.js';
import { uniquePrefix } from '../support/shared-redis.js';

/** How a topology is reached: a new client per node, and how to delete keys through one. */
export interface RedisTopology<C extends RedisClient> {
  /** Labels the fixture's key prefix. */
  readonly label: string;
  openClient(): C;
  deleteKeys(client: C, prefix: string): Promise<void>;
}

/**
 * An acceptance fixture whose every node is a {@link RedisLockProvider} on a client of its own onto
 * `topology`, under one fresh key prefix; `close()` deletes the prefix's keys and quits every client.
 */
export function redisTopologyFixture<C extends RedisClient>(topology: RedisTopology<C>): LockProviderFixture {
  const keyPrefix = uniquePrefix(topology.label);
  const clients: C[] = [];
  return {
    connect() {
      const client = topology.openClient();
      clients.push(client);
      return new RedisLockProvider(client, { keyPrefix, lockedBy: `node-${clients.length}` });
    },
    async close() {
      if (clients.length > 0) await topology.deleteKeys(clients[0], keyPrefix);
      await Promise.all(clients.map((client) => client.quit()));
    },
  };
}
