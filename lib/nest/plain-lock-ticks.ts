import { Inject, Injectable } from '@nestjs/common';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { FOLLOWER_SKIP } from '../leader/follower-skip.js';
import { JobLock } from '../operators/job-lock.js';
import { canLockJobs } from '../operators/operator-abilities.js';
import { logHandlerError } from './handler-errors.js';
import { LeaderElections } from './leader-elections.js';
import type { LockedJob } from './locked-job.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * Runs a tick of a job with a plain lock (an interval, a timeout, a cron job without once-per-occurrence locking)
 * through the executor, a handler's error logged. Shared by the registry proxy and the orchestrator's mounts.
 */
@Injectable()
export class PlainLockTicks {
  /** How a plain tick takes its lock: pausable, where the provider can pause jobs; else its `lock()`. */
  private readonly jobLock: JobLock | undefined;

  constructor(
    private readonly executor: LockingTaskExecutor,
    @Inject(SCHEDULER_LOCK_SETTINGS) settings: SchedulerLockSettings,
    private readonly elections: LeaderElections,
  ) {
    this.jobLock = canLockJobs(settings.provider) ? new JobLock(settings.provider) : undefined;
  }

  /** A tick of `locked` that runs `handler` under its lock; it tries the lock before it returns. */
  run(locked: LockedJob, handler: () => unknown): Promise<unknown> {
    const follows = locked.leader !== null && !this.elections.isLeader(locked.leader);
    const acquisition = follows ? FOLLOWER_SKIP : this.jobLock;
    return this.executor.run(handler, locked.configuration, locked, acquisition).catch(logHandlerError);
  }
}
