import { Injectable, Logger } from '@nestjs/common';
import { LockingTaskExecutor } from './core/locking-task-executor.js';
import type { LockedJob } from './locked-job.registry.js';

/** Runs one tick of a locked job: under its lock, with errors logged the way `@nestjs/schedule` logs them. */
@Injectable()
export class LockedJobRunner {
  /** `@nestjs/schedule` logs a failed job under this context. */
  private readonly logger = new Logger('Scheduler');

  constructor(private readonly executor: LockingTaskExecutor) {}

  async run(job: LockedJob, handler: () => unknown): Promise<void> {
    try {
      await this.executor.run(handler, job.configuration, { jobName: job.jobName });
    } catch (error) {
      this.logger.error(error);
    }
  }
}
