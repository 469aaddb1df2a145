import type { Redis } from 'ioredis';
import type { Contender, ContenderSettings } from './contender.js';
import { compareAndDeleteContender } from './raw.js';

/**
 * The least a fenced acquire can ask of Redis 7.0: no native command takes a lock and draws a token
 * only when the lock was taken, so it is a script, here the smallest one.
 */
export const FENCED_SET =
  "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0";

/**
 * The floor of any lock that hands out fencing tokens in its acquire round trip: `EVALSHA` of
 * {@link FENCED_SET}, then the raw compare-and-delete, both by bare `evalsha` with preloaded scripts.
 * What separates it from the raw floor is the fence; what separates ours from it is our own code.
 */
export async function fencedFloorContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Promise<Contender> {
  const acquireSha = (await client.script('LOAD', FENCED_SET)) as string;
  return compareAndDeleteContender(client, keyPrefix, {
    label: 'fenced floor: EVALSHA SET NX PX + INCR, EVALSHA',
    send: (lockKey, token) => client.evalsha(acquireSha, 2, lockKey, `${lockKey}:fence`, token, ttlMs),
    taken: (reply) => reply !== 0,
  });
}
