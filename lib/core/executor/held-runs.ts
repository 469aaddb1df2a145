import type { ActiveLock } from './active-lock.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { heldLocks } from '../task/lock-context.js';
import type { RunEvents } from './run-events.js';
import { describeRun, type RunInProgress } from './run-health.js';
import type { RunInstrumentation } from './run-instrumentation.js';
import type { RunRelease } from './run-release.js';
import { settledWithin } from './settled-within.js';
import type { TaskResult } from '../task/task-result.js';

/** After shutdown's timeout, runs whose signal was aborted get this long to wind down. */
const SHUTDOWN_GRACE_MS = 1_000;

/**
 * The runs of one node that hold their lock. Each runs its task as the async context's innermost lock,
 * its lease kept by the {@link LeaseKeeper}, and is released when the task settles. The executor hands a
 * run over once its lock is taken; shutdown waits for the runs here.
 */
export class HeldRuns {
  /** Runs in progress, each with the promise that settles once its lock is released. */
  private readonly running = new Map<ActiveLock, Promise<unknown>>();

  constructor(
    private readonly keeper: LeaseKeeper,
    private readonly events: RunEvents,
    private readonly releases: RunRelease,
    private readonly instrumentation: RunInstrumentation | undefined,
  ) {}

  /** Runs `task` under the lock just taken; settles as the task did, once the lock is released. */
  start<T>(active: ActiveLock, task: () => T | Promise<T>): Promise<TaskResult<T>> {
    this.events.ofRun(active, () => ({ type: 'acquired', lockedUntil: active.lockedUntil }));
    const run = this.hold(active, task);
    this.running.set(active, run);
    return run;
  }

  /**
   * Waits up to `timeoutMs` for the runs in progress, then aborts the signal of those still going
   * (reason `shutdown`) and waits {@link SHUTDOWN_GRACE_MS} more.
   */
  async windDown(timeoutMs: number): Promise<void> {
    if (await settledWithin(this.running.values(), timeoutMs)) return;
    for (const active of this.running.keys()) active.markLost('shutdown');
    await settledWithin(this.running.values(), SHUTDOWN_GRACE_MS);
  }

  /** The runs in progress, for a health check. */
  describe(): RunInProgress[] {
    const now = performance.now();
    return [...this.running.keys()].map((active) => describeRun(active, now));
  }

  /**
   * Runs the task with its lock as the async context's innermost lock, then releases it. The run leaves
   * {@link running} in its `finally`, which always comes after an `await`, so after {@link start} put it there.
   */
  private async hold<T>(active: ActiveLock, task: () => T | Promise<T>): Promise<TaskResult<T>> {
    this.keeper.track(active);
    this.events.ofRun(active, () => ({ type: 'started' }));
    const startedAt = performance.now();
    const frame = { name: active.name, context: active, parent: heldLocks.getStore(), ended: false };
    let failed = true;
    let failure: unknown;
    try {
      // Without an instrumentation, `?.` makes no closure: the run costs what it did.
      const around = this.instrumentation?.around(active, () => heldLocks.run(frame, task));
      const result = await (around ?? heldLocks.run(frame, task));
      failed = false;
      this.events.ofRun(active, () => ({
        type: 'finished',
        durationMs: performance.now() - startedAt,
        outcome: 'succeeded',
        error: null,
      }));
      return { executed: true, result };
    } catch (error) {
      failure = error;
      this.events.ofRun(active, () => ({
        type: 'finished',
        durationMs: performance.now() - startedAt,
        outcome: 'failed',
        error,
      }));
      throw error;
    } finally {
      frame.ended = true;
      this.keeper.untrack(active);
      try {
        await this.releases.release(active, startedAt, failed, failure);
      } finally {
        this.running.delete(active);
      }
    }
  }
}
