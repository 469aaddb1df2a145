import type { Redis } from 'ioredis';
import { LockEvents, LockingTaskExecutor } from '../../lib/index.js';
import { type LockProvider } from '../../lib/provider/index.js';
import { useSharedRedisPrefix } from './redis-prefix.js';
import { setByHooks, type HookValues } from './set-by-hooks.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

/** A node's executor on the shared Redis, with what a spec inspects: set by hooks, so read inside tests only. */
export interface RedisExecutorFixture {
  readonly client: Redis;
  /** The running test's key prefix, the provider's. */
  readonly prefix: string;
  readonly provider: RedisLockProvider;
  readonly events: LockEvents;
  readonly executor: LockingTaskExecutor;
}

/**
 * Registers, in the calling describe block, the hooks of a node `node-a` whose executor locks on the shared
 * Redis: a fresh one for each test, on the test's own key prefix ({@link useSharedRedisPrefix}), shut down
 * after it before its keys are deleted. `wrap` may put a test double around the real provider (the
 * fixture's `provider` stays the real one, for inspecting keys).
 */
export function useRedisExecutor(
  label: string,
  wrap: (provider: RedisLockProvider) => LockProvider = (provider) => provider,
): RedisExecutorFixture {
  const node: HookValues<RedisExecutorFixture> = {};
  const redis = useSharedRedisPrefix(label, () => node.executor?.shutdown(0));
  beforeEach(() => {
    const provider = new RedisLockProvider(redis.client, { keyPrefix: redis.prefix, node: 'node-a' });
    const events = new LockEvents();
    const executor = new LockingTaskExecutor(wrap(provider), { node: 'node-a', events });
    Object.assign(node, {
      client: redis.client,
      prefix: redis.prefix,
      provider,
      events,
      executor,
    } satisfies RedisExecutorFixture);
  });
  return setByHooks(`useRedisExecutor('${label}')`, node, ['client', 'prefix', 'provider', 'events', 'executor']);
}
