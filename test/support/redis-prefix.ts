import type { Redis } from 'ioredis';
import { setByHooks, type HookValues } from './set-by-hooks.js';
import { deleteKeys, sharedRedis, uniquePrefix } from './shared-redis.js';

/** What {@link useSharedRedisPrefix} gives a describe block: set by its hooks, so read inside tests and hooks only. */
export interface SharedRedisPrefix {
  /** The block's one client to the shared Redis, connected before its first test. */
  readonly client: Redis;
  /** The running test's own key prefix. */
  readonly prefix: string;
}

/**
 * Registers, in the describe block (or spec file) that calls it, the hooks of tests that keep their keys in
 * the shared Redis: one client for the block, a fresh key prefix for each test, and after each test first
 * `teardown`, then every key under the test's prefix deleted (SCAN, never FLUSH).
 *
 * The block's own `beforeEach` hooks, declared after this call, run after the prefix is set; its own
 * `afterEach` hooks run after the keys are deleted. So whatever may still write under the prefix (apps,
 * executors, lease renewals) is stopped in `teardown`, or its keys would outlive the test.
 */
export function useSharedRedisPrefix(label: string, teardown?: () => unknown): SharedRedisPrefix {
  const values: HookValues<SharedRedisPrefix> = {};
  beforeAll(async () => {
    values.client = sharedRedis();
    // Connected before the first test, so nothing a test starts races the connection.
    await values.client.ping();
  });
  beforeEach(() => {
    values.prefix = uniquePrefix(label);
  });
  afterEach(async () => {
    try {
      await teardown?.();
    } finally {
      await deleteKeys(values.client!, values.prefix!);
    }
  });
  afterAll(() => values.client?.quit());
  return setByHooks(`useSharedRedisPrefix('${label}')`, values, ['client', 'prefix']);
}
