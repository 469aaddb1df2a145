/** Why a task did not run. */
export type SkipReason = 'locked' | 'store-error' | 'shutdown';

/** The outcome of {@link LockingTaskExecutor.executeWithLock}. */
export type TaskResult<T> =
  | { readonly executed: true; readonly result: T }
  | { readonly executed: false; readonly reason: SkipReason; readonly error?: unknown };
