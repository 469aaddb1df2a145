import type { ActiveLock } from './active-lock.js';
import type { LockEvent, LockEvents } from '../task/lock-events.js';
import type { SkippedRun } from './lock-acquisition.js';
import type { SkipCounts, SkipReason } from '../task/task-result.js';

/** The fields every event of a run carries before its lock is taken. */
type EventBase = Pick<LockEvent, 'lockName' | 'jobName' | 'node' | 'at' | 'fencingToken'>;
/** An event of a held lock, less the fields {@link RunEvents.ofRun} fills in. */
type RunEvent = LockEvent extends infer E
  ? E extends LockEvent
    ? Omit<E, keyof EventBase | 'fencingToken'>
    : never
  : never;

/**
 * Builds one node's lock events. An event object is built only when someone subscribes: the hot path
 * of a node nobody watches allocates none.
 */
export class RunEvents {
  /**
   * Skips since the last {@link drainSkips}, by lock name and reason: counted always, and cheap. A follower's skip
   * is left out: the store's skip counts would then grow with the number of nodes, for ticks nobody had to run.
   */
  private skips = new Map<string, Map<SkipReason, number>>();

  constructor(
    private readonly events: LockEvents,
    private readonly node: string,
  ) {}

  attempt(lockName: string, jobName: string | null): void {
    if (this.events.observed) this.events.emit({ type: 'attempt', ...this.base(lockName, jobName) });
  }

  skipped(result: SkippedRun, lockName: string, jobName: string | null): SkippedRun {
    if (result.reason !== 'follower') this.count(result.reason, lockName);
    if (this.events.observed) {
      const error = result.reason === 'provider-error' ? result.error : null;
      this.events.emit({ type: 'skipped', reason: result.reason, error, ...this.base(lockName, jobName) });
    }
    return result;
  }

  private count(reason: SkipReason, lockName: string, skips = 1): void {
    let reasons = this.skips.get(lockName);
    if (!reasons) this.skips.set(lockName, (reasons = new Map()));
    reasons.set(reason, (reasons.get(reason) ?? 0) + skips);
  }

  /** The skips counted since the last call, by lock name and reason. */
  drainSkips(): Map<string, Map<SkipReason, number>> {
    const skips = this.skips;
    this.skips = new Map();
    return skips;
  }

  /** Counts again `skips` drained but not sent (the store failed): the next drain has them too. */
  putBackSkips(skips: SkipCounts): void {
    for (const [lockName, reasons] of skips) {
      for (const [reason, count] of reasons) this.count(reason, lockName, count);
    }
  }

  /** An event of `active`'s run, built by `build` only when someone listens. */
  ofRun(active: ActiveLock, build: () => RunEvent): void {
    if (!this.events.observed) return;
    const base = { ...this.base(active.name, active.jobName), fencingToken: active.fencingToken };
    this.events.emit({ ...build(), ...base } as LockEvent);
  }

  private base(lockName: string, jobName: string | null): EventBase {
    return { lockName, jobName, node: this.node, at: new Date(), fencingToken: null };
  }
}
