import type { ActiveLock } from './active-lock.js';
import type { FaultLog } from './fault-log.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { LockNotHeldError, type RunOutcome, type RunReport } from '../provider/lock-provider.js';
import type { SchedulerLockLogger } from './logger.js';
import { OutcomeRetries } from './outcome-retries.js';
import type { RunEvents } from './run-events.js';
import { describeError, jobLabel } from '../provider/message-text.js';

/**
 * Releases a lock once its run has ended. A failure is emitted, never thrown over the task's outcome, and
 * logged unless a store outage covers it: then the outage's one line tells it, not a line per run (a node
 * whose thousand runs end during an outage would log a thousand). The release of an occurrence's run records
 * how it ended; when the store does not answer, that record is retried until it does (see
 * {@link OutcomeRetries}), the lease kept meanwhile.
 */
export class RunRelease {
  private readonly unrecorded = new OutcomeRetries();

  constructor(
    private readonly keeper: LeaseKeeper,
    private readonly events: RunEvents,
    private readonly logger: SchedulerLockLogger,
    private readonly faults: FaultLog,
  ) {}

  /**
   * `failure`: what the task threw, `undefined` when it succeeded. Not `async`: a node's runs that end
   * together wait for Redis together, and each promise layer a run holds meanwhile is memory per job.
   */
  release(active: ActiveLock, startedAt: number, failed: boolean, failure?: unknown): Promise<void> {
    const { jobName, lock } = active;
    const outcome: RunOutcome = failed ? 'failed' : 'succeeded';
    // A job's run goes into its history, and an occurrence's into its job record, in the release's round trip.
    const report = jobName === undefined ? undefined : runReport(active, startedAt, failed ? failure : undefined);
    const records = lock.finish !== undefined && (active.recordsOutcome || report !== undefined);
    const finish = records ? () => lock.finish!(outcome, report) : undefined;
    const sentAt = performance.now();
    let releasing: Promise<void>;
    try {
      releasing = finish ? finish() : lock.unlock();
    } catch (error) {
      releasing = Promise.reject(error); // a provider's lock that threw instead of rejecting
    }
    return releasing.then(
      () => this.events.ofRun(active, () => ({ type: 'released', heldForMs: performance.now() - startedAt })),
      (error: unknown) => this.releaseFailed(active, error, outcome, finish, { startedAt, sentAt }),
    );
  }

  /** Logs and emits a release that failed; an occurrence's outcome (`finish`) is retried until the store answers. */
  private releaseFailed(
    active: ActiveLock,
    error: unknown,
    outcome: RunOutcome,
    finish: (() => Promise<void>) | undefined,
    { startedAt, sentAt }: { startedAt: number; sentAt: number },
  ): void {
    const { name, jobName } = active;
    if (error instanceof LockNotHeldError) {
      this.logger.warn(
        `Lock "${name}"${jobLabel(jobName)} was lost before its run ended (${error.reason}); ` +
          'another node may have run the job meanwhile',
      );
      this.events.ofRun(active, () => ({ type: 'release-failed', reason: error.reason, error }));
    } else if (finish && active.recordsOutcome) {
      const covered = this.faults.storeFailed(
        `release:${name}`,
        `Could not record how the run of lock "${name}"${jobLabel(jobName)} ended (${outcome}): ` +
          `${describeError(error)}; ` +
          'retrying until the store answers, keeping its lease meanwhile',
        error,
        sentAt,
      );
      this.events.ofRun(active, () => ({ type: 'release-failed', reason: 'provider-error', error }));
      this.recordLater(active, finish, outcome, startedAt, covered);
    } else {
      this.faults.storeFailed(
        `release:${name}`,
        `Could not release lock "${name}"${jobLabel(jobName)}; it expires on its own: ${describeError(error)}`,
        error,
        sentAt,
      );
      this.events.ofRun(active, () => ({ type: 'release-failed', reason: 'provider-error', error }));
    }
  }

  /** Whether `active`'s run has ended and its outcome is still being recorded. */
  pending(active: ActiveLock): boolean {
    return this.unrecorded.has(active);
  }

  /** Stops retrying; warns about the outcomes left unrecorded. */
  stop(): void {
    const unrecorded = this.unrecorded.stop();
    if (unrecorded > 0) {
      this.logger.warn(
        `Shutting down with ${unrecorded} run outcome(s) not recorded (the store unreachable); with onCrash 'rerun' ` +
          'another node re-runs those occurrences once their recovery grace has passed',
      );
    }
  }

  /**
   * The keeper renews the lease while the outcome waits, so that other nodes do not see the lock gone. Once
   * recorded, the run says so in a line of its own only if its failure had one (`inOutage`: the outage's
   * lines told it).
   */
  private recordLater(
    active: ActiveLock,
    finish: () => Promise<void>,
    outcome: RunOutcome,
    startedAt: number,
    inOutage: boolean,
  ): void {
    const { name, jobName } = active;
    this.keeper.track(active);
    const isStoreError = (error: unknown) => !(error instanceof LockNotHeldError);
    this.unrecorded.retry(active, finish, isStoreError, (error) => {
      this.keeper.untrack(active);
      if (error === undefined) {
        const recorded = `Recorded how the run of lock "${name}"${jobLabel(jobName)} ended (${outcome})`;
        if (!inOutage) this.logger.log(`${recorded} once the store answered again`);
        this.events.ofRun(active, () => ({ type: 'released', heldForMs: performance.now() - startedAt }));
        return;
      }
      const reason = (error as LockNotHeldError).reason;
      this.logger.warn(
        `Lock "${name}"${jobLabel(jobName)} was gone (${reason}) when the store answered again; its run's outcome ` +
          `(${outcome}) was recorded unless another node had taken the occurrence over`,
      );
      this.events.ofRun(active, () => ({ type: 'release-failed', reason, error }));
    });
  }
}

/** The longest error message a history entry keeps. */
const MAX_ERROR_LENGTH = 500;

/** What the history needs of a run that ended now, beyond what the store knows. */
function runReport(active: ActiveLock, startedAt: number, failure: unknown): RunReport {
  const durationMs = performance.now() - startedAt;
  const error = failure === undefined ? undefined : describeError(failure).slice(0, MAX_ERROR_LENGTH);
  return {
    occurrence: active.occurrence ?? undefined,
    startedAt: new Date(Math.round(Date.now() - durationMs)),
    durationMs: Math.round(durationMs),
    error,
    attempt: active.recovery?.attempt ?? 1,
    manual: active.manual,
  };
}
