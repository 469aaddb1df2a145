import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  freeLockName,
  heldLockName,
  HOLD_ELSEWHERE_MS,
  unexpected,
  type Contender,
  type ContenderSettings,
} from './contender.js';

/** The smallest correct release: delete only if the token is still ours. */
export const COMPARE_AND_DELETE =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

const LABEL = 'raw SET NX PX + EVALSHA';

/** How a {@link compareAndDeleteContender} asks for a lock, and how it reads the answer. */
export interface TakeLock {
  readonly label: string;
  /** Sends the one command that takes `lockKey` for `token` if it is free. */
  send(lockKey: string, token: string): Promise<unknown>;
  /** Whether the reply of {@link send} says the lock was taken. Kept apart so no promise layer is added. */
  taken(reply: unknown): boolean;
}

/**
 * A hand-written lock: a random token per attempt, `take` to acquire, the raw `EVALSHA`
 * compare-and-delete to release, every reply checked.
 */
export async function compareAndDeleteContender(client: Redis, keyPrefix: string, take: TakeLock): Promise<Contender> {
  const releaseSha = (await client.script('LOAD', COMPARE_AND_DELETE)) as string;
  const key = (name: string) => `${keyPrefix}:${name}`;
  return {
    label: take.label,
    client,
    async cycle(worker, whileHeld) {
      const lockKey = key(freeLockName(worker));
      const token = randomUUID();
      if (!take.taken(await take.send(lockKey, token))) throw unexpected(take.label, 'a free lock was not taken');
      whileHeld?.();
      if ((await client.evalsha(releaseSha, 1, lockKey, token)) !== 1)
        throw unexpected(take.label, 'a held lock was not released');
    },
    async holdElsewhere(worker, holder) {
      await holder.set(key(heldLockName(worker)), 'holder', 'PX', HOLD_ELSEWHERE_MS, 'NX');
    },
    async attemptHeld(worker) {
      if (take.taken(await take.send(key(heldLockName(worker)), randomUUID())))
        throw unexpected(take.label, 'a lock held elsewhere was taken');
    },
  };
}

/** The floor: `SET key token NX PX ttl` to take, `EVALSHA` compare-and-delete to release; two round trips. */
export function rawContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Promise<Contender> {
  return compareAndDeleteContender(client, keyPrefix, {
    label: LABEL,
    send: (lockKey, token) => client.set(lockKey, token, 'PX', ttlMs, 'NX'),
    taken: (reply) => reply === 'OK',
  });
}
