import { Inject, Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { OccurrenceJob, type OccurrenceServices } from '../occurrence/occurrence-job.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { DecoratedJobMounts, type MountedTimer } from './decorated-job-mounts.js';
import { logHandlerError } from './handler-errors.js';
import { checkCronJob, checkRuntimeTimer, checkTimerJob, type LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { LeaderElections } from './leader-elections.js';
import { PlainLockTicks } from './plain-lock-ticks.js';
import { RegisteredJobs } from './registered-jobs.js';
import {
  cronJobParts,
  cronSchedule,
  timerPeriod,
  timerSchedule,
  type CronJobParts,
  type TickCallback,
  type TimerParts,
} from './scheduled-job-parts.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * Proxies `@nestjs/schedule`'s `SchedulerRegistry` (ShedLock's TaskScheduler-proxy mode; not an HTTP
 * interceptor): a job with a declared lock is wrapped when it is registered (by `@nestjs/schedule` at
 * bootstrap or by the app at runtime), so each tick runs through the lock while direct calls of the
 * method stay unlocked, and is recorded in {@link RegisteredJobs}. A decorated interval or timeout comes
 * locked already: its timer calls the locked tick {@link DecoratedJobMounts} handed the orchestrator. The
 * patch is on this app's registry instance only. It does nothing else: each tick goes to its locked job (an
 * {@link OccurrenceJob}, or the executor with the job's lock).
 */
@Injectable()
export class SchedulerRegistryProxy {
  private readonly occurrenceServices: OccurrenceServices;

  constructor(
    registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly registered: RegisteredJobs,
    executor: LockingTaskExecutor,
    watcher: RecoveryWatcher,
    private readonly mounts: DecoratedJobMounts,
    private readonly ticks: PlainLockTicks,
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    elections: LeaderElections,
  ) {
    const leads = (election: string) => elections.isLeader(election);
    this.occurrenceServices = {
      executor,
      watcher,
      handlerFailed: logHandlerError,
      leads,
      now: () => settings.clock.now(),
    };
    // Installed at construction: @nestjs/schedule registers jobs in onApplicationBootstrap, after every constructor.
    const { addCronJob, addInterval, addTimeout } = registry;
    registry.addCronJob = (name, job) => {
      const locked = this.jobs.find('cron', name);
      if (!locked) return addCronJob.call(registry, name, job);
      const cron = cronJobParts(job);
      refuseOnError(
        () => this.lockCronJob(locked, cron),
        () => void job.stop(),
      );
      const lockedTick = cron._callbacks![0];
      addCronJob.call(registry, name, job);
      refuseOnError(
        () => assertStillLocked(name, cron._callbacks?.length === 1 && cron._callbacks[0] === lockedTick),
        () => void job.stop(),
      );
      // A tick cron fired while @nestjs/schedule created the job: now it runs, under the lock.
      if (mounts.take(name)) void cron.fireOnTick();
    };
    registry.addInterval = (name, timer) => this.addTimer(name, 'interval', timer, addInterval.bind(registry));
    registry.addTimeout = (name, timer) => this.addTimer(name, 'timeout', timer, addTimeout.bind(registry));
  }

  /**
   * Replaces the job's callbacks with one locked tick, claiming the tick's occurrence unless the job
   * opted out. Wrapping `fireOnTick` instead would release the lock too early: cron does not await an
   * async callback unless `waitForCompletion` is set.
   */
  private lockCronJob(locked: LockedJob, cron: CronJobParts): void {
    const store = checkCronJob(locked, cron, this.settings.provider);
    const callbacks = cron._callbacks!; // an array: checkCronJob refuses a job without one
    const handlerFor = cronHandlers(cron, callbacks.splice(0), this.mounts.cronHandlerOf(locked.jobName));
    this.registered.add({ job: locked, schedule: cronSchedule(cron), handler: handlerFor() });
    if (!locked.occurrence || !store) {
      callbacks.push((onComplete) => this.ticks.run(locked, handlerFor(onComplete)));
      return;
    }
    const occurrences = new OccurrenceJob(locked, locked.occurrence, store, cron.cronTime, this.occurrenceServices);
    callbacks.push((onComplete) => occurrences.tick(handlerFor(onComplete)));
    if (locked.occurrence.catchUpWindow !== undefined)
      catchUpWhenStarted(cron, () => void occurrences.catchUp(handlerFor()));
  }

  /**
   * Registers the timer through `add`, its callback locked if `name` is a locked job of this `kind`; a decorated
   * job's timer, as the orchestrator mounts it, calls its locked tick already.
   */
  private addTimer<T>(name: string, kind: 'interval' | 'timeout', timer: T, add: (name: string, timer: T) => void) {
    const mounted = this.mounts.takeTimer(kind, name);
    const lockedTick = mounted ? this.addMountedTimer(mounted, timer) : this.lockRuntimeTimer(name, kind, timer);
    add(name, timer);
    if (!lockedTick) return;
    // Only a Node.js Timeout has a callback to look at; a fake timer (a test's) keeps it elsewhere.
    const callback = (timer as TimerParts)._onTimeout;
    refuseOnError(
      () => assertStillLocked(name, callback === undefined || callback === lockedTick),
      () => clearTimeout(timer as NodeJS.Timeout),
    );
  }

  /** Records a locked decorated timer as it is registered; returns the locked tick it calls. */
  private addMountedTimer(mounted: MountedTimer, timer: unknown): TickCallback {
    const { job, kind, tick, handler, timeout } = mounted;
    refuseOnError(
      () => checkTimerJob(job, kind, timeout),
      () => clearTimeout(timer as NodeJS.Timeout), // clears intervals too
    );
    this.registered.add({ job, schedule: timerSchedule(kind, timeout), handler, timerTick: tick });
    return tick;
  }

  /**
   * Wraps the callback of a timer the app adds itself in a locked tick if `name` is a locked job of this `kind`;
   * a timer that cannot be locked is cleared before the error fails the startup. Returns the locked tick.
   */
  private lockRuntimeTimer(name: string, kind: 'interval' | 'timeout', timer: unknown): TickCallback | undefined {
    const locked = this.jobs.find(kind, name);
    if (!locked) return undefined;
    let lockedTick: TickCallback | undefined;
    const lock = () => {
      const ref = checkRuntimeTimer(locked, timer);
      const period = timerPeriod(ref);
      checkTimerJob(locked, kind, period);
      const original = ref._onTimeout!; // a function: checkRuntimeTimer refuses a timer without one
      const handlerWith = (args: unknown[]) => () => original.apply(ref, args);
      lockedTick = (...args) => this.ticks.run(locked, handlerWith(args));
      ref._onTimeout = lockedTick;
      this.registered.add({
        job: locked,
        schedule: timerSchedule(kind, period),
        handler: handlerWith([]),
        timerTick: lockedTick,
      });
    };
    refuseOnError(lock, () => clearTimeout(timer as NodeJS.Timeout)); // clears intervals too
    return lockedTick;
  }
}

/**
 * What a tick runs: a decorated job's `decorated` handler, or (a runtime job) the callbacks cron held, called
 * as cron calls them, with the job's `onComplete` (`handlerFor()`, without it, for a run an operator asks
 * for and a catch-up). That argument is the same on every tick, so a tick's handler is made once, not once
 * per tick: a tick holds it while its claim waits for Redis.
 */
function cronHandlers(cron: CronJobParts, original: TickCallback[], decorated: (() => unknown) | undefined) {
  const handlerWith = (args: unknown[]): (() => unknown) =>
    decorated ??
    (async () => {
      for (const callback of original) await callback.apply(cron.context, args);
    });
  let tickHandler: { readonly onComplete: unknown; readonly handler: () => unknown } | undefined;
  return (...args: [onComplete?: unknown]): (() => unknown) => {
    if (args.length === 0) return handlerWith([]);
    const [onComplete] = args;
    if (!tickHandler || tickHandler.onComplete !== onComplete) tickHandler = { onComplete, handler: handlerWith(args) };
    return tickHandler.handler;
  };
}

/**
 * Runs `catchUp` once the job runs: right away if it is started, else on its first `start()` (a
 * `disabled` job, one with an `initialDelay`, a runtime job added before it is started).
 */
function catchUpWhenStarted(job: CronJobParts, catchUp: () => void): void {
  if (job.isActive) {
    setImmediate(catchUp);
    return;
  }
  const start = job.start;
  job.start = function startThenCatchUp(this: CronJobParts) {
    job.start = start;
    start.call(this);
    catchUp();
  };
}

/**
 * Refuses the startup when the registry, as something else patched it, replaced the locked tick of the job
 * `name` while registering it: what replaced it may run the job without its lock.
 */
function assertStillLocked(name: string, locked: boolean): void {
  if (locked) return;
  throw new SchedulerLockConfigurationError(
    `The locked job "${name}" was registered, but something that wraps SchedulerRegistry (installed before ` +
      'nest-scheduler-lock) replaced its locked tick while registering it; the job could run unlocked, so the ' +
      'app is refused. Wrap jobs inside the lock instead, where @nestjs/schedule wraps them',
  );
}

/**
 * Runs `attach`; if the job cannot be locked, stops it before the error fails the startup: it never
 * reaches the registry, so closing the app would not stop it, and it must not tick unlocked.
 */
function refuseOnError(attach: () => void, stop: () => void): void {
  try {
    attach();
  } catch (error) {
    stop();
    throw error;
  }
}
