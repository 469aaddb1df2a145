import { Injectable } from '@nestjs/common';
import type { LockedJob } from './locked-job.js';
import type { JobSchedule } from './scheduled-job-parts.js';

/** A locked job as the registry proxy found it when it was added to `SchedulerRegistry`. */
export interface RegisteredJob {
  readonly job: LockedJob;
  readonly schedule: JobSchedule;
  /** What a run an operator asks for runs: the job's handler, without a tick's arguments. */
  readonly handler: () => unknown;
  /** For an interval or a timeout: what its timer calls, the locked tick (a test fires it: `TestNode.tick`). */
  readonly timerTick?: () => unknown;
}

/**
 * The locked jobs added to this app's `SchedulerRegistry`, by name: their handlers (for runs an operator asks
 * for), schedules (for the cluster's catalogue) and, for timers, locked ticks (for tests). Filled by the registry
 * proxy as jobs are added; nothing here reads `cron` or Node's timers.
 */
@Injectable()
export class RegisteredJobs {
  private readonly byName = new Map<string, RegisteredJob>();

  add(registered: RegisteredJob): void {
    this.byName.set(registered.job.jobName, registered);
  }

  get(jobName: string): RegisteredJob | undefined {
    return this.byName.get(jobName);
  }

  /** The names of the locked jobs added so far. */
  names(): IterableIterator<string> {
    return this.byName.keys();
  }
}
