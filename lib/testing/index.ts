/**
 * `nest-scheduler-lock/testing`: test the locking of your jobs on the in-memory store, without Redis.
 *
 * @module nest-scheduler-lock/testing
 */

export { SchedulerLockTest, type ProviderOverrides, type TestNodeOptions } from './scheduler-lock-test.js';
export { TestLockProvider, type HeldTestLock, type HoldOptions } from './test-lock-store.js';
export { TestNode, type TickOptions } from './test-node.js';
export type { TickOutcome, TickRan, TickSkipped } from './tick-recorder.js';
export type { TestRun } from './test-runs.js';
