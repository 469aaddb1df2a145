/**
 * Why a task did not run: the lock is held elsewhere, the store failed, the app is shutting down, or
 * (once-per-occurrence cron jobs) the occurrence was already run or is running, or an operator paused the
 * job (`paused`), or the job runs on an election's leader and this node follows (`follower`).
 */
export type SkipReason = 'locked' | 'provider-error' | 'shutdown' | 'already-ran' | 'paused' | 'follower';

/** Skips a node counted, as its heartbeat sends them: lock name → reason → count. */
export type SkipCounts = ReadonlyMap<string, ReadonlyMap<SkipReason, number>>;

/** The outcome of {@link LockingTaskExecutor.executeWithLock}. */
export type TaskResult<T> =
  | { readonly executed: true; readonly result: T }
  | { readonly executed: false; readonly reason: Exclude<SkipReason, 'already-ran' | 'provider-error'> }
  | { readonly executed: false; readonly reason: 'provider-error'; readonly error: unknown }
  | {
      readonly executed: false;
      readonly reason: 'already-ran';
      /** that occurrence is still running */ readonly running: boolean;
    };
