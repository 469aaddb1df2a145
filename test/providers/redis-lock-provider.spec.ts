import { readOwnerValue } from '../../lib/core/provider/owner-value.js';
import { readLockValue } from '../../lib/providers/redis/fenced-value.js';
import { once } from 'node:events';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { LockProviderUnavailableError } from '../../lib/index.js';
import { openRedis } from '../support/redis-client-choice.js';
import { recordCommands } from '../support/redis-monitor.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { pollUntil, settleWithin } from '../support/timing.js';
import { describeLockProvider } from '../../lib/provider-tests/index.js';
import { isLocked, lockConfig, mustLock, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import { redisLockProviderSubject, SHARED_REDIS } from './redis-subject.js';
import { RedisLockProvider, DEFAULT_KEY_PREFIX } from '../../lib/providers/redis/index.js';

const subject = redisLockProviderSubject('RedisLockProvider', SHARED_REDIS);
afterAll(() => subject.close());

describeLockProvider(subject, { describe, it, concurrent: it.concurrent });

describe('RedisLockProvider on the shared Redis', () => {
  const shared = useSharedRedisPrefix('provider-layout');
  let provider: RedisLockProvider;

  beforeEach(() => {
    provider = new RedisLockProvider(shared.client, { keyPrefix: shared.prefix, node: 'node-a' });
  });

  it('stores a lock as the string <prefix>:{<name>} naming its token and owner (fenced:s:µs:owner:epoch ms:unique id:node), with a TTL of lockAtMostFor and no other key, gone on release', async () => {
    const name = uniqueLockName();
    const lockAtMostFor = 5_000;
    const before = Date.now();
    const lock = await mustLock(provider, lockConfig(name, lockAtMostFor));
    const after = Date.now();
    const key = `${shared.prefix}:{${name}}`;
    const fenceKey = `${key}:fence`;

    expect(provider.lockKey(name)).toBe(key);
    expect(await shared.client.type(key)).toBe('string');
    // The value names the token and the owner for an operator: when it was taken, a random part, and node, last.
    const value = (await shared.client.get(key))!;
    expect(value).toMatch(/^fenced:\d+:\d+:owner:\d+:[0-9a-f-]{13}-\d+:node-a$/);
    const { owner, fencingToken } = readLockValue(value);
    expect(fencingToken).toBe(lock.fencingToken);
    const { node, since } = readOwnerValue(owner)!;
    expect(node).toBe('node-a');
    expect(since).toBeGreaterThanOrEqual(before);
    expect(since).toBeLessThanOrEqual(after);
    const ttl = await shared.client.pttl(key);
    expect(ttl).toBeGreaterThan(lockAtMostFor - 1_000);
    expect(ttl).toBeLessThanOrEqual(lockAtMostFor);

    // The token is the server's clock in µs (acquire.lua): a fence key is written only for a token ahead of it.
    expect(lock.fencingToken).toBeGreaterThanOrEqual(before * 1000);
    expect(await shared.client.exists(fenceKey)).toBe(0);
    await lock.unlock();
    expect(await shared.client.exists(key)).toBe(0);
    expect(await shared.client.exists(fenceKey)).toBe(0);
  });

  it('clamps TTLs below 1 ms to 1 ms instead of failing (lockAtMostFor 0.2 ms)', async () => {
    const name = uniqueLockName();
    const lock = await provider.lock(lockConfig(name, 0.2));
    expect(lock).toBeDefined();
    // The key got a TTL (it did not stay forever): it is gone within a few milliseconds.
    await pollUntil(
      async () => ((await shared.client.exists(provider.lockKey(name))) === 0 ? true : undefined),
      performance.now() + 50,
    );
  });

  it('keeps increasing the fencing token after the lock key was deleted by hand', async () => {
    const name = uniqueLockName();
    const first = await mustLock(provider, lockConfig(name));
    await shared.client.del(provider.lockKey(name));
    const second = await mustLock(provider, lockConfig(name));
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken!);
    await expect(first.unlock()).rejects.toMatchObject({ name: 'LockNotHeldError', reason: 'not-owner' });
    await second.unlock();
  });

  it('passes an error Redis replied with on as it is: Redis was reachable', async () => {
    const name = uniqueLockName();
    await shared.client.hset(`${provider.lockKey(name)}:fence`, 'not', 'a counter');

    const replied = { name: 'ReplyError', message: expect.stringContaining('WRONGTYPE') };
    await expect(provider.lock(lockConfig(name))).rejects.toMatchObject(replied);
  });

  it('reads a key of another type at the lock name as a lock held, and leaves it alone', async () => {
    const name = uniqueLockName();
    await shared.client.hset(provider.lockKey(name), 'not', 'a lock');
    expect(await provider.lock(lockConfig(name))).toBeUndefined();
    expect(await shared.client.hget(provider.lockKey(name), 'not')).toBe('a lock');
  });
});

