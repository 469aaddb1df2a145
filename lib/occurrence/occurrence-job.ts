import type { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { RunLockConfiguration } from '../core/provider/lock-configuration.js';
import type { TaskResult } from '../core/task/task-result.js';
import { FOLLOWER_SKIP } from '../leader/follower-skip.js';
import { CronSchedule, type CronTimeLike } from './cron-schedule.js';
import { OccurrenceLock, OccurrenceRecovery, type OccurrenceStore } from './occurrence-claims.js';
import {
  assertRetryFits,
  clockSkewFor,
  maxAttemptsOf,
  recoveryGraceFor,
  type OccurrencePolicy,
} from './occurrence-policy.js';
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
 * that finds it running elsewhere watches it for a crash (`onCrash: 'rerun'`) and a failure (`retry`), a node
 * whose run failed watches it for its retry, and at start-up the most recent occurrence the whole cluster missed
 * is caught up (`catchUp`).
 */
export class OccurrenceJob {
  private readonly schedule: CronSchedule;
  private readonly maxClockSkew: number;

  /**
   * @throws SchedulerLockConfigurationError when `maxClockSkew` cannot tell one occurrence from the next, or
   * `retry.backoff` leaves no time for a retry before the next occurrence.
   */
  constructor(
    private readonly job: OccurrenceJobLock,
    private readonly policy: OccurrencePolicy,
    private readonly store: OccurrenceStore,
    cronTime: CronTimeLike,
    private readonly services: OccurrenceServices,
  ) {
    this.schedule = CronSchedule.of(cronTime);
    this.maxClockSkew = clockSkewFor(policy, this.schedule, job.source, String(cronTime.source));
    assertRetryFits(policy, this.schedule.minGap - this.maxClockSkew, job.source, String(cronTime.source));
  }

  /**
   * The cron callback: runs `handler` under the claim of the occurrence this tick belongs to. Not `async`:
   * the tick waits for Redis with the node's whole burst of ticks, and each promise layer it holds
   * meanwhile is memory per job.
   */
  tick(handler: () => unknown): Promise<void> {
    const occurrence = this.schedule.occurrenceAt(this.services.now());
    const { executor } = this.services;
    const { leader } = this.job;
    // A follower makes no store call: the leader's claim keeps the occurrence once across a handover.
    const claim =
      leader !== null && !this.services.leads(leader) ? FOLLOWER_SKIP : new OccurrenceLock(this.store, occurrence);
    return executor.run(handler, this.job.configuration, this.job, claim).then(
      (result) => this.watchIfRunningElsewhere(result, handler, occurrence),
      (error: unknown) => this.failed(error, handler, occurrence),
    );
  }

  /**
   * A tick that found its occurrence run by another node watches it: for a crash while it runs (`onCrash: 'rerun'`),
   * and for a failure (`retry`), which may have happened already.
   */
  private watchIfRunningElsewhere(result: TaskResult<unknown>, handler: () => unknown, occurrence: number): void {
    if (result.executed || result.reason !== 'already-ran') return;
    if (result.running) this.watchForCrash(handler, occurrence);
    this.watchForRetry(handler, occurrence);
  }

  /** A run of `occurrence` threw: reported as the scheduler does, and with `retry` watched for its next attempt. */
  private failed(error: unknown, handler: () => unknown, occurrence: number): undefined {
    this.watchForRetry(handler, occurrence);
    return this.services.handlerFailed(error);
  }

  private watchForCrash(handler: () => unknown, occurrence: number): void {
    const { recovery, providerName } = this.store;
    if (!recovery) return;
    const grace = recoveryGraceFor(this.policy, this.job.configuration.lease);
    const attempts = maxAttemptsOf(this.policy);
    const reRun = new OccurrenceRecovery(providerName, 'recoverOccurrence()', occurrence, (configuration) =>
      recovery.recoverOccurrence(configuration, new Date(occurrence), attempts, grace),
    );
    const attempt = () => this.run(handler, reRun, occurrence).then((result) => result !== undefined && held(result));
    this.services.watcher.watch(this.job.jobName, occurrence, attempt, this.pollEvery, this.deadline(occurrence));
  }

  private watchForRetry(handler: () => unknown, occurrence: number): void {
    const { retries, providerName } = this.store;
    const { retry } = this.policy;
    if (!retries || !retry) return;
    const attempts = maxAttemptsOf(this.policy);
    const next = new OccurrenceRecovery(providerName, 'retryOccurrence()', occurrence, (configuration) =>
      retries.retryOccurrence(configuration, new Date(occurrence), attempts, retry.backoff),
    );
    // A retry that threw resolves to `undefined`: the same watch waits for the retry after it.
    const attempt = () => this.run(handler, next, occurrence).then((result) => result === undefined || held(result));
    const pollEvery = Math.max(MIN_POLL_MS, Math.min(this.pollEvery, retry.backoff));
    this.services.watcher.watch(
      `${this.job.jobName}\0retry`,
      occurrence,
      attempt,
      pollEvery,
      this.deadline(occurrence),
    );
  }

  /** When a re-run or retry of `occurrence` may start no more: the next one is due on the fastest node's clock. */
  private deadline(occurrence: number): number {
    return this.schedule.nextAfter(occurrence) - this.maxClockSkew;
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
    await this.run(handler, new OccurrenceLock(this.store, missed, true), missed);
  }

  /** A catch-up run, re-run or retry, like a tick's run (kept inline in {@link tick}, the hot path). */
  private run(
    handler: () => unknown,
    acquisition: OccurrenceLock | OccurrenceRecovery,
    occurrence: number,
  ): Promise<TaskResult<unknown> | undefined> {
    const { executor } = this.services;
    return executor
      .run(handler, this.job.configuration, this.job, acquisition)
      .catch((error: unknown) => this.failed(error, handler, occurrence));
  }

  /** A third of the job's lease, so a dead node's occurrence is picked up soon after its lease runs out. */
  private get pollEvery(): number {
    const { lease } = this.job.configuration;
    return lease === undefined ? DEFAULT_POLL_MS : Math.max(MIN_POLL_MS, lease / 3);
  }
}

/** Whether a re-run or retry found the occurrence held (running, within its grace or backoff) or the store out. */
function held(result: TaskResult<unknown>): boolean {
  return result.executed === false && (result.reason === 'locked' || result.reason === 'provider-error');
}
