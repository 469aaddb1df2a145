import { Inject, Injectable } from '@nestjs/common';
import { LockingTaskExecutor } from './core/locking-task-executor.js';
import { createLockConfiguration, SchedulerLockConfigurationError, type RunLockConfiguration } from './core/lock-configuration.js';
import { resolveOccurrencePolicy, type OccurrencePolicy } from './occurrence/occurrence-policy.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockOptions } from './interfaces/scheduler-lock-options.interface.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';
import type { JobKind } from './scheduler-lock-metadata.accessor.js';

/** A job whose ticks run under a lock. */
export interface LockedJob {
  /** The job's name in `SchedulerRegistry`. */
  readonly jobName: string;
  /** `undefined` for a job declared for runtime registration: it locks whichever kind is added under `jobName`. */
  readonly kind: JobKind | undefined;
  readonly configuration: RunLockConfiguration;
  /** Where the lock was declared, for error messages. */
  readonly source: string;
  /** The decorated method, bound to its instance; runtime jobs run the callback they were added with. */
  readonly handler?: () => unknown;
  /** Once-per-occurrence settings when the job is (or may be, for runtime jobs) a cron job with them on. */
  readonly occurrence?: OccurrencePolicy;
  /** A runtime declaration's options, checked again once the job's kind is known. */
  readonly declaredOptions?: SchedulerLockOptions;
}

/**
 * The jobs that run under a lock, by registry name. Decorated jobs are found at startup; a job that
 * is added to `SchedulerRegistry` at runtime is locked when it was {@link declare}d first.
 */
@Injectable()
export class LockedJobRegistry {
  private readonly jobs = new Map<string, LockedJob>();
  private readonly sourcesByLock = new Map<string, string>();

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    private readonly executor: LockingTaskExecutor,
  ) {}

  /**
   * Declares that the job added later as `SchedulerRegistry.addCronJob(jobName, job)` (or
   * `addInterval` / `addTimeout`) runs under a lock. The lock name defaults to `jobName`.
   *
   * @throws SchedulerLockConfigurationError on a bad duration or a lock name already in use.
   */
  declare(jobName: string, options: SchedulerLockOptions = {}): void {
    const source = `runtime job "${jobName}"`;
    const configuration = createLockConfiguration(options.name ?? jobName, options, this.settings.defaults, source);
    const occurrence = resolveOccurrencePolicy(options, undefined, source);
    this.add({ jobName, kind: undefined, configuration, source, occurrence, declaredOptions: options });
  }

  /** @internal */
  add(job: LockedJob): void {
    const { name } = job.configuration;
    this.executor.assertSupported(job.configuration, job.source);
    const holder = this.sourcesByLock.get(name);
    if (holder !== undefined) {
      throw new SchedulerLockConfigurationError(`Duplicate lock name "${name}": used by ${holder} and by ${job.source}; give one of them another name`);
    }
    if (this.jobs.has(job.jobName)) {
      throw new SchedulerLockConfigurationError(`Job "${job.jobName}" is locked twice: by ${this.jobs.get(job.jobName)!.source} and by ${job.source}`);
    }
    this.sourcesByLock.set(name, job.source);
    this.jobs.set(job.jobName, job);
  }

  /** @internal How many jobs are locked (decorated, and declared for runtime registration). */
  get size(): number {
    return this.jobs.size;
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
