import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { freeLockName, heldLockName, HOLD_ELSEWHERE_MS, unexpected, type Contender, type ContenderSettings } from './contender.js';

/** The smallest correct release: delete only if the token is still ours. */
export const COMPARE_AND_DELETE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

const LABEL = 'raw SET NX PX + EVALSHA';

/** The floor: `SET key token NX PX ttl` to take, `EVALSHA` compare-and-delete to release; two round trips. */
export async function rawContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Promise<Contender> {
  const releaseSha = (await client.script('LOAD', COMPARE_AND_DELETE)) as string;
  const key = (name: string) => `${keyPrefix}:${name}`;
  return {
    label: LABEL,
    client,
    async cycle(worker, whileHeld) {
      const lockKey = key(freeLockName(worker));
      const token = randomUUID();
      if ((await client.set(lockKey, token, 'PX', ttlMs, 'NX')) !== 'OK') throw unexpected(LABEL, 'a free lock was not taken');
      whileHeld?.();
      if ((await client.evalsha(releaseSha, 1, lockKey, token)) !== 1) throw unexpected(LABEL, 'a held lock was not released');
    },
    async holdElsewhere(worker, holder) {
      await holder.set(key(heldLockName(worker)), 'holder', 'PX', HOLD_ELSEWHERE_MS, 'NX');
    },
    async attemptHeld(worker) {
      if ((await client.set(key(heldLockName(worker)), randomUUID(), 'PX', ttlMs, 'NX')) !== null) {
        throw unexpected(LABEL, 'a lock held elsewhere was taken');
      }
    },
  };
}
