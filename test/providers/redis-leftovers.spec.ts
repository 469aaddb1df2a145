import type { Redis } from 'ioredis';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
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
    // A fence key outlives its release only while its token is ahead of the server's clock: at most ~1 ms.
    const left = await keysLeft();
    expect(left.filter(({ key, ttl }) => !key.endsWith(':fence') || ttl < 0 || ttl > 2)).toEqual([]);
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
});
