import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { freeLockName, heldLockName, HOLD_ELSEWHERE_MS, unexpected, type Contender, type ContenderSettings } from './contender.js';
import { COMPARE_AND_DELETE } from './raw.js';

/**
 * The least a fenced acquire can ask of Redis 7.0: no native command takes a lock and draws a token
 * only when the lock was taken, so it is a script, here the smallest one.
 */
export const FENCED_SET = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0";

const LABEL = 'fenced floor: EVALSHA SET NX PX + INCR, EVALSHA';

/**
 * The floor of any lock that hands out fencing tokens in its acquire round trip: `EVALSHA` of
 * {@link FENCED_SET}, then the raw compare-and-delete, both by bare `evalsha` with preloaded scripts.
 * What separates it from the raw floor is the fence; what separates ours from it is our own code.
 */
export async function fencedFloorContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Promise<Contender> {
  const acquireSha = (await client.script('LOAD', FENCED_SET)) as string;
  const releaseSha = (await client.script('LOAD', COMPARE_AND_DELETE)) as string;
  const key = (name: string) => `${keyPrefix}:{${name}}`;
  const acquire = (lockKey: string, token: string) => client.evalsha(acquireSha, 2, lockKey, `${lockKey}:fence`, token, ttlMs) as Promise<number>;
  return {
    label: LABEL,
    client,
    async cycle(worker, whileHeld) {
      const lockKey = key(freeLockName(worker));
      const token = randomUUID();
      if ((await acquire(lockKey, token)) === 0) throw unexpected(LABEL, 'a free lock was not taken');
      whileHeld?.();
      if ((await client.evalsha(releaseSha, 1, lockKey, token)) !== 1) throw unexpected(LABEL, 'a held lock was not released');
    },
    async holdElsewhere(worker, holder) {
      await holder.set(key(heldLockName(worker)), 'holder', 'PX', HOLD_ELSEWHERE_MS, 'NX');
    },
    async attemptHeld(worker) {
      if ((await acquire(key(heldLockName(worker)), randomUUID())) !== 0) throw unexpected(LABEL, 'a lock held elsewhere was taken');
    },
  };
}
