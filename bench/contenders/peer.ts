import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import {
  freeLockName,
  heldLockName,
  HOLD_ELSEWHERE_MS,
  unexpected,
  type Contender,
  type ContenderSettings,
} from './contender.js';

const LABEL = 'peer redis-semaphore Mutex';

/**
 * redis-semaphore's `Mutex`, one per cycle as an app creates one per run, default refresh timer on.
 * A failed `tryAcquire` sleeps `retryInterval` before it returns false, even with one attempt
 * allowed; 1 ms is the shortest sleep a timer gives, so its skip cost is at its best here.
 */
export function peerContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Contender {
  const key = (name: string) => `${keyPrefix}:${name}`;
  const options = { lockTimeout: ttlMs, acquireAttemptsLimit: 1, retryInterval: 1 };
  return {
    label: LABEL,
    client,
    async cycle(worker, whileHeld) {
      const mutex = new Mutex(client, key(freeLockName(worker)), options);
      await mutex.acquire();
      whileHeld?.();
      await mutex.release();
    },
    async holdElsewhere(worker, holder) {
      const mutex = new Mutex(holder, key(heldLockName(worker)), {
        lockTimeout: HOLD_ELSEWHERE_MS,
        refreshInterval: 0,
      });
      if (!(await mutex.tryAcquire())) throw unexpected(LABEL, 'the holder could not take its lock');
    },
    async attemptHeld(worker) {
      if (await new Mutex(client, key(heldLockName(worker)), options).tryAcquire()) {
        throw unexpected(LABEL, 'a lock held elsewhere was taken');
      }
    },
  };
}

/** redis-semaphore stores a mutex under `mutex:<key>`, outside the contender's key prefix. */
export function peerKeyPrefix(keyPrefix: string): string {
  return `mutex:${keyPrefix}`;
}
