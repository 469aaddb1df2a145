import { type LockProvider } from '../../lib/provider/index.js';
import type { LockProviderSubject } from '../../lib/provider-tests/index.js';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { RedisLockProvider, type RedisClient } from '../../lib/providers/redis/index.js';

/** How a Redis is reached: a new client per node, and how to delete keys through one. */
export interface RedisTopology<C extends RedisClient> {
  /** Labels the key prefix. */
  readonly label: string;
  openClient(): C;
  deleteKeys(client: C, prefix: string): Promise<void>;
}

/** The shared Redis of the tests (REDIS_URL). */
export const SHARED_REDIS: RedisTopology<ReturnType<typeof sharedRedis>> = {
  label: 'provider',
  openClient: sharedRedis,
  deleteKeys,
};

/** The nodes of a conformance subject on Redis, and `close()`, which deletes what they stored. */
export type RedisNodes<P extends LockProvider> = Pick<LockProviderSubject<P>, 'create' | 'cleanup'> & {
  close(): Promise<void>;
};

/**
 * Nodes on `topology` under one fresh key prefix, each what `make` builds on a client of its own (`node`
 * counts from 1; `node` as the check names it, if it does), quit when its check ends; `close()` deletes the
 * prefix's keys.
 */
export function redisNodes<C extends RedisClient, P extends LockProvider>(
  topology: RedisTopology<C>,
  make: (client: C, keyPrefix: string, node: number, nodeName?: string) => P,
): RedisNodes<P> {
  const keyPrefix = uniquePrefix(topology.label);
  const clients = new Map<LockProvider, C>();
  let made = 0;
  return {
    create(nodeName) {
      const client = topology.openClient();
      made += 1;
      try {
        const node = make(client, keyPrefix, made, nodeName);
        clients.set(node, client);
        return node;
      } catch (refused) {
        // A provider that refuses the name (an empty node) leaves no client open to keep Jest alive.
        client.disconnect();
        throw refused;
      }
    },
    async cleanup(node) {
      const client = clients.get(node);
      clients.delete(node);
      await client?.quit();
    },
    async close() {
      const admin = topology.openClient();
      await topology.deleteKeys(admin, keyPrefix).finally(() => admin.quit());
    },
  };
}

/** {@link RedisLockProvider} nodes on `topology`, as the conformance kit checks them: fencing, single-use locks. */
export function redisLockProviderSubject<C extends RedisClient>(
  name: string,
  topology: RedisTopology<C>,
): LockProviderSubject<RedisLockProvider> & RedisNodes<RedisLockProvider> {
  const nodes = redisNodes(topology, (client, keyPrefix, index, node = `node-${index}`) => {
    return new RedisLockProvider(client, { keyPrefix, node });
  });
  return { name, provider: RedisLockProvider, fencingTokens: true, singleUseLocks: true, ...nodes };
}
