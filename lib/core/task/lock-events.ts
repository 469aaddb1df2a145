import { Observable, Subject } from 'rxjs';
import type { SkipReason } from './task-result.js';
import type { LockLostReason } from '../provider/errors.js';

interface LockEventBase {
  /** The lock's name. */
  readonly lockName: string;
  /** The scheduler job's registry name when the lock belongs to a job, or `null`. */
  readonly jobName: string | null;
  /** Who takes or holds the lock (this node). */
  readonly node: string;
  /** When the event happened, by this node's clock. */
  readonly at: Date;
  /**
   * From `acquired` on: the acquisition's fencing token, which tells one run's events from another's; `null`
   * before, or when the provider does not fence.
   */
  readonly fencingToken: number | null;
}

/** What an operator can do to a job, cluster-wide (`SchedulerLockAdmin`), as its `operator` event says. */
export type OperatorAction = 'pause' | 'resume' | 'trigger' | 'unlock';

/** What the lock layer did: one event per step of a locked run, plus faults. */
export type LockEvent =
  | (LockEventBase & { readonly type: 'attempt' })
  | (LockEventBase & {
      /** An operator action, emitted on the node that performed it (`SchedulerLockAdmin`). */
      readonly type: 'operator';
      readonly action: OperatorAction;
      readonly actor: string;
      readonly reason: string | null;
    })
  | (LockEventBase & { readonly type: 'acquired'; readonly lockedUntil: Date })
  | (LockEventBase & {
      readonly type: 'skipped';
      readonly reason: SkipReason;
      /** The store's error for `provider-error`; `null` otherwise. */
      readonly error: unknown;
    })
  | (LockEventBase & { readonly type: 'started' })
  | (LockEventBase & {
      readonly type: 'finished';
      readonly durationMs: number;
      readonly outcome: 'succeeded' | 'failed';
      /** What the task threw when it failed; `null` when it succeeded. */
      readonly error: unknown;
    })
  | (LockEventBase & { readonly type: 'released'; readonly heldForMs: number })
  | (LockEventBase & { readonly type: 'extended'; readonly lockedUntil: Date })
  | (LockEventBase & { readonly type: 'lost'; readonly reason: LockLostReason })
  | (LockEventBase & {
      /**
       * Occurrences of the job that no node ran, oldest first: emitted once for the cluster, on the node that
       * claimed their report, however many nodes watch the job.
       */
      readonly type: 'missed';
      readonly occurrences: readonly Date[];
    })
  | (LockEventBase & {
      /** The job's last runs failed, `failuresInARow` of them: emitted once for the cluster, per streak. */
      readonly type: 'failing';
      readonly failuresInARow: number;
    })
  | (LockEventBase & {
      /** The job is on time again after it was late, missed an occurrence or was failing. */
      readonly type: 'healthy';
    })
  | (LockEventBase & {
      readonly type: 'release-failed';
      readonly reason: 'expired' | 'not-owner' | 'provider-error';
      readonly error: unknown;
    });

/** The `type` of a {@link LockEvent}, for filtering a stream by kind. */
export type LockEventType = LockEvent['type'];

/** Distributes {@link LockEvent}s; injectable in a Nest app, constructible on its own. */
export class LockEvents {
  private readonly subject = new Subject<LockEvent>();

  /** Every lock event of this node. Subscribers run synchronously; keep them cheap. */
  readonly events$: Observable<LockEvent> = this.subject.asObservable();

  /** Whether anyone listens, so the hot path builds no event object for nobody. */
  get observed(): boolean {
    return this.subject.observed;
  }

  /** @internal */
  emit(event: LockEvent): void {
    try {
      this.subject.next(event);
    } catch {
      // A subscriber's own failure is rxjs's to report; it must never reach the job.
    }
  }
}
