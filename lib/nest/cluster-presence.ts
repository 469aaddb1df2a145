import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { FaultLog } from '../core/fault-log.js';
import { LockingTaskExecutor } from '../core/locking-task-executor.js';
import { PACKAGE_VERSION } from '../core/package-version.generated.js';
import type { CatalogueJob } from '../operators/cluster-records.js';
import type { OperatorStore } from '../operators/operator-store.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { SCHEDULER_LOCK_OPERATOR_STORE, SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';
import { SchedulerRegistryInterceptor } from './scheduler-registry.interceptor.js';

/** Every this many heartbeats a node forgets the nodes gone for {@link FORGET_AFTER_MS}. */
const FORGET_EVERY = 12;
/** Shown as gone after 3 missed heartbeats, a node is forgotten after an hour. */
const FORGET_AFTER_MS = 3_600_000;

/** How often a node looks for runs operators asked for (`trigger`). */
const TRIGGER_POLL_MS = 1_000;

/**
 * This node in the cluster view: a heartbeat (who it is, which locked jobs it runs) with the jobs' catalogue
 * entries when they change, and the skips counted since the last one, every `heartbeatInterval`; and, every
 * second, the runs operators asked for. Its own timers, `unref`'d: nothing here is on a tick's path.
 */
@Injectable()
export class ClusterPresence {
  /** Failures while Redis is down are the outage report's; others are logged once per 30 s each. */
  private readonly faults: FaultLog;
  private readonly startedAt = Date.now();
  private readonly published = new Map<string, string>();
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private heartbeats = 0;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    @Inject(SCHEDULER_LOCK_OPERATOR_STORE) private readonly store: OperatorStore | undefined,
    private readonly jobs: LockedJobRegistry,
    private readonly registry: SchedulerRegistry,
    private readonly executor: LockingTaskExecutor,
    private readonly interceptor: SchedulerRegistryInterceptor,
  ) {
    this.faults = new FaultLog(new Logger('SchedulerLock'), settings.outages);
  }

  /** Starts the heartbeat and the trigger poll (a provider without an operator store has no cluster view). */
  start(): void {
    if (!this.store) return;
    // After @nestjs/schedule's own onApplicationBootstrap has registered the jobs.
    setImmediate(() => void this.heartbeat());
    this.timers = [
      setInterval(() => void this.heartbeat(), this.settings.heartbeatInterval),
      setInterval(() => void this.runTriggers(), TRIGGER_POLL_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  /** @internal Publishes this node now (also every `heartbeatInterval`). */
  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    const store = this.store!;
    const entries = [...this.interceptor.registeredJobs].flatMap((jobName) => this.catalogueEntry(jobName) ?? []);
    const changed = entries
      .map((entry) => ({ entry, json: JSON.stringify(entry) }))
      .filter(({ entry, json }) => this.published.get(entry.jobName) !== json);
    const jobs = entries.map((entry) => entry.jobName);
    const { lockedBy } = this.settings;
    const node = { lockedBy, version: PACKAGE_VERSION, startedAt: this.startedAt, lastSeen: Date.now(), jobs };
    try {
      await store.publish(
        node,
        changed.map(({ entry }) => entry),
      );
      for (const { entry, json } of changed) this.published.set(entry.jobName, json);
      await store.addSkips(this.executor.drainSkips());
      if (++this.heartbeats % FORGET_EVERY === 0) await store.forgetNodes(Date.now() - FORGET_AFTER_MS);
      this.faults.storeAnswered('heartbeat');
    } catch (error) {
      // The next heartbeat sends what this one could not.
      this.faults.storeFailed('heartbeat', `Heartbeat not sent: ${(error as Error).message}`, error);
    }
  }

  /** @internal Takes the triggers of jobs this node runs, and runs them. */
  async runTriggers(): Promise<void> {
    if (this.stopped) return;
    const store = this.store!;
    try {
      const requests = await store.takeTriggers(new Set(this.interceptor.registeredJobs));
      this.faults.storeAnswered('triggers');
      for (const { id, jobName, actor } of requests) {
        const node = this.settings.lockedBy;
        const started = () => void store.reportTrigger(id, { node, state: 'started' }).catch(() => undefined);
        const skipped = (reason: string) =>
          void store.reportTrigger(id, { node, state: 'skipped', reason }).catch(() => undefined);
        const run = this.interceptor.runManually(jobName, { actor, triggerId: id }, started);
        // Every trigger taken is answered: its operator is told whether it ran, never left to guess.
        if (!run) skipped('not-registered');
        void run?.then((result) => {
          if (result && !result.executed) skipped(result.reason);
        });
      }
    } catch (error) {
      this.faults.storeFailed('triggers', `Could not look for triggers: ${(error as Error).message}`, error);
    }
  }

  /** The catalogue entry of a job registered here; `undefined` once it is no longer in the registry. */
  private catalogueEntry(jobName: string): CatalogueJob | undefined {
    const job = this.jobs.get(jobName);
    const kinds = (['cron', 'interval', 'timeout'] as const).filter((kind) => this.registry.doesExist(kind, jobName));
    if (!job || kinds.length === 0) return undefined;
    const { configuration } = job;
    const base = {
      jobName,
      lockName: configuration.name,
      lockAtMostFor: configuration.lockAtMostFor,
      lockAtLeastFor: configuration.lockAtLeastFor,
      lease: configuration.lease,
    };
    if (kinds[0] === 'cron') {
      // No next fire time here: it changes after every fire, and readers compute it from the expression.
      const { cronTime } = this.registry.getCronJob(jobName) as unknown as CronJobParts;
      const timeZone = cronTime.timeZone ?? undefined;
      const schedule = String(cronTime.source);
      return { ...base, kind: 'cron', schedule, timeZone, occurrence: job.occurrence !== undefined };
    }
    const kind = kinds[0] === 'interval' ? 'interval' : 'timeout';
    const timer = (kind === 'interval' ? this.registry.getInterval(jobName) : this.registry.getTimeout(jobName)) as {
      _repeat?: number | null;
      _idleTimeout?: number;
    };
    return { ...base, kind, schedule: String(timer._repeat ?? timer._idleTimeout ?? ''), occurrence: false };
  }
}

interface CronJobParts {
  readonly cronTime: { readonly source: unknown; readonly timeZone?: string | null };
}
