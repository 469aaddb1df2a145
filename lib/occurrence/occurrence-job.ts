import type { LockingTaskExecutor } from '../core/locking-task-executor.js';
import type { LockProvider } from '../core/lock-provider.js';
import type { LockedJob } from '../locked-job.registry.js';
import type { LockedJobRunner } from '../locked-job.runner.js';
import { CronSchedule, type CronTimeLike } from './cron-schedule.js';
import { clockSkewFor, recoveryGraceFor, type OccurrencePolicy } from './occurrence-policy.js';
import type { RecoveryWatcher } from './recovery-watcher.js';

/** What an {@link OccurrenceJob} works with; one set per app. */
export interface OccurrenceServices {
  readonly runner: LockedJobRunner;
  readonly watcher: RecoveryWatcher;
  readonly executor: LockingTaskExecutor;
  readonly provider: LockProvider;
}

/**
 * A locked cron job run once per scheduled occurrence: each tick claims its nominal fire time, a tick
 * that finds it running elsewhere watches it for a crash (`onCrash: 'rerun'`), and at start-up the most
 * recent occurrence the whole cluster missed is caught up (`catchUp`).
 */
export class OccurrenceJob {
  private readonly schedule: CronSchedule;
  private readonly maxClockSkew: number;

  constructor(
    private readonly job: LockedJob,
    private readonly policy: OccurrencePolicy,
    cronTime: CronTimeLike,
    private readonly services: OccurrenceServices,
  ) {
    services.executor.assertSupportsOccurrences(job.source, policy.onCrash === 'rerun');
    this.schedule = new CronSchedule(cronTime);
    this.maxClockSkew = clockSkewFor(policy, this.schedule, job.source, String(cronTime.source));
  }

  async tick(handler: () => unknown): Promise<void> {
    const occurrence = this.schedule.occurrenceAt(Date.now());
    const result = await this.services.runner.run(this.job, handler, { occurrence });
    if (this.policy.onCrash === 'rerun' && result?.executed === false && result.reason === 'already-ran' && result.running) {
      // A re-run must not overlap the next occurrence, even on the node whose clock is furthest ahead.
      const deadline = this.schedule.nextAfter(occurrence) - this.maxClockSkew;
      const grace = recoveryGraceFor(this.policy, this.job.configuration.lease);
      this.services.watcher.watch(this.job, handler, { occurrence, recoverUpTo: this.policy.maxRecoveries + 1, recoveryGrace: grace }, deadline);
    }
  }

  /** Runs the latest occurrence within the catch-up window if the job has a record and no node ran it. */
  async catchUp(handler: () => unknown): Promise<void> {
    if (this.policy.catchUpWindow === undefined) return;
    const missed = this.schedule.latestWithin(Date.now(), this.policy.catchUpWindow);
    if (missed === undefined) return;
    try {
      const record = await this.services.provider.readJobRecord?.(this.job.configuration.name);
      if (!record || record.occurrence.getTime() >= missed) return; // never ran, or the occurrence was not missed
    } catch {
      return; // Redis unreachable at start-up: the executor logs the next tick's failure
    }
    await this.services.runner.run(this.job, handler, { occurrence: missed, catchUp: true });
  }
}
