import type { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { RunLockConfiguration } from '../core/provider/lock-configuration.js';
import type { TaskResult } from '../core/task/task-result.js';
import { FOLLOWER_SKIP } from '../leader/follower-skip.js';
import { CronSchedule, type CronTimeLike } from './cron-schedule.js';
import { OccurrenceLock, OccurrenceRecovery, type OccurrenceStore } from './occurrence-claims.js';
import { clockSkewFor, recoveryGraceFor, type OccurrencePolicy } from './occurrence-policy.js';
import type { RecoveryWatcher } from './recovery-watcher.js';

/** The job an {@link OccurrenceJob} runs: its lock, its name and where it was declared. */
interface OccurrenceJobLock {
  readonly jobName: string;
  readonly configuration: RunLockConfiguration;
  /** Where the lock was declared, for error messages. */
  readonly source: string;
  /** The election whose leader alone runs the job's ticks; `null` when any node may. */
  readonly leader: string | null;
}

/** What an {@link OccurrenceJob} works with; one set per app. */
export interface OccurrenceServices {
  readonly executor: LockingTaskExecutor;
  readonly watcher: RecoveryWatcher;
  /** Reports a handler's error the way the scheduler does, and resolves to `undefined`. */
  readonly handlerFailed: (error: unknown) => undefined;
  /** Whether this node leads `election` now. */
  readonly leads: (election: string) => boolean;
  /** The node's clock, read once per tick to pick its occurrence. */
  readonly now: () => number;
}

/** How often a watched occurrence is checked without a lease to go by. */
const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 50;

/**
 * A locked cron job run once per scheduled occurrence: each tick claims its nominal fire time, a tick
 * that finds it running elsewhere watches it for a crash (`onCrash: 'rerun'`), and at start-up the most
 * recent occurrence the whole cluster missed is caught up (`catchUp`).
 */
export class OccurrenceJob {
  private readonly schedule: CronSchedule;
  private readonly maxClockSkew: number;

  /** @throws SchedulerLockConfigurationError when `maxClockSkew` cannot tell one occurrence from the next. */
  constructor(
    private readonly job: OccurrenceJobLock,
    private readonly policy: OccurrencePolicy,
    private readonly store: OccurrenceStore,
    cronTime: CronTimeLike,
    private readonly services: OccurrenceServices,
  ) {
    this.schedule = CronSchedule.of(cronTime);
    this.maxClockSkew = clockSkewFor(policy, this.schedule, job.source, String(cronTime.source));
  }

  /**
   * The cron callback: runs `handler` under the claim of the occurrence this tick belongs to. Not `async`:
   * the tick waits for Redis with the node's whole burst of ticks, and each promise layer it holds
   * meanwhile is memory per job.
   */
  tick(handler: () => unknown): Promise<void> {
    const occurrence = this.schedule.occurrenceAt(this.services.now());
    const { executor, handlerFailed } = this.services;
    const { leader } = this.job;
    // A follower makes no store call: the leader's claim keeps the occurrence once across a handover.
    const claim =
      leader !== null && !this.services.leads(leader) ? FOLLOWER_SKIP : new OccurrenceLock(this.store, occurrence);
    return executor
      .run(handler, this.job.configuration, this.job, claim)
      .then((result) => this.watchIfRunningElsewhere(result, handler, occurrence), handlerFailed);
  }

  /** A tick that found its occurrence running on another node watches it for a crash (`onCrash: 'rerun'`). */
  private watchIfRunningElsewhere(result: TaskResult<unknown>, handler: () => unknown, occurrence: number): void {
    const recovery = this.store.recovery;
    if (!recovery || result.executed || result.reason !== 'already-ran' || !result.running) return;
    // A re-run must not overlap the next occurrence, even on the node whose clock is furthest ahead.
    const deadline = this.schedule.nextAfter(occurrence) - this.maxClockSkew;
    const grace = recoveryGraceFor(this.policy, this.job.configuration.lease);
    const reRun = new OccurrenceRecovery(
      recovery,
      this.store.providerName,
      occurrence,
      this.policy.maxRecoveries + 1,
      grace,
    );
    this.services.watcher.watch(this.job.jobName, occurrence, () => this.run(handler, reRun), this.pollEvery, deadline);
  }

  /** Runs the latest occurrence within the catch-up window if the job has a record and no node ran it. */
  async catchUp(handler: () => unknown): Promise<void> {
    if (this.policy.catchUpWindow === undefined || !this.store.records) return;
    const missed = this.schedule.latestWithin(this.services.now(), this.policy.catchUpWindow);
    if (missed === undefined) return;
    try {
      const record = await this.store.records.readJobRecord(this.job.configuration.name);
      if (!record || record.occurrence.getTime() >= missed) return; // never ran, or the occurrence was not missed
    } catch {
      return; // Redis unreachable at start-up: the executor logs the next tick's failure
    }
    await this.run(handler, new OccurrenceLock(this.store, missed, true));
  }

  /** A catch-up run or a re-run, like a tick's run (kept inline in {@link tick}, the hot path). */
  private run(
    handler: () => unknown,
    acquisition: OccurrenceLock | OccurrenceRecovery,
  ): Promise<TaskResult<unknown> | undefined> {
    const { executor, handlerFailed } = this.services;
    return executor.run(handler, this.job.configuration, this.job, acquisition).catch(handlerFailed);
  }

  /** A third of the job's lease, so a dead node's occurrence is picked up soon after its lease runs out. */
  private get pollEvery(): number {
    const { lease } = this.job.configuration;
    return lease === undefined ? DEFAULT_POLL_MS : Math.max(MIN_POLL_MS, lease / 3);
  }
}
