import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SchedulerLockConfigurationError } from './core/lock-configuration.js';
import { LockedJobRegistry, type LockedJob } from './locked-job.registry.js';
import { LockedJobRunner } from './locked-job.runner.js';

type CronJob = Parameters<SchedulerRegistry['addCronJob']>[1];
type Callback = (this: unknown, ...args: unknown[]) => unknown;

/** The parts of a cron 4 job and a Node timer that hold the function a tick runs. */
interface CronCallbacks {
  _callbacks?: Callback[];
  context: unknown;
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
  constructor(
    registry: SchedulerRegistry,
    private readonly jobs: LockedJobRegistry,
    private readonly runner: LockedJobRunner,
  ) {
    // Installed at construction: @nestjs/schedule registers jobs in onApplicationBootstrap, after every constructor.
    const { addCronJob, addInterval, addTimeout } = registry;
    registry.addCronJob = (name, job) => {
      const locked = this.jobs.find('cron', name);
      if (locked) this.lockCronJob(locked, job);
      return addCronJob.call(registry, name, job);
    };
    registry.addInterval = (name, timer) => {
      const locked = this.jobs.find('interval', name);
      if (locked) this.lockTimer(locked, timer);
      return addInterval.call(registry, name, timer);
    };
    registry.addTimeout = (name, timer) => {
      const locked = this.jobs.find('timeout', name);
      if (locked) this.lockTimer(locked, timer);
      return addTimeout.call(registry, name, timer);
    };
  }

  /**
   * Replaces the job's callbacks with one locked tick. Wrapping `fireOnTick` instead would release the
   * lock too early: cron does not await an async callback unless `waitForCompletion` is set.
   */
  private lockCronJob(locked: LockedJob, job: CronJob): void {
    const cron = job as unknown as CronCallbacks;
    const callbacks = cron._callbacks;
    if (!Array.isArray(callbacks)) throw unsupported(locked, 'this version of "cron" keeps its callbacks elsewhere');
    const original = callbacks.splice(0);
    const runAll = async (args: unknown[]) => {
      for (const callback of original) await callback.apply(cron.context, args);
    };
    callbacks.push((...args) => this.runner.run(locked, locked.handler ?? (() => runAll(args))));
  }

  private lockTimer(locked: LockedJob, timer: unknown): void {
    const ref = timer as TimerCallback;
    const original = ref?._onTimeout;
    if (typeof original !== 'function') throw unsupported(locked, 'the timer is not a Node.js Timeout');
    ref._onTimeout = (...args) => this.runner.run(locked, locked.handler ?? (() => original.apply(ref, args)));
  }
}

function unsupported(locked: LockedJob, why: string): SchedulerLockConfigurationError {
  return new SchedulerLockConfigurationError(`Cannot lock job "${locked.jobName}" (${locked.source}): ${why}; it would run unlocked, so it is refused`);
}
