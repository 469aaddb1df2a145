import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LockingTaskExecutor } from '../core/locking-task-executor.js';
import { EarlyCronTicks } from './early-cron-ticks.js';
import { checkCronJob, checkTimerJob, type LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import type { CronTimeLike } from '../occurrence/cron-schedule.js';
import { JobLock } from '../operators/job-lock.js';
import { canLockJobs } from '../operators/operator-abilities.js';
import { OccurrenceJob, type OccurrenceServices } from '../occurrence/occurrence-job.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

type CronJob = Parameters<SchedulerRegistry['addCronJob']>[1];
type Callback = (this: unknown, ...args: unknown[]) => unknown;

/** The parts of a cron 4 job and a Node timer that hold the function a tick runs. */
interface CronCallbacks {
  _callbacks?: Callback[];
  context: unknown;
  cronTime: CronTimeLike;
  readonly isActive: boolean;
  lastDate(): Date | null | undefined;
  start(): void;
  fireOnTick(): unknown;
}
interface TimerCallback {
  _onTimeout?: Callback;
}

/**
 * Proxies `@nestjs/schedule`'s `SchedulerRegistry` (ShedLock's TaskScheduler-proxy mode; not an HTTP
 * interceptor): a job with a declared lock is wrapped when it is registered (by `@nestjs/schedule` at
 * bootstrap or by the app at runtime), so each tick runs through the lock while direct calls of the
 * method stay unlocked. The patch is on this app's registry instance only.
 */
@Injectable()
export class SchedulerRegistryInterceptor {
  private readonly occurrenceServices: OccurrenceServices;
  private readonly handlerFailed: (error: unknown) => undefined;
  /** How a plain tick takes its lock: pausable, where the provider can pause jobs; else its `lock()`. */
  private readonly jobLock: JobLock | undefined;
  /** Each locked job's handler, for a run an operator asks for. */
  private readonly handlers = new Map<string, () => unknown>();

  constructor(
    registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly executor: LockingTaskExecutor,
    watcher: RecoveryWatcher,
    earlyTicks: EarlyCronTicks,
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
  ) {
    // @nestjs/schedule logs a failed job under this context; so does a locked job's tick.
    const schedulerLogger = new Logger('Scheduler');
    this.handlerFailed = (error) => void schedulerLogger.error(error);
    this.occurrenceServices = { executor, watcher, handlerFailed: this.handlerFailed };
    this.jobLock = canLockJobs(settings.provider) ? new JobLock(settings.provider) : undefined;
    // Installed at construction: @nestjs/schedule registers jobs in onApplicationBootstrap, after every constructor.
    const { addCronJob, addInterval, addTimeout } = registry;
    registry.addCronJob = (name, job) => {
      const locked = this.jobs.find('cron', name);
      if (!locked) return addCronJob.call(registry, name, job);
      refuseOnError(
        () => this.lockCronJob(locked, job),
        () => job.stop(),
      );
      addCronJob.call(registry, name, job);
      // A tick cron fired while @nestjs/schedule created the job: now it runs, under the lock.
      if (earlyTicks.take(name)) void (job as unknown as CronCallbacks).fireOnTick();
    };
    registry.addInterval = (name, timer) => addInterval.call(registry, name, this.lockTimer(name, 'interval', timer));
    registry.addTimeout = (name, timer) => addTimeout.call(registry, name, this.lockTimer(name, 'timeout', timer));
  }

  /**
   * Replaces the job's callbacks with one locked tick, claiming the tick's occurrence unless the job
   * opted out. Wrapping `fireOnTick` instead would release the lock too early: cron does not await an
   * async callback unless `waitForCompletion` is set.
   */
  private lockCronJob(locked: LockedJob, job: CronJob): void {
    const cron = job as unknown as CronCallbacks;
    const store = checkCronJob(locked, cron, this.settings.provider);
    const callbacks = cron._callbacks!; // an array: checkCronJob refuses a job without one
    const handlerFor = cronHandlers(locked, cron, callbacks.splice(0));
    this.handlers.set(locked.jobName, handlerFor());
    if (!locked.occurrence || !store) {
      callbacks.push((onComplete) => this.runTick(locked, handlerFor(onComplete)));
      return;
    }
    const occurrences = new OccurrenceJob(locked, locked.occurrence, store, cron.cronTime, this.occurrenceServices);
    callbacks.push((onComplete) => occurrences.tick(handlerFor(onComplete)));
    if (locked.occurrence.catchUpWindow !== undefined)
      catchUpWhenStarted(cron, () => void occurrences.catchUp(handlerFor()));
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
      const ref = timer as TimerCallback;
      const original = ref._onTimeout!; // a function: checkTimerJob refuses a timer without one
      ref._onTimeout = (...args) => this.runTick(locked, locked.handler ?? (() => original.apply(ref, args)));
      this.handlers.set(locked.jobName, locked.handler ?? (() => original.apply(ref, [])));
    };
    refuseOnError(lock, () => clearTimeout(timer as NodeJS.Timeout)); // clears intervals too
    return timer;
  }

  /** A tick of a job with a plain lock (not once-per-occurrence), a handler's error logged. */
  private runTick(locked: LockedJob, handler: () => unknown): Promise<unknown> {
    return this.executor.run(handler, locked.configuration, locked, this.jobLock).catch(this.handlerFailed);
  }

  /**
   * @internal Runs the job registered as `jobName` once now, as an operator asked (`trigger`): under its lock,
   * even while paused; `started` is called once the run has its lock. `undefined` for a job not registered
   * here, or a provider that cannot lock jobs.
   */
  runManually(jobName: string, manual: { actor: string; triggerId: string }, started: () => void) {
    const locked = this.jobs.get(jobName);
    const handler = this.handlers.get(jobName);
    if (!locked || !handler || !canLockJobs(this.settings.provider)) return undefined;
    const run = () => {
      started();
      return handler();
    };
    const manualLock = new JobLock(this.settings.provider, manual);
    return this.executor.run(run, locked.configuration, locked, manualLock).catch(this.handlerFailed);
  }

  /** @internal The names of the locked jobs registered here so far. */
  get registeredJobs(): IterableIterator<string> {
    return this.handlers.keys();
  }
}

/**
 * What a tick of `locked` runs: its decorated method, or (a runtime job) the callbacks cron held, called
 * as cron calls them, with the job's `onComplete` (`handlerFor()`, without it, for a run an operator asks
 * for and a catch-up). That argument is the same on every tick, so a tick's handler is made once, not once
 * per tick: a tick holds it while its claim waits for Redis.
 */
function cronHandlers(locked: LockedJob, cron: CronCallbacks, original: Callback[]) {
  const handlerWith = (args: unknown[]): (() => unknown) =>
    locked.handler ??
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
function catchUpWhenStarted(job: CronCallbacks, catchUp: () => void): void {
  if (job.isActive) {
    setImmediate(catchUp);
    return;
  }
  const start = job.start;
  job.start = function startThenCatchUp(this: CronCallbacks) {
    job.start = start;
    start.call(this);
    catchUp();
  };
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
