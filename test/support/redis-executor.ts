import type { Redis } from 'ioredis';
import { LockEvents, LockingTaskExecutor, RedisLockProvider, type LockProvider } from '../../lib/index.js';
import { deleteKeys, sharedRedis, uniquePrefix } from './shared-redis.js';

/** A node's executor on the shared Redis, with what a spec inspects. */
export interface RedisExecutorFixture {
  readonly client: Redis;
  readonly provider: RedisLockProvider;
  readonly events: LockEvents;
  readonly executor: LockingTaskExecutor;
  /** Shuts the executor down, deletes the fixture's keys and closes its client. */
  dispose(): Promise<void>;
}

/**
 * An executor on its own key prefix of the shared Redis. `wrap` may put a test double around the real
 * provider (the fixture's `provider` stays the real one, for inspecting keys).
 */
export function redisExecutor(label: string, wrap: (provider: RedisLockProvider) => LockProvider = (provider) => provider): RedisExecutorFixture {
  const client = sharedRedis();
  const prefix = uniquePrefix(label);
  const provider = new RedisLockProvider(client, { keyPrefix: prefix, lockedBy: 'node-a' });
  const events = new LockEvents();
  const executor = new LockingTaskExecutor(wrap(provider), { lockedBy: 'node-a', events });
  return {
    client,
    provider,
    events,
    executor,
    async dispose() {
      await executor.shutdown(0);
      await deleteKeys(client, prefix);
      client.disconnect();
    },
  };
}

/** Resolves with the signal's reason once it aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}
