import { AsyncLocalStorage } from 'node:async_hooks';
import type { Duration } from '../provider/duration.js';

/**
 * The lock of the run in progress, readable from any depth of async calls inside a locked job or
 * {@link LockingTaskExecutor.executeWithLock} task.
 */
export interface LockContext {
  /** The lock's name. */
  readonly name: string;
  /** Who holds it (this node's `node`). */
  readonly node: string;
  /** When this node asked for the lock (this node's clock). */
  readonly lockedAt: Date;
  /** Until when the lock is held at least, as this node knows it; moves with `extend`. */
  readonly lockedUntil: Date;
  /** Strictly greater than every earlier token of this lock name (when the provider fences). */
  readonly fencingToken: number | null;
  /** Aborts, with a {@link LockLostError} as its reason, when the lock is lost. */
  readonly signal: AbortSignal;
  /** For a once-per-occurrence cron job: the nominal fire time this run belongs to. */
  readonly occurrence: Date | null;
  /** `true` for the catch-up run of an occurrence the whole cluster missed. */
  readonly catchUp: boolean;
  /**
   * For a re-run of an occurrence whose node died (`onCrash: 'rerun'`), or a retry of one that failed (`retry`):
   * which attempt this is (2 for the first re-run or retry) and who ran the previous one.
   */
  readonly recovery: { readonly attempt: number; readonly previousNode: string } | null;
  /**
   * Moves the lock's expiry to `lockAtMostFor` from now (ShedLock's `LockExtender.extendActiveLock`).
   * `lockAtLeastFor` counts from now too; left out, the run keeps the minimum hold it still had.
   * @throws LockExtensionError when the lock can no longer be extended.
   */
  extend(lockAtMostFor: Duration, lockAtLeastFor?: Duration): Promise<void>;
}

/** An entry of the per-async-context stack of held locks. */
interface HeldLockFrame {
  readonly name: string;
  readonly context: LockContext;
  readonly parent: HeldLockFrame | undefined;
  /**
   * Set when the run ends. A callback created inside a run (a timer, a listener) keeps its async
   * context after the lock is released; an ended frame no longer counts as holding the lock.
   */
  ended: boolean;
}

/** @internal The locks held by the current async context, innermost first. */
export const heldLocks = new AsyncLocalStorage<HeldLockFrame>();

/** The innermost lock held by the current async context, or `undefined` outside a locked run. */
export function currentLock(): LockContext | undefined {
  for (let frame = heldLocks.getStore(); frame; frame = frame.parent) {
    if (!frame.ended) return frame.context;
  }
  return undefined;
}

/** @internal Whether the current async context already holds `name` (reentrancy). */
export function holdsLock(name: string): boolean {
  for (let frame = heldLocks.getStore(); frame; frame = frame.parent) {
    if (frame.name === name && !frame.ended) return true;
  }
  return false;
}
