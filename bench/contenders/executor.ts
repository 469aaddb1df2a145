import type { Redis } from 'ioredis';
import { LockingTaskExecutor } from 'nest-scheduler-lock';
import { holdWithProvider } from './ours.js';
import { freeLockName, heldLockName, unexpected, type Contender, type ContenderSettings } from './contender.js';
import { RedisLockProvider } from 'nest-scheduler-lock/redis';

const LABEL = 'ours executeWithLock';

const nothing = (): undefined => undefined;

/**
 * `LockingTaskExecutor.executeWithLock(() => undefined, { name })` with no event subscribers: the
 * provider's round trips plus the executor's bookkeeping (validation, reentrancy check, AsyncLocalStorage).
 */
export function executorContender(client: Redis, { keyPrefix, ttlMs }: ContenderSettings): Contender {
  const executor = new LockingTaskExecutor(new RedisLockProvider(client, { keyPrefix, node: 'bench' }), {
    node: 'bench',
    defaults: { lockAtMostFor: ttlMs, lockAtLeastFor: 0 },
  });
  return {
    label: LABEL,
    client,
    async cycle(worker, whileHeld) {
      const outcome = await executor.executeWithLock(whileHeld ?? nothing, { name: freeLockName(worker) });
      if (!outcome.executed) throw unexpected(LABEL, `a free lock was not taken (${outcome.reason})`);
    },
    holdElsewhere: (worker, holder) => holdWithProvider(holder, keyPrefix, heldLockName(worker), LABEL),
    async attemptHeld(worker) {
      const outcome = await executor.executeWithLock(nothing, { name: heldLockName(worker) });
      if (outcome.executed || outcome.reason !== 'locked')
        throw unexpected(LABEL, 'a lock held elsewhere was not skipped as locked');
    },
  };
}
