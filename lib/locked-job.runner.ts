import { Injectable, Logger } from '@nestjs/common';
import type { RunClaim } from './core/active-lock.js';
import { LockingTaskExecutor } from './core/locking-task-executor.js';
import type { TaskResult } from './core/task-result.js';
import type { LockedJob } from './locked-job.registry.js';

/** Runs one tick of a locked job: under its lock, with errors logged the way `@nestjs/schedule` logs them. */
@Injectable()
export class LockedJobRunner {
  /** `@nestjs/schedule` logs a failed job under this context. */
  private readonly logger = new Logger('Scheduler');

  constructor(private readonly executor: LockingTaskExecutor) {}

  /** Resolves to what the executor did, or `undefined` when the handler threw (the error is logged). */
  async run(job: LockedJob, handler: () => unknown, claim?: RunClaim): Promise<TaskResult<unknown> | undefined> {
    try {
      return await this.executor.run(handler, job.configuration, { jobName: job.jobName }, claim);
    } catch (error) {
      this.logger.error(error);
      return undefined;
    }
  }
}
