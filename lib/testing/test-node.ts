import type { INestApplicationContext, Type } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LockEvents } from '../core/task/lock-events.js';
import { ClusterPresence } from '../nest/cluster-presence.js';
import { LeaderElections } from '../nest/leader-elections.js';
import { JobHealthWatch } from '../nest/job-health-watch.js';
import { NodeClock } from './node-clock.js';
import type { ClusterJobHealth } from '../operators/job-health.js';
import { LockedJobRegistry } from '../nest/locked-job.registry.js';
import { RegisteredJobs } from '../nest/registered-jobs.js';
import { SchedulerLockAdmin } from '../nest/scheduler-lock-admin.js';
import { cronJobParts } from '../nest/scheduled-job-parts.js';
import { SCHEDULER_LOCK_SETTINGS } from '../nest/scheduler-lock.constants.js';
import type { SchedulerLockSettings } from '../nest/scheduler-lock.settings.js';
import { TickRecorder, type TickOutcome } from './tick-recorder.js';

/** Options of {@link TestNode.tick}. */
export interface TickOptions {
  /**
   * The time this node's clock reads when the scheduler fires the tick: a cron job's tick claims the occurrence
   * due at that time, as a tick cron fires late does. Default: now (a fake clock's now under fake timers).
   */
  at?: Date;
}

/** How the scheduler fires a tick of a job: cron's `fireOnTick()`, or what the timer calls, its locked tick. */
type Fire = () => unknown;

/**
 * One app of a simulated cluster, as a test drives it: its ticks run now, exactly as the scheduler runs them
 * (through the interceptor's locked tick, the lock, the occurrence claim and the events), and its console.
 * Get it with `SchedulerLockTest.node(app)`.
 */
export class TestNode {
  private constructor(
    /** This node's `node`. */
    readonly node: string,
    /** The console on the test store: pause, resume, trigger, unlock, history. */
    readonly admin: SchedulerLockAdmin,
    /** This node's lock events. */
    readonly events: LockEvents,
    private readonly app: INestApplicationContext,
    private readonly registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly registered: RegisteredJobs,
    private readonly recorder: TickRecorder,
    private readonly presence: ClusterPresence,
    private readonly elections: LeaderElections,
    private readonly health: JobHealthWatch,
    private readonly clock: NodeClock,
  ) {}

  /** @internal The node of `app`, which must be built with `SchedulerLockTest.override()`. */
  static async of(app: INestApplicationContext): Promise<TestNode> {
    await app.init();
    const settings = app.get<SchedulerLockSettings>(SCHEDULER_LOCK_SETTINGS);
    const { instrumentation: recorder, clock } = settings;
    if (!(recorder instanceof TickRecorder) || !(clock instanceof NodeClock)) {
      throw new Error(
        'SchedulerLockTest.node(app): build the app with SchedulerLockTest.override(Test.createTestingModule(...), ' +
          '{ store, node }) so that its ticks run on the test store',
      );
    }
    const node = new TestNode(
      settings.node,
      app.get(SchedulerLockAdmin),
      app.get(LockEvents),
      app,
      app.get(SchedulerRegistry),
      app.get(LockedJobRegistry),
      app.get(RegisteredJobs),
      recorder,
      app.get(ClusterPresence),
      app.get(LeaderElections),
      app.get(JobHealthWatch),
      clock,
    );
    await node.publish();
    return node;
  }

  /**
   * Fires one tick of the locked job registered as `jobName` (cron, interval or timeout) now, as the scheduler
   * would (cron's `fireOnTick()`, the locked tick a timer calls: under fake timers too, installed before the app
   * started or after), and resolves once it was skipped or its run released the lock: `ran` with the handler's
   * result (a decorated method's return value, awaited) or error, or `skipped` with the reason.
   *
   * @throws Error for a job that is not a locked job registered on this node.
   */
  async tick(jobName: string, options: TickOptions = {}): Promise<TickOutcome> {
    const fire = this.scheduled(jobName);
    const at = options.at?.getTime();
    return this.recorder.tick(jobName, this.node, () => (at === undefined ? fire() : this.clock.readingAt(at, fire)));
  }

  /** Whether this node leads the election `election` now (a `@LeaderElection()` provider of its app). */
  isLeader(election: string): boolean {
    return this.elections.isLeader(election);
  }

  /**
   * Kills this node's part in its elections, as `kill -9` would: no hook is called and no lease released, so a
   * follower takes over once the lease has expired in the store (advance the fake clock by the lease).
   */
  kill(): void {
    this.elections.halt();
  }

  /** A provider of this node's app, as `moduleRef.get()` finds it: a service to spy on, a job. */
  get<T>(token: Type<T> | string | symbol): T {
    return this.app.get<T>(token as Type<T>);
  }

  /** Publishes this node and its jobs to the console now (a heartbeat), as it does every `heartbeatInterval`. */
  publish(): Promise<void> {
    return this.presence.heartbeat();
  }

  /**
   * Checks every job's health now, as this node does every `heartbeatInterval`: emits `missed` for the misses
   * whose report it claims first in the cluster, `failing` and `healthy` on a change. Resolves to the health seen.
   */
  checkHealth(): Promise<ClusterJobHealth[]> {
    return this.health.check();
  }

  private scheduled(jobName: string): Fire {
    if (!this.jobs.get(jobName)) throw new Error(`No locked job named "${jobName}" on ${this.node}`);
    for (const kind of ['cron', 'interval', 'timeout'] as const) {
      if (!this.registry.doesExist(kind, jobName)) continue;
      if (kind === 'cron') {
        const cron = cronJobParts(this.registry.getCronJob(jobName));
        return () => cron.fireOnTick();
      }
      // The tick the timer calls, whether Node's or a fake one: the registry proxy recorded it as it locked the job.
      const tick = this.registered.get(jobName)?.timerTick;
      if (tick) return tick;
    }
    throw new Error(`Job "${jobName}" is not in the SchedulerRegistry of ${this.node} (not started, or removed)`);
  }
}
