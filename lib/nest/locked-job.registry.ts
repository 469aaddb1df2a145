import { Inject, Injectable } from '@nestjs/common';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import type { JobKind } from '../occurrence/occurrence-options.js';
import { createLockedJob, type LockedJob } from './locked-job.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockOptions } from './scheduler-lock-options.interface.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * The jobs that run under a lock, by registry name. Decorated jobs are found at startup; a job that
 * is added to `SchedulerRegistry` at runtime is locked when it was {@link declare}d first.
 */
@Injectable()
export class LockedJobRegistry {
  private readonly jobs = new Map<string, LockedJob>();
  private readonly sourcesByLock = new Map<string, string>();
  private readonly added: Array<(job: LockedJob) => void> = [];

  constructor(@Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings) {}

  /**
   * Declares that the job added later as `SchedulerRegistry.addCronJob(jobName, job)` (or
   * `addInterval` / `addTimeout`) runs under a lock. The lock name defaults to `jobName`.
   *
   * @throws SchedulerLockConfigurationError on a bad duration or a lock name already in use.
   */
  declare(jobName: string, options: SchedulerLockOptions = {}): void {
    const declaration = { jobName, kind: undefined, options, source: `runtime job "${jobName}"` };
    this.add(createLockedJob(declaration, this.settings));
  }

  /** @internal Adds `job`, refusing a lock name or job name already in use; returns it. */
  add(job: LockedJob): LockedJob {
    const { name } = job.configuration;
    const holder = this.sourcesByLock.get(name);
    if (holder !== undefined) {
      throw new SchedulerLockConfigurationError(
        `Duplicate lock name "${name}": used by ${holder} and by ${job.source}; give one of them another name`,
      );
    }
    if (this.jobs.has(job.jobName)) {
      throw new SchedulerLockConfigurationError(
        `Job "${job.jobName}" is locked twice: by ${this.jobs.get(job.jobName)!.source} and by ${job.source}`,
      );
    }
    this.sourcesByLock.set(name, job.source);
    this.jobs.set(job.jobName, job);
    for (const listener of this.added) listener(job);
    return job;
  }

  /** @internal Calls `listener` with every job added from now on: a runtime job declared after startup. */
  onAdded(listener: (job: LockedJob) => void): void {
    this.added.push(listener);
  }

  /** @internal How many jobs are locked (decorated, and declared for runtime registration). */
  get size(): number {
    return this.jobs.size;
  }

  /** @internal Every locked job (decorated, and declared for runtime registration). */
  all(): IterableIterator<LockedJob> {
    return this.jobs.values();
  }

  /** @internal The locked job registered under `jobName`, of any kind. */
  get(jobName: string): LockedJob | undefined {
    return this.jobs.get(jobName);
  }

  /** @internal The locked job registered under `jobName` as `kind`, if any. */
  find(kind: JobKind, jobName: string): LockedJob | undefined {
    const job = this.jobs.get(jobName);
    return job && (job.kind === undefined || job.kind === kind) ? job : undefined;
  }
}
