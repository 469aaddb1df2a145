import { Inject, Injectable, Logger } from '@nestjs/common';
import { FaultLog } from '../core/executor/fault-log.js';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { TaskResult } from '../core/task/task-result.js';
import { JobLock } from '../operators/job-lock.js';
import { canLockJobs } from '../operators/operator-abilities.js';
import type { OperatorProvider } from '../operators/operator-provider.js';
import { leaderLockName } from '../leader/leader-campaign.js';
import { logHandlerError } from './handler-errors.js';
import { LeaderElections } from './leader-elections.js';
import { RegisteredJobs } from './registered-jobs.js';
import { SCHEDULER_LOCK_OPERATOR_PROVIDER, SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** How often a node looks for runs operators asked for (`trigger`). */
const TRIGGER_POLL_MS = 1_000;

/** Who asked for a run, and which request it answers. */
export interface ManualRun {
  readonly actor: string;
  readonly triggerId: string;
}

/**
 * Runs operators asked for (`SchedulerLockAdmin.trigger`): every second, takes the triggers of the locked jobs
 * registered here from the operator store and runs each once, under its lock (even while the job is paused),
 * reporting whether it started. Its own timer, `unref`'d: nothing here is on a tick's path.
 */
@Injectable()
export class OperatorTriggers {
  /** Failures while the store is down are the outage report's; others are logged once per 30 s. */
  private readonly faults: FaultLog;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    @Inject(SCHEDULER_LOCK_OPERATOR_PROVIDER) private readonly store: OperatorProvider | undefined,
    private readonly registered: RegisteredJobs,
    private readonly executor: LockingTaskExecutor,
    private readonly elections: LeaderElections,
  ) {
    this.faults = new FaultLog(new Logger('SchedulerLock'), settings.outages);
  }

  /** Starts the poll (a provider without an operator store takes no triggers). */
  start(): void {
    if (!this.store) return;
    this.timer = setInterval(() => void this.runTriggers(), TRIGGER_POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** @internal Takes the triggers of jobs this node runs, and runs them. */
  async runTriggers(): Promise<void> {
    if (this.stopped) return;
    const store = this.store!;
    const node = this.settings.node;
    const sentAt = performance.now();
    try {
      // An operator's step-down reaches the leader as a trigger of its election's lock.
      const led = new Map(this.elections.led().map((election) => [leaderLockName(election), election]));
      const requests = await store.takeTriggers(new Set([...this.registered.names(), ...led.keys()]));
      this.faults.storeAnswered('triggers');
      for (const { id, jobName, actor } of requests) {
        const started = () =>
          void store.reportTrigger(id, { node, state: 'started', reason: null }).catch(() => undefined);
        const skipped = (reason: string) =>
          void store.reportTrigger(id, { node, state: 'skipped', reason }).catch(() => undefined);
        const election = led.get(jobName);
        if (election !== undefined) {
          void this.elections.stepDown(election).then((was) => (was ? started() : skipped('not-leader')));
          continue;
        }
        const run = this.run(jobName, { actor, triggerId: id }, started);
        // Every trigger taken is answered: its operator is told whether it ran, never left to guess.
        if (!run) skipped('not-registered');
        void run?.then((result) => {
          if (result && !result.executed) skipped(result.reason);
        });
      }
    } catch (error) {
      this.faults.storeFailed('triggers', `Could not look for triggers: ${(error as Error).message}`, error, sentAt);
    }
  }

  /**
   * Runs the job registered as `jobName` once now: under its lock, even while paused; `started` is called once
   * the run has its lock. `undefined` for a job not registered here, or a provider that cannot lock jobs.
   */
  private run(
    jobName: string,
    manual: ManualRun,
    started: () => void,
  ): Promise<TaskResult<unknown> | undefined> | undefined {
    const registered = this.registered.get(jobName);
    const { provider } = this.settings;
    if (!registered || !canLockJobs(provider)) return undefined;
    const { job, handler } = registered;
    const run = () => {
      started();
      return handler();
    };
    return this.executor.run(run, job.configuration, job, new JobLock(provider, manual)).catch(logHandlerError);
  }
}
