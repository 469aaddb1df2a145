import type { Redis } from 'ioredis';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { readLockValue } from '../../lib/providers/redis/fenced-value.js';
import { assertStrictlyIncreasing, lockConfig } from '../../lib/provider-tests/lock-probes.js';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';

/** Distinct lock names a busy app may use once each (`executeWithLock` with an id in the name). */
const NAMES = 10_000;
/** Names taken at once. */
const BATCH = 500;

let client: Redis;
let keyPrefix: string;
let provider: RedisLockProvider;
beforeEach(() => {
  client = sharedRedis();
  keyPrefix = uniquePrefix('leftovers');
  provider = new RedisLockProvider(client, { keyPrefix, node: 'node-a' });
});
afterEach(async () => {
  await deleteKeys(client, keyPrefix);
  await client.quit();
});

/** The keys under the test's prefix, with their TTLs (ms, -1 for none). */
async function keysLeft(): Promise<{ key: string; ttl: number }[]> {
  const keys: string[] = [];
  for await (const batch of client.scanStream({ match: `${keyPrefix}:*`, count: 1000 })) keys.push(...batch);
  return Promise.all(keys.map(async (key) => ({ key, ttl: await client.pttl(key) })));
}

/** Runs `each` for names 0 to NAMES - 1, BATCH at a time. */
async function forEachName(each: (name: string) => Promise<void>): Promise<void> {
  for (let start = 0; start < NAMES; start += BATCH) {
    await Promise.all(Array.from({ length: BATCH }, (_, i) => each(`order-${start + i}`)));
  }
}

describe('RedisLockProvider: a plain lock leaves nothing behind once it is free', () => {
  it(`leaves no key for ${NAMES} distinct names taken and released, by lock object or by owner`, async () => {
    await forEachName(async (name) => {
      const owned = name.endsWith('7');
      const lock = await provider.lock(lockConfig(name), owned ? { owner: `worker-${name}` } : undefined);
      if (!lock) throw new Error(`${name} was held`);
      if (owned) expect(await provider.releaseByOwner(name, `worker-${name}`)).toBe('released');
      else await lock.unlock();
    });
    // A plain lock's token is in its value: no fence key is written while the server's clock goes forward.
    expect(await keysLeft()).toEqual([]);
  });

  it('leaves no key for names whose locks expired, or were kept for lockAtLeastFor', async () => {
    const names = Array.from({ length: BATCH }, (_, i) => `expiring-${i}`);
    await Promise.all(
      names.map(async (name, i) => {
        // A lock object means its key was written; on a busy machine it may expire before the next line.
        const lock = await provider.lock(lockConfig(name, 30, i % 2 ? 30 : 0));
        if (!lock) throw new Error(`${name} was held`);
        if (i % 2) await lock.unlock().catch((error: unknown) => expect(error).toMatchObject({ reason: 'expired' }));
      }),
    );
    // Expiry is the subject: Redis drops the keys by its own clock, which nothing announces.
    await waitUntil(async () => (await keysLeft()).length === 0, 'every key expired');
  });

  it('draws fencing tokens that keep growing across releases and expiries of one name', async () => {
    const tokens: (number | undefined)[] = [];
    for (let i = 0; i < 200; i++) {
      const lock = await provider.lock(lockConfig('hot'));
      tokens.push(lock!.fencingToken);
      await lock!.unlock();
    }
    const short = await provider.lock(lockConfig('hot', 5));
    tokens.push(short!.fencingToken);
    await waitUntil(async () => (await client.exists(provider.lockKey('hot'))) === 0, 'the short lock expired');
    tokens.push((await provider.lock(lockConfig('hot')))!.fencingToken);
    assertStrictlyIncreasing(tokens);
    expect(Number.isSafeInteger(tokens.at(-1))).toBe(true);
  });

  it('counts on from a last token ahead of the clock, kept only until the clock passes it', async () => {
    // A job's token on the same name, or one drawn before the server's clock was set back: 200 ms ahead.
    const [seconds, micros] = await client.time();
    const ahead = Number(seconds) * 1_000_000 + Number(micros) + 200_000;
    const fenceKey = `${provider.lockKey('ahead')}:fence`;
    await client.set(fenceKey, String(ahead));
    const tokens: (number | undefined)[] = [];
    for (let i = 0; i < 2; i++) {
      const lock = await provider.lock(lockConfig('ahead'));
      tokens.push(lock!.fencingToken);
      // Operators read the same token in the lock's value.
      expect(readLockValue((await client.get(provider.lockKey('ahead')))!).fencingToken).toBe(lock!.fencingToken);
      await lock!.unlock();
    }
    expect(tokens).toEqual([ahead + 1, ahead + 2]);
    expect(await client.pttl(fenceKey)).toBeLessThanOrEqual(201);
    await waitUntil(async () => (await client.exists(fenceKey)) === 0, 'the clock passed the last token');
    tokens.push((await provider.lock(lockConfig('ahead')))!.fencingToken);
    assertStrictlyIncreasing(tokens);
  });
});
