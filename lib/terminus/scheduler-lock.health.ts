import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { parseDuration, type DurationInput } from '../core/provider/duration.js';
import { LockEvents } from '../core/task/lock-events.js';
import type { JobRecord, LockProvider } from '../core/provider/lock-provider.js';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { RunInProgress } from '../core/executor/run-health.js';
import { LockedJobRegistry } from '../nest/locked-job.registry.js';
import { SchedulerLockAdmin } from '../nest/scheduler-lock-admin.js';
import { SCHEDULER_LOCK_PROVIDER } from '../nest/scheduler-lock.constants.js';
import { LastRuns } from './last-runs.js';
import { probeStore, type StoreProbe } from './store-probe.js';

/** Options of {@link SchedulerLockHealthIndicator.isHealthy}. */
export interface SchedulerLockHealthOptions {
  /** How long the lock store may take to answer before the check is down. Default 1 s. */
  timeout?: DurationInput;
  /**
   * `down`: the check is also down while a job of the cluster is late, missed an occurrence or is failing
   * (`SchedulerLockAdmin.listHealth()`; needs a provider with an operator store). Default `ignore`.
   */
  unhealthyJobs?: 'ignore' | 'down';
}

/** What the indicator reports of one locked job. */
export interface JobHealth {
  readonly lockName: string;
  /** Whether this node is running the job now. */
  readonly running: boolean;
  /** How long this node's run has been going (ms) while it runs, or `null`. */
  readonly runningForMs: number | null;
  /**
   * This node's run went on past its lock (`lockAtMostFor` reached, or its lease not renewed in time):
   * it runs too long, unlocked, and another node may start the job meanwhile.
   */
  readonly outlivedLock: boolean;
  /** How the job's last run on this node ended, and when; `null` before its first. */
  readonly lastRun: { readonly outcome: 'succeeded' | 'failed'; readonly at: string } | null;
  /**
   * The job's last occurrence cluster-wide (once-per-occurrence cron jobs): when it was due, its state
   * (`failed`, `crashed`…), who ran it, and whether its lock is held now; `null` for other jobs.
   */
  readonly lastOccurrence: {
    readonly occurrence: string;
    readonly state: JobRecord['state'];
    readonly node: string;
    readonly held: boolean;
  } | null;
}

const DEFAULT_TIMEOUT = 1_000;
const DEFAULT_KEY = 'scheduler-lock';

/**
 * A `@nestjs/terminus` health indicator for the scheduler locks of this node. **Down** when the lock store
 * does not answer within the timeout, or when the renewal loop has fallen behind (a `keepAlive` lease's
 * renewal is more than half a renewal interval late: it failed, or has not come back). Up otherwise, with
 * details per locked job: running here, outlived its lock, last outcome here and cluster-wide. Never an
 * error message, a URL or a password.
 *
 * Add it to the `providers` of the module whose controller serves the health check, beside `TerminusModule`;
 * `SchedulerLockModule` must be visible there (it is global by default).
 */
@Injectable()
export class SchedulerLockHealthIndicator implements OnModuleDestroy {
  private readonly lastRuns: LastRuns;

  constructor(
    private readonly health: HealthIndicatorService,
    private readonly executor: LockingTaskExecutor,
    private readonly jobs: LockedJobRegistry,
    @Inject(SCHEDULER_LOCK_PROVIDER) private readonly provider: LockProvider,
    events: LockEvents,
    private readonly admin: SchedulerLockAdmin,
  ) {
    this.lastRuns = new LastRuns(events);
  }

  /** The indicator's result under `key` (default `scheduler-lock`), for `HealthCheckService.check()`. */
  async isHealthy(key: string = DEFAULT_KEY, options: SchedulerLockHealthOptions = {}): Promise<HealthIndicatorResult> {
    const timeoutMs = options.timeout === undefined ? DEFAULT_TIMEOUT : parseDuration(options.timeout);
    const { unhealthyJobs = 'ignore' } = options;
    if (unhealthyJobs !== 'ignore' && unhealthyJobs !== 'down') {
      throw new Error(
        `SchedulerLockHealthIndicator: unhealthyJobs must be 'ignore' or 'down' (got "${unhealthyJobs}")`,
      );
    }
    const jobs = [...this.jobs.all()];
    const lockNames = [...new Set(jobs.map((job) => job.configuration.name))];
    const store = await probeStore(this.provider, lockNames, key, timeoutMs);
    const runs = this.executor.runsInProgress();
    const behind = runs.filter((run) => run.renewalOverdueMs > (run.renewalIntervalMs ?? Infinity) / 2);
    const details = {
      store: storeDetails(store),
      renewal: {
        status: behind.length > 0 ? 'behind' : 'on-schedule',
        leases: runs.filter((run) => run.renewalIntervalMs !== undefined).length,
        ...(behind.length > 0 && { overdueMs: Math.round(Math.max(...behind.map((run) => run.renewalOverdueMs))) }),
      },
      jobs: Object.fromEntries(
        jobs.map((job) => [job.jobName, this.jobHealth(job.jobName, job.configuration.name, runs, store)]),
      ),
    };
    const unhealthy = unhealthyJobs === 'down' && store.status === 'up' ? await this.unhealthyJobs() : {};
    const jobsDown = Object.keys(unhealthy).length > 0;
    const withHealth =
      unhealthyJobs === 'down' ? { ...details, health: { status: jobsDown ? 'down' : 'up', unhealthy } } : details;
    const session = this.health.check(key);
    const down = store.status === 'down' || behind.length > 0 || jobsDown;
    return down ? session.down(withHealth) : session.up(withHealth);
  }

  /** The cluster's unhealthy jobs: job name → state. */
  private async unhealthyJobs(): Promise<Record<string, string>> {
    // The store answered the probe just now; a failure here is the probe's next time to report.
    const healths = await this.admin.listHealth().catch(() => []);
    return Object.fromEntries(healths.filter((job) => job.unhealthy).map((job) => [job.jobName, job.state]));
  }

  onModuleDestroy(): void {
    this.lastRuns.stop();
  }

  private jobHealth(jobName: string, lockName: string, runs: RunInProgress[], store: StoreProbe): JobHealth {
    const run = runs.find((candidate) => candidate.jobName === jobName);
    const lastRun = this.lastRuns.of(jobName);
    const record = store.status === 'up' ? store.records.get(lockName) : undefined;
    return {
      lockName,
      running: run !== undefined,
      runningForMs: run ? Math.round(run.runningForMs) : null,
      outlivedLock: run?.outlivedLock ?? false,
      lastRun: lastRun ? { outcome: lastRun.outcome, at: lastRun.at.toISOString() } : null,
      lastOccurrence: record
        ? { occurrence: record.occurrence.toISOString(), state: record.state, node: record.node, held: record.held }
        : null,
    };
  }
}

function storeDetails(store: StoreProbe): Record<string, unknown> {
  if (store.status === 'up') return { status: 'up', responseTimeMs: store.responseTimeMs };
  return store.status === 'down' ? { status: 'down', reason: store.reason } : { status: 'not-checked' };
}
