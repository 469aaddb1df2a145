import { Logger } from '@nestjs/common';

/** `@nestjs/schedule` logs a failed job under this context; so do a locked job's tick and an operator's run. */
const schedulerLogger = new Logger('Scheduler');

/** Logs what a job's handler threw, as `@nestjs/schedule` does; a run's promise ends with it. */
export function logHandlerError(error: unknown): undefined {
  schedulerLogger.error(error);
  return undefined;
}
