import { Inject, Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { OccurrenceJob, type OccurrenceServices } from '../occurrence/occurrence-job.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { JobLock } from '../operators/job-lock.js';
import { canLockJobs } from '../operators/operator-abilities.js';
import { EarlyCronTicks } from './early-cron-ticks.js';
import { ExplorerFailures } from './explorer-failures.js';
import { logHandlerError } from './handler-errors.js';
import { checkCronJob, checkTimerJob, type LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { RegisteredJobs } from './registered-jobs.js';
import {
  cronJobParts,
  cronSchedule,
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
 * method stay unlocked, and is recorded in {@link RegisteredJobs}. The patch is on this app's registry
 * instance only. It does nothing else: each tick goes to its locked job (an {@link OccurrenceJob}, or the
 * executor with the job's lock).
 */
@Injectable()
export class SchedulerRegistryInterceptor {
  private readonly occurrenceServices: OccurrenceServices;
  /** How a plain tick takes its lock: pausable, where the provider can pause jobs; else its `lock()`. */
  private readonly jobLock: JobLock | undefined;

  constructor(
    registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly registered: RegisteredJobs,
    private readonly executor: LockingTaskExecutor,
    watcher: RecoveryWatcher,
    private readonly earlyTicks: EarlyCronTicks,
    private readonly failures: ExplorerFailures,
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
  ) {
    this.occurrenceServices = { executor, watcher, handlerFailed: logHandlerError };
    this.jobLock = canLockJobs(settings.provider) ? new JobLock(settings.provider) : undefined;
    // Installed at construction: @nestjs/schedule registers jobs in onApplicationBootstrap, after every constructor.
    const { addCronJob, addInterval, addTimeout } = registry;
    registry.addCronJob = (name, job) => {
      const locked = this.jobs.find('cron', name);
      if (!locked) return addCronJob.call(registry, name, job);
      const cron = cronJobParts(job);
      refuseOnError(
        () => this.lockCronJob(locked, cron),
        () => job.stop(),
      );
      const lockedTick = cron._callbacks![0];
      addCronJob.call(registry, name, job);
      refuseOnError(
        () => assertStillLocked(name, cron._callbacks?.length === 1 && cron._callbacks[0] === lockedTick),
        () => job.stop(),
      );
      // A tick cron fired while @nestjs/schedule created the job: now it runs, under the lock.
      if (earlyTicks.take(name)) void cron.fireOnTick();
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
    const decorated = this.earlyTicks.handlerOf(locked.jobName);
    const handlerFor = cronHandlers(cron, callbacks.splice(0), decorated && (() => this.failures.run(decorated)));
    this.registered.add({ job: locked, schedule: cronSchedule(cron), handler: handlerFor() });
    if (!locked.occurrence || !store) {
      callbacks.push((onComplete) => this.runTick(locked, handlerFor(onComplete)));
      return;
    }
    const occurrences = new OccurrenceJob(locked, locked.occurrence, store, cron.cronTime, this.occurrenceServices);
    callbacks.push((onComplete) => occurrences.tick(handlerFor(onComplete)));
    if (locked.occurrence.catchUpWindow !== undefined)
      catchUpWhenStarted(cron, () => void occurrences.catchUp(handlerFor()));
  }

  /** Registers the timer through `add`, its callback locked if `name` is a locked job of this `kind`. */
  private addTimer<T>(name: string, kind: 'interval' | 'timeout', timer: T, add: (name: string, timer: T) => void) {
    const ref = this.lockTimer(name, kind, timer) as TimerParts;
    const lockedTick = ref._onTimeout;
    add(name, timer);
    if (!this.jobs.find(kind, name)) return;
    refuseOnError(
      () => assertStillLocked(name, ref._onTimeout === lockedTick),
      () => clearTimeout(timer as NodeJS.Timeout),
    );
  }

  /**
   * Wraps the timer's callback in a locked tick if `name` is a locked job of this `kind`; a timer that
   * cannot be locked is cleared before the error fails the startup. Returns the timer.
   */
  private lockTimer<T>(name: string, kind: 'interval' | 'timeout', timer: T): T {
    const locked = this.jobs.find(kind, name);
    if (!locked) return timer;
    const lock = () => {
      checkTimerJob(locked, kind, timer);
      const ref = timer as TimerParts;
      const original = ref._onTimeout!; // a function: checkTimerJob refuses a timer without one
      // A decorated job's callback is what @nestjs/schedule made of the method: see ExplorerFailures.
      const handlerWith = (args: unknown[]) => () => this.failures.run(() => original.apply(ref, args));
      ref._onTimeout = (...args) => this.runTick(locked, handlerWith(args));
      this.registered.add({ job: locked, schedule: timerSchedule(kind, ref), handler: handlerWith([]) });
    };
    refuseOnError(lock, () => clearTimeout(timer as NodeJS.Timeout)); // clears intervals too
    return timer;
  }

  /** A tick of a job with a plain lock (not once-per-occurrence), a handler's error logged. */
  private runTick(locked: LockedJob, handler: () => unknown): Promise<unknown> {
    return this.executor.run(handler, locked.configuration, locked, this.jobLock).catch(logHandlerError);
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
