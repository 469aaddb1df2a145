import type { Redis } from 'ioredis';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { describeLockProviderInModule } from './lock-provider-module.acceptance.js';
import { describeLockProvider, type LockProviderFixture } from './lock-provider.acceptance.js';
import { MinimalRedisLockProvider } from './minimal-redis-lock-provider.js';

/** Each node a {@link MinimalRedisLockProvider} on its own connection to the shared Redis, under one fresh prefix. */
function minimalProviderFixture(): LockProviderFixture {
  const keyPrefix = uniquePrefix('minimal-provider');
  const clients: Redis[] = [];
  return {
    connect() {
      const client = sharedRedis();
      clients.push(client);
      return new MinimalRedisLockProvider(client, keyPrefix);
    },
    async close() {
      const admin = sharedRedis();
      await deleteKeys(admin, keyPrefix);
      await Promise.all([admin, ...clients].map((client) => client.quit()));
    },
  };
}

// No fencing tokens, and lock objects that are not single-use: neither is part of what the library needs.
describeLockProvider('MinimalRedisLockProvider', minimalProviderFixture, { fencing: false, singleUse: false });
describeLockProviderInModule('MinimalRedisLockProvider', minimalProviderFixture);