describe('RedisLockProvider on a private Redis', () => {
  const redis = usePrivateRedisServer();
  let client: Redis;

  beforeAll(() => {
    // One retry, so commands fail fast while the server is down instead of queueing.
    client = openRedis(redis.server.url, { maxRetriesPerRequest: 1 });
    // Connection errors are expected while the server is killed; without a listener ioredis prints them.
    client.on('error', () => undefined);
  });

  afterAll(() => client.disconnect());

  it(`uses the key prefix "${DEFAULT_KEY_PREFIX}" and node <hostname>:<pid> by default`, async () => {
    const provider = new RedisLockProvider(client);
    const name = uniqueLockName();
    expect(DEFAULT_KEY_PREFIX).toBe('job-lock');
    const lock = await mustLock(provider, lockConfig(name));
    const value = (await redis.admin.get(`job-lock:{${name}}`))!;
    expect(readOwnerValue(readLockValue(value).owner)?.node).toBe(`${hostname()}:${process.pid}`);
    await lock.unlock();
    expect(await redis.admin.exists(`job-lock:{${name}}`)).toBe(0);
  });

  it('takes one round trip (one EVALSHA) per acquire, refused acquire, extend and release', async () => {
    const provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('round-trips') });
    const otherNode = new RedisLockProvider(redis.admin, { keyPrefix: provider.keyPrefix });
    const name = uniqueLockName();
    // A script's first call on a server that never ran it is EVALSHA, NOSCRIPT, then EVAL; warm all three up first.
    const warmUp = await mustLock(provider, lockConfig(name));
    await (await warmUp.extend(1_000, 0))!.unlock();

    const recorder = await recordCommands(redis.admin);
    try {
      await recorder.take();
      const lock = await mustLock(provider, lockConfig(name));
      expect(await recorder.take()).toEqual(['evalsha']);
      expect(await provider.lock(lockConfig(name))).toBeUndefined();
      expect(await recorder.take()).toEqual(['evalsha']);
      const extended = await lock.extend(1_000, 0);
      expect(await recorder.take()).toEqual(['evalsha']);
      await extended!.unlock();
      expect(await recorder.take()).toEqual(['evalsha']);
      expect(await isLocked(otherNode, name)).toBe(false);
    } finally {
      await recorder.close();
    }
  });

  it('still works after SCRIPT FLUSH: a lost script is sent once as EVAL, then as EVALSHA again', async () => {
    const provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('script-flush') });
    const name = uniqueLockName();
    const warmUp = await mustLock(provider, lockConfig(name));
    await (await warmUp.extend(1_000, 0))!.unlock();
    expect(await cachedScripts(redis.admin)).toBeGreaterThan(0);

    await redis.admin.script('FLUSH');
    expect(await cachedScripts(redis.admin)).toBe(0);

    const recorder = await recordCommands(redis.admin);
    try {
      await recorder.take();
      const lock = await mustLock(provider, lockConfig(name));
      expect(await recorder.take()).toEqual(['evalsha', 'eval']);
      const extended = await lock.extend(1_000, 0);
      expect(extended).toBeDefined();
      expect(await recorder.take()).toEqual(['evalsha', 'eval']);
      await extended!.unlock();
      expect(await recorder.take()).toEqual(['evalsha', 'eval']);
      // EVAL cached each script again: the next cycle is one EVALSHA each way.
      await (await mustLock(provider, lockConfig(name))).unlock();
      expect(await recorder.take()).toEqual(['evalsha', 'evalsha']);
    } finally {
      await recorder.close();
    }
    expect(await isLocked(provider, name)).toBe(false);
  });

  it('passes any other script error through unchanged, without resending the script', async () => {
    const provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('script-error') });
    const name = uniqueLockName();
    const lock = await mustLock(provider, lockConfig(name));
    // The release script reads the lock with GET, which Redis refuses on a hash.
    await redis.admin.del(provider.lockKey(name));
    await redis.admin.hset(provider.lockKey(name), 'not', 'a lock');

    const recorder = await recordCommands(redis.admin);
    try {
      await recorder.take();
      await expect(lock.unlock()).rejects.toThrow(/WRONGTYPE/);
      expect(await recorder.take()).toEqual(['evalsha']);
    } finally {
      await recorder.close();
      await redis.admin.del(provider.lockKey(name));
    }
  });

  it('rejects lock() within seconds while Redis is down, and locks again once it is back', async () => {
    const provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('redis-down') });
    const name = uniqueLockName();
    await client.ping();
    await redis.server.kill();

    const attempt = await settleWithin(provider.lock(lockConfig(name)), 5_000);
    expect(attempt.status).toBe('rejected');
    // What happened, instead of ioredis's words about its offline queue or its retries.
    const failure = attempt.status === 'rejected' ? attempt.reason : undefined;
    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    const endpoint = `127\\.0\\.0\\.1:${redis.server.port}`;
    const unreachable = new RegExp(`^Redis ${endpoint} is unreachable \\([\\w ]+, the client is \\w+\\)$`);
    expect((failure as Error).message).toMatch(unreachable);
    expect((failure as Error).cause).toBeInstanceOf(Error);

    await redis.server.start();
    if (client.status !== 'ready') await settleWithin(once(client, 'ready'), 5_000);
    const lock = await mustLock(provider, lockConfig(name));
    await lock.unlock();
  });
});

/** How many Lua scripts the server has cached. */
async function cachedScripts(client: Redis): Promise<number> {
  const info = await client.info('memory');
  const match = /number_of_cached_scripts:(\d+)/.exec(info);
  if (!match) throw new Error('INFO memory has no number_of_cached_scripts');
  return Number(match[1]);
}
