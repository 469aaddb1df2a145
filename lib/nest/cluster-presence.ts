import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { FaultLog } from '../core/executor/fault-log.js';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { JobHealthWatch } from './job-health-watch.js';
import { LeaderElections } from './leader-elections.js';
import type { CatalogueJob, ClusterNode } from '../operators/cluster-records.js';
import type { HealthTurn, HealthTurnBid, OperatorProvider } from '../operators/operator-provider.js';
import { OperatorTriggers } from './operator-triggers.js';
import { RegisteredJobs } from './registered-jobs.js';
import { PACKAGE_VERSION } from './package-version.generated.js';
import { SCHEDULER_LOCK_OPERATOR_PROVIDER, SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** Every this many heartbeats a node forgets the nodes gone for {@link FORGET_AFTER_MS}. */
const FORGET_EVERY = 12;
/** Shown as gone after 3 missed heartbeats, a node is forgotten after an hour. */
const FORGET_AFTER_MS = 3_600_000;

/**
 * This node in the cluster view: a heartbeat (who it is, its locked jobs and its elections) with the jobs' catalogue
 * entries when they change, a bid for the health turn, and the skips counted since the last one, every
 * `heartbeatInterval`; the health check when the bid won the turn ({@link JobHealthWatch}); and the poll for runs
 * operators asked for ({@link OperatorTriggers}). Its own timer, `unref`'d: nothing here is on a tick's path.
 */
@Injectable()
export class ClusterPresence {
  /** Failures while Redis is down are the outage report's; others are logged once per 30 s each. */
  private readonly faults: FaultLog;
  private readonly startedAt = new Date();
  private readonly published = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private heartbeats = 0;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    @Inject(SCHEDULER_LOCK_OPERATOR_PROVIDER) private readonly store: OperatorProvider | undefined,
    private readonly registered: RegisteredJobs,
    private readonly registry: SchedulerRegistry,
    private readonly executor: LockingTaskExecutor,
    private readonly triggers: OperatorTriggers,
    private readonly elections: LeaderElections,
    private readonly health: JobHealthWatch,
  ) {
    this.faults = new FaultLog(new Logger('SchedulerLock'), settings.outages);
  }

  /** Starts the heartbeat and the trigger poll (a provider without an operator store has no cluster view). */
  start(): void {
    if (!this.store) return;
    // After @nestjs/schedule's own onApplicationBootstrap has registered the jobs.
    setImmediate(() => void this.beat());
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatInterval);
    this.timer.unref();
    this.triggers.start();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.triggers.stop();
  }

  /**
   * The health check while the last bid's turn lasts, then the heartbeat: its bid leaves what the check found, so
   * a node that takes the turn next misses none of it.
   */
  private async beat(): Promise<void> {
    await this.health.checkOnTurn();
    await this.heartbeat();
  }

  /** @internal Publishes this node now (also every `heartbeatInterval`), and bids for the health turn. */
  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    const turn = await this.send(this.health.bid(), 'Heartbeat not sent');
    // A bid not answered leaves the watch as it was: the turn may still be this node's. Stopped meanwhile: the app
    // may have closed the store's connections (a pool ended at shutdown).
    if (turn === undefined || this.stopped) return;
    this.health.turn(turn);
    if (++this.heartbeats % FORGET_EVERY === 0) await this.forgetGoneNodes();
  }

  /** Hands the health turn back as this node stops, if it holds it, with what its last check found. */
  async handBackTurn(): Promise<void> {
    const bid = this.health.handBack();
    // Not answered: its lease runs out instead, and another node takes the turn then.
    if (bid) await this.send(bid, 'Health turn not handed back');
  }

  /**
   * The one call of this node's periodic work: its record, its jobs' catalogue entries that changed, the skips
   * counted since the last call, and `bid`. Resolves to the store's answer to the bid, or to `undefined` when the
   * store failed (logged as `failure`): the next call sends what this one could not, its skips too.
   */
  private async send(bid: HealthTurnBid, failure: string): Promise<HealthTurn | null | undefined> {
    const entries = [...this.registered.names()].flatMap((jobName) => this.catalogueEntry(jobName) ?? []);
    const changed = entries
      .map((entry) => ({ entry, json: JSON.stringify(entry) }))
      .filter(({ entry, json }) => this.published.get(entry.jobName) !== json);
    const node = this.node(entries.map((entry) => entry.jobName));
    const skips = this.executor.drainSkips();
    const sentAt = performance.now();
    try {
      const jobs = changed.map(({ entry }) => entry);
      const turn = await this.store!.publish(node, jobs, skips, bid);
      for (const { entry, json } of changed) this.published.set(entry.jobName, json);
      this.faults.storeAnswered('heartbeat');
      return turn;
    } catch (error) {
      this.executor.putBackSkips(skips);
      this.faults.storeFailed('heartbeat', `${failure}: ${(error as Error).message}`, error, sentAt);
      return undefined;
    }
  }

  /** Forgets the nodes gone for {@link FORGET_AFTER_MS}, every {@link FORGET_EVERY} heartbeats. */
  private async forgetGoneNodes(): Promise<void> {
    const sentAt = performance.now();
    try {
      await this.store!.forgetNodes(new Date(Date.now() - FORGET_AFTER_MS));
    } catch (error) {
      // The next round forgets them.
      this.faults.storeFailed('heartbeat', `Gone nodes not forgotten: ${(error as Error).message}`, error, sentAt);
    }
  }

  /** This node's heartbeat record, running `jobs`. */
  private node(jobs: string[]): ClusterNode {
    const { node } = this.settings;
    return {
      node,
      version: PACKAGE_VERSION,
      startedAt: this.startedAt,
      lastSeen: new Date(),
      jobs,
      elections: this.elections.names(),
    };
  }

  /** The catalogue entry of a job registered here; `undefined` once it is no longer in the registry. */
  private catalogueEntry(jobName: string): CatalogueJob | undefined {
    const registered = this.registered.get(jobName);
    if (!registered || !this.registry.doesExist(registered.schedule.kind, jobName)) return undefined;
    const { job, schedule } = registered;
    const { configuration } = job;
    // No next fire time for a cron job: it changes after every fire, and readers compute it from the expression.
    return {
      jobName,
      lockName: configuration.name,
      ...schedule,
      lockAtMostFor: configuration.lockAtMostFor,
      lockAtLeastFor: configuration.lockAtLeastFor,
      lease: configuration.lease ?? null,
      occurrence: schedule.kind === 'cron' && job.occurrence !== undefined,
    };
  }
}
