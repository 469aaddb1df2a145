import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { JobLock } from '../core/job-lock.js';
import { LockingTaskExecutor } from '../core/locking-task-executor.js';
import { SchedulerLockConfigurationError } from '../core/lock-configuration.js';
import { canLockJobs } from '../core/provider-abilities.js';
import { EarlyCronTicks } from './early-cron-ticks.js';
import { ExplorerFailures } from './explorer-failures.js';
import { checkCronJob, checkTimerJob, type LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import type { CronTimeLike } from '../occurrence/cron-schedule.js';
import { OccurrenceJob, type OccurrenceServices } from '../occurrence/occurrence-job.js';
import { RecoveryWatcher } from '../occurrence/recovery-watcher.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

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
    private readonly earlyTicks: EarlyCronTicks,
    private readonly failures: ExplorerFailures,
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
      const cron = job as unknown as CronCallbacks;
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
      if (earlyTicks.take(name)) void (job as unknown as CronCallbacks).fireOnTick();
    };
    registry.addInterval = (name, timer) => this.addTimer(name, 'interval', timer, addInterval.bind(registry));
    registry.addTimeout = (name, timer) => this.addTimer(name, 'timeout', timer, addTimeout.bind(registry));
  }

  /**
   * Replaces the job's callbacks with one locked tick, claiming the tick's occurrence unless the job
   * opted out. Wrapping `fireOnTick` instead would release the lock too early: cron does not await an
   * async callback unless `waitForCompletion` is set.
   */
  private lockCronJob(locked: LockedJob, cron: CronCallbacks): void {
    const store = checkCronJob(locked, cron, this.settings.provider);
    const callbacks = cron._callbacks!; // an array: checkCronJob refuses a job without one
    const decorated = this.earlyTicks.handlerOf(locked.jobName);
    const handlerFor = cronHandlers(cron, callbacks.splice(0), decorated && (() => this.failures.run(decorated)));
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

  /** Registers the timer through `add`, its callback locked if `name` is a locked job of this `kind`. */
  private addTimer<T>(name: string, kind: 'interval' | 'timeout', timer: T, add: (name: string, timer: T) => void) {
    const ref = this.lockTimer(name, kind, timer) as TimerCallback;
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
      const ref = timer as TimerCallback;
      const original = ref._onTimeout!; // a function: checkTimerJob refuses a timer without one
      // A decorated job's callback is what @nestjs/schedule made of the method: see ExplorerFailures.
      const handlerWith = (args: unknown[]) => () => this.failures.run(() => original.apply(ref, args));
      ref._onTimeout = (...args) => this.runTick(locked, handlerWith(args));
      this.handlers.set(locked.jobName, handlerWith([]));
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
 * What a tick runs: a decorated job's `decorated` handler, or (a runtime job) the callbacks cron held, called
 * as cron calls them, with the job's `onComplete` (`handlerFor()`, without it, for a run an operator asks
 * for and a catch-up). That argument is the same on every tick, so a tick's handler is made once, not once
 * per tick: a tick holds it while its claim waits for Redis.
 */
function cronHandlers(cron: CronCallbacks, original: Callback[], decorated: (() => unknown) | undefined) {
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
