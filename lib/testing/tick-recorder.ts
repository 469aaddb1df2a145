import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockLostReason } from '../core/provider/errors.js';
import type { LockEvent, LockEvents } from '../core/task/lock-events.js';
import type { InstrumentedRun, RunInstrumentation } from '../core/executor/run-instrumentation.js';
import type { SkipReason } from '../core/task/task-result.js';

/** A tick that took its lock and ran the handler. */
export interface TickRan {
  readonly status: 'ran';
  readonly jobName: string;
  /** The node that ran it. */
  readonly node: string;
  /** For a once-per-occurrence cron job: the fire time the tick claimed. */
  readonly occurrence: Date | null;
  readonly fencingToken: number | null;
  /** Whether the handler threw (or rejected): then `error` holds what it threw. */
  readonly failed: boolean;
  /**
   * What the handler resolved to: a decorated `@Cron`, `@Interval` or `@Timeout` method's return value, awaited
   * (taken from inside `@nestjs/schedule`'s own wrapper of the method, which keeps none), or a runtime job's.
   */
  readonly result: unknown;
  readonly error: unknown;
  /** Why the run's lock was lost while it ran (its signal aborted), or found gone at its release; or `null`. */
  readonly lost: LockLostReason | null;
}

/** A tick that did not run the handler, and why (`locked`, `already-ran`, `paused`, `provider-error`, `shutdown`). */
export interface TickSkipped {
  readonly status: 'skipped';
  readonly jobName: string;
  readonly node: string;
  readonly reason: SkipReason;
  /** The store's error for `provider-error`; `null` otherwise. */
  readonly error: unknown;
}

/** What one tick of a locked job did. */
export type TickOutcome = TickRan | TickSkipped;

/** What the recorder learns of the tick the kit fired, in that tick's async context. */
interface TickProbe {
  readonly jobName: string;
  readonly node: string;
  attempted: boolean;
  run?: { occurrence: Date | null; fencingToken: number | null; signal: AbortSignal };
  handled?: { failed: boolean; result: unknown; error: unknown };
  settle(outcome: TickOutcome): void;
}

const probes = new AsyncLocalStorage<TickProbe>();

/**
 * The kit's {@link RunInstrumentation}: it tells the outcome of a tick the kit fires (its skip, or its handler's
 * result or error), from inside that tick's async context. Around every other run it only calls the app's own
 * instrumentation, if any, so the executor runs as it does in production.
 */
export class TickRecorder implements RunInstrumentation {
  readonly renewalRoundTrip?: RunInstrumentation['renewalRoundTrip'];

  constructor(private readonly inner: RunInstrumentation | undefined) {
    // Only when the app's instrumentation times renewals: otherwise the executor does not wrap them either.
    if (inner?.renewalRoundTrip) this.renewalRoundTrip = inner.renewalRoundTrip.bind(inner);
  }

  healthChecked(jobs: Parameters<NonNullable<RunInstrumentation['healthChecked']>>[0]): void {
    this.inner?.healthChecked?.(jobs);
  }

  attach(events: LockEvents): void {
    this.inner?.attach?.(events);
    events.events$.subscribe((event) => this.observe(event));
  }

  async around<T>(run: InstrumentedRun, task: () => T | Promise<T>): Promise<T> {
    const call = this.inner ? () => this.inner!.around(run, task) : task;
    const probe = probes.getStore();
    if (!probe || probe.run || run.jobName !== probe.jobName) return call();
    probe.run = { occurrence: run.occurrence, fencingToken: run.fencingToken, signal: run.signal };
    try {
      const result = await call();
      probe.handled = { failed: false, result, error: null };
      return result;
    } catch (error) {
      probe.handled = { failed: true, result: null, error };
      throw error;
    }
  }

  /**
   * Calls `fire` (the scheduler's own tick of `jobName`) and resolves once that tick has been skipped or its run
   * released its lock.
   *
   * @throws Error when `fire` did not attempt the job's lock.
   */
  tick(jobName: string, node: string, fire: () => unknown): Promise<TickOutcome> {
    return new Promise<TickOutcome>((resolve, reject) => {
      const probe: TickProbe = { jobName, node, attempted: false, settle: resolve };
      probes.run(probe, () => {
        try {
          fire();
        } catch (error) {
          reject(error);
        }
      });
      if (!probe.attempted) {
        reject(new Error(`The tick of job "${jobName}" on ${node} did not try its lock (cron's waitForCompletion?)`));
      }
    });
  }

  private observe(event: LockEvent): void {
    const probe = probes.getStore();
    if (!probe || event.jobName !== probe.jobName) return;
    const { jobName, node } = probe;
    if (event.type === 'attempt') probe.attempted = true;
    else if (event.type === 'skipped') {
      probe.attempted = true; // a node shutting down skips before it attempts
      probe.settle({ status: 'skipped', jobName, node, reason: event.reason, error: event.error });
    } else if ((event.type === 'released' || event.type === 'release-failed') && probe.run) {
      const { occurrence, fencingToken, signal } = probe.run;
      const aborted = signal.aborted ? (signal.reason as { reason?: LockLostReason }).reason : undefined;
      const lost =
        aborted ?? (event.type === 'release-failed' && event.reason !== 'provider-error' ? event.reason : null);
      const handled = probe.handled ?? { failed: false, result: null, error: null };
      probe.settle({ status: 'ran', jobName, node, occurrence, fencingToken, lost, ...handled });
    }
  }
}
