import { afterEach, beforeEach, jest } from '@jest/globals';
import type { SchedulerLockLogger } from '../../lib/core/executor/logger.js';
import { LockEvents, LockingTaskExecutor } from '../../lib/index.js';
import { type LockProvider } from '../../lib/provider/index.js';
import type { InMemoryLockProvider } from '../../lib/providers/in-memory/in-memory-lock-provider.js';
import { TestLockProvider } from '../../lib/testing/index.js';

/** A node's executor on an in-memory store shared with other nodes, with what a spec inspects. */
export interface MemoryExecutor {
  /** The store of the simulated cluster: other nodes' providers, `expire()`, `lose()`. */
  readonly store: TestLockProvider;
  /** The node's own provider (`node-a`), unwrapped: its `operatorProvider().lockState()` shows a lock's holder. */
  readonly provider: InMemoryLockProvider;
  readonly events: LockEvents;
  readonly executor: LockingTaskExecutor;
}

/**
 * The executor of node `node-a` on a fresh in-memory store; `wrap` may put a test double around its provider.
 * Its log goes to `logger`, else to the console.
 */
export function memoryExecutor(
  wrap: (provider: InMemoryLockProvider) => LockProvider = (p) => p,
  logger?: SchedulerLockLogger,
): MemoryExecutor {
  const store = new TestLockProvider();
  const provider = store.provider('node-a');
  const events = new LockEvents();
  const executor = new LockingTaskExecutor(wrap(provider), { node: 'node-a', events, logger });
  return { store, provider, events, executor };
}

/**
 * Registers the hooks of a spec that runs each test on fake time with a fresh {@link memoryExecutor}, shut
 * down after it; returns the current test's executor.
 */
export function memoryExecutorOnFakeTime(): () => MemoryExecutor {
  let node: MemoryExecutor;
  beforeEach(() => {
    jest.useFakeTimers();
    node = memoryExecutor();
  });
  afterEach(async () => {
    await node.executor.shutdown(0);
    jest.useRealTimers();
  });
  return () => node;
}

/** The remaining time to live of the lock `name` in ms, or `undefined` when nobody holds it. */
export async function ttlOf(executor: MemoryExecutor, name: string): Promise<number | undefined> {
  return (await executor.provider.operatorProvider().lockState(name)).holder?.ttl;
}

/** Resolves with the signal's reason once it aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}
