import { Inject, Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SchedulerLockConfigurationError } from './core/lock-configuration.js';
import { LockingTaskExecutor } from './core/locking-task-executor.js';
import { EarlyCronTicks } from './early-cron-ticks.js';
import { LockedJobRegistry, type LockedJob } from './locked-job.registry.js';
import { LockedJobRunner } from './locked-job.runner.js';
import { warnIfLockOutlastsCron, warnIfLockOutlastsInterval } from './lock-outlasts-ticks.js';
import type { CronTimeLike } from './occurrence/cron-schedule.js';
import { OccurrenceJob, type OccurrenceServices } from './occurrence/occurrence-job.js';
import { resolveOccurrencePolicy } from './occurrence/occurrence-policy.js';
import { RecoveryWatcher } from './occurrence/recovery-watcher.js';
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
 * Proxies `SchedulerRegistry`: a job with a declared lock is wrapped when it is registered (by
 * `@nestjs/schedule` at bootstrap or by the app at runtime), so each tick runs through the lock while
 * direct calls of the method stay unlocked. The patch is on this app's registry instance only.
 */
@Injectable()
export class SchedulerRegistryInterceptor {
  private readonly occurrenceServices: OccurrenceServices;

  constructor(
    registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly runner: LockedJobRunner,
    watcher: RecoveryWatcher,
    executor: LockingTaskExecutor,
    earlyTicks: EarlyCronTicks,
    @Inject(SCHEDULER_LOCK_SETTINGS) settings: SchedulerLockSettings,
  ) {
    this.occurrenceServices = { runner, watcher, executor, provider: settings.provider };
    // Installed at construction: @nestjs/schedule registers jobs in onApplicationBootstrap, after every constructor.
    const { addCronJob, addInterval, addTimeout } = registry;
    registry.addCronJob = (name, job) => {
      const locked = this.jobs.find('cron', name);
      if (!locked) return addCronJob.call(registry, name, job);
      refuseOnError(() => this.lockCronJob(locked, job), () => job.stop());
      addCronJob.call(registry, name, job);
      // A tick cron fired while @nestjs/schedule created the job: now it runs, under the lock.
      if (earlyTicks.take(name)) void (job as unknown as CronCallbacks).fireOnTick();
    };
    registry.addInterval = (name, timer) => {
      const locked = this.jobs.find('interval', name);
      if (locked) refuseOnError(() => this.lockTimer(locked, 'interval', timer), () => clearInterval(timer as NodeJS.Timeout));
      return addInterval.call(registry, name, timer);
    };
    registry.addTimeout = (name, timer) => {
      const locked = this.jobs.find('timeout', name);
      if (locked) refuseOnError(() => this.lockTimer(locked, 'timeout', timer), () => clearTimeout(timer as NodeJS.Timeout));
      return addTimeout.call(registry, name, timer);
    };
  }

  /**
   * Replaces the job's callbacks with one locked tick, claiming the tick's occurrence unless the job
   * opted out. Wrapping `fireOnTick` instead would release the lock too early: cron does not await an
   * async callback unless `waitForCompletion` is set.
   */
  private lockCronJob(locked: LockedJob, job: CronJob): void {
    const cron = job as unknown as CronCallbacks;
    if (locked.kind === undefined && (cron.isActive || cron.lastDate())) {
      // Started before the proxy could lock it, cron may already have fired it inside CronJob.from().
      throw unsupported(locked, 'it was started (or ran) before addCronJob; create it with start: false and call job.start() after addCronJob');
    }
    const callbacks = cron._callbacks;
    if (!Array.isArray(callbacks)) throw unsupported(locked, 'this version of "cron" keeps its callbacks elsewhere');
    warnIfLockOutlastsCron(locked, cron.cronTime);
    const original = callbacks.splice(0);
    const handlerFor = (args: unknown[]) =>
      locked.handler ??
      (async () => {
        for (const callback of original) await callback.apply(cron.context, args);
      });
    if (!locked.occurrence) {
      callbacks.push((...args) => this.runner.run(locked, handlerFor(args)));
      return;
    }
    const occurrences = new OccurrenceJob(locked, locked.occurrence, cron.cronTime, this.occurrenceServices);
    callbacks.push((...args) => occurrences.tick(handlerFor(args)));
    if (locked.occurrence.catchUpWindow !== undefined) catchUpWhenStarted(cron, () => void occurrences.catchUp(handlerFor([])));
  }

  private lockTimer(locked: LockedJob, kind: 'interval' | 'timeout', timer: unknown): void {
    // A runtime declaration may carry cron-only options; now that the kind is known, they are an error.
    if (locked.declaredOptions) resolveOccurrencePolicy(locked.declaredOptions, kind, locked.source);
    const ref = timer as TimerCallback;
    const original = ref?._onTimeout;
    if (typeof original !== 'function') throw unsupported(locked, 'the timer is not a Node.js Timeout');
    ref._onTimeout = (...args) => this.runner.run(locked, locked.handler ?? (() => original.apply(ref, args)));
    if (kind === 'interval') warnIfLockOutlastsInterval(locked, timer);
  }
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

function unsupported(locked: LockedJob, why: string): SchedulerLockConfigurationError {
  return new SchedulerLockConfigurationError(`Cannot lock job "${locked.jobName}" (${locked.source}): ${why}; it would run unlocked, so it is refused`);
}
