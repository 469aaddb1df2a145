import type { Redis } from 'ioredis';
import type { LockProvider } from '../../lib/index.js';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import type { LockProviderFixture } from './lock-provider.acceptance.js';

/**
 * Nodes on the shared Redis under one fresh key prefix, each `provider(client, keyPrefix, node)` on a
 * connection of its own (`node` counts from 1). Closing deletes the prefix's keys and the connections.
 */
export function sharedRedisFixture(
  label: string,
  provider: (client: Redis, keyPrefix: string, node: number) => LockProvider,
): LockProviderFixture {
  const keyPrefix = uniquePrefix(label);
  const clients: Redis[] = [];
  return {
    connect() {
      const client = sharedRedis();
      clients.push(client);
      return provider(client, keyPrefix, clients.length);
    },
    async close() {
      const admin = sharedRedis();
      await deleteKeys(admin, keyPrefix);
      await Promise.all([admin, ...clients].map((client) => client.quit()));
    },
  };
}
