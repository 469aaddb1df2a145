import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import { LockingTaskExecutor, SchedulerLockModule } from '../../lib/index.js';
import { SHARED_REDIS_URL, deleteKeys, uniquePrefix } from '../support/shared-redis.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

// iovalkey's clients are accepted, as typed by iovalkey itself, wherever ioredis's are: this file compiles
// only while they are (tsc and ts-jest check it). The suites that decode script replies run on iovalkey
// with REDIS_CLIENT=iovalkey (.ci/run); this spec runs on it in every run.

describe('an iovalkey client', () => {
  it('locks through RedisLockProvider, typed as iovalkey types it', async () => {
    const client = new Valkey(SHARED_REDIS_URL);
    const keyPrefix = uniquePrefix('iovalkey');
    try {
      const executor = new LockingTaskExecutor(new RedisLockProvider(client, { keyPrefix }), { node: 'node-a' });
      const result = await executor.executeWithLock(async () => 'ran', { name: 'report', lockAtMostFor: 10_000 });
      expect(result).toEqual({ executed: true, result: 'ran' });
      await executor.shutdown(0);
    } finally {
      await deleteKeys(client as never, keyPrefix);
      await client.quit();
    }
  });

  it('is a module option, a Cluster too', () => {
    const lazy = { lazyConnect: true };
    expect(SchedulerLockModule.forRoot({ redis: new Valkey(lazy), defaultLockAtMostFor: '1m' })).toBeDefined();
    expect(
      SchedulerLockModule.forRoot({ redis: new ValkeyCluster([{ port: 1 }], lazy), defaultLockAtMostFor: '1m' }),
    ).toBeDefined();
  });
});
