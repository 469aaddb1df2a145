import { Redis } from 'ioredis';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { recordCommands } from '../support/redis-monitor.js';
import { freePort } from '../support/redis-server.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const redis = usePrivateRedisServer();
const clients: Redis[] = [];
afterEach(() => clients.splice(0).forEach((client) => client.disconnect()));

function client(url: string): Redis {
  const created = new Redis(url, { maxRetriesPerRequest: 1 });
  created.on('error', () => undefined);
  clients.push(created);
  return created;
}

describe("RedisLockProvider's startup check", () => {
  it('costs a healthy boot one script call: EVALSHA, and EVAL once on a server that lacks the script', async () => {
    const lockClient = client(redis.server.url);
    await new Promise((resolve) => lockClient.once('ready', resolve));
    const provider = new RedisLockProvider(lockClient, { keyPrefix: uniquePrefix('startup-check') });
    await redis.admin.script('FLUSH');
    const recorder = await recordCommands(redis.admin);
    try {
      await recorder.take();

      await provider.checkProvider();
      const first = await recorder.take();
      await provider.checkProvider();
      const second = await recorder.take();

      expect(first).toEqual(['evalsha', 'eval']);
      expect(second).toEqual(['evalsha']);
    } finally {
      await recorder.close();
    }
  });

  it('passes a Redis nobody answers on: that is an outage, not a mistake', async () => {
    const provider = new RedisLockProvider(client(`redis://127.0.0.1:${await freePort()}`));

    await expect(provider.checkProvider()).resolves.toBeUndefined();
  });
});
