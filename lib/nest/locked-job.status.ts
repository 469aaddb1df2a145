import { Inject, Injectable } from '@nestjs/common';
import type { JobRecord } from '../core/provider/lock-provider.js';
import { canReadJobRecords } from '../core/provider/provider-abilities.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** The last run of a once-per-occurrence job, cluster-wide. */
export interface JobStatus extends JobRecord {
  readonly jobName: string;
  readonly lockName: string;
}

/** Reads the run record of once-per-occurrence cron jobs, for operators (a status endpoint, an admin CLI). */
@Injectable()
export class LockedJobStatus {
  constructor(
    private readonly jobs: LockedJobRegistry,
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
  ) {}

  /**
   * The last claimed occurrence of the locked job registered as `jobName`: when it was due, who ran
   * it, when, and how it ended. `undefined` for an unknown job, one that has not run yet, one without
   * once-per-occurrence locking, or a provider that keeps no records.
   */
  async getJobStatus(jobName: string): Promise<JobStatus | undefined> {
    const job = this.jobs.get(jobName);
    if (!job) return undefined;
    const lockName = job.configuration.name;
    const { provider } = this.settings;
    const record = canReadJobRecords(provider) ? await provider.readJobRecord(lockName) : undefined;
    return record && { ...record, jobName, lockName };
  }
}
