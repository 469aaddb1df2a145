import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { SCHEDULE_METADATA, SCHEDULER_LOCK_OPTIONS } from './scheduler-lock.constants.js';
import type { JobKind } from '../occurrence/occurrence-options.js';
import type { SchedulerLockOptions } from './scheduler-lock-options.interface.js';

/** Reads `@SchedulerLock` options and the `@nestjs/schedule` metadata they pair with. */
@Injectable()
export class SchedulerLockMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getLockOptions(method: Function): SchedulerLockOptions | undefined {
    return this.reflector.get(SCHEDULER_LOCK_OPTIONS, method);
  }

  getJobKind(method: Function): JobKind | undefined {
    const kinds: Record<number, JobKind> = SCHEDULE_METADATA.kinds;
    return kinds[this.reflector.get(SCHEDULE_METADATA.type, method)];
  }

  /** The name `@nestjs/schedule` registers the job under, if it has one. */
  getJobName(method: Function, kind: JobKind): string | undefined {
    return kind === 'cron' ? this.cronOptions(method)?.name : this.reflector.get(SCHEDULE_METADATA.name, method);
  }

  /** Gives an unnamed job the name `@nestjs/schedule` will register it under. */
  setJobName(method: Function, kind: JobKind, name: string): void {
    const cronOptions = this.cronOptions(method);
    if (kind === 'cron' && cronOptions) cronOptions.name = name;
    else Reflect.defineMetadata(SCHEDULE_METADATA.name, name, method);
  }

  private cronOptions(method: Function): { name?: string } | undefined {
    return this.reflector.get(SCHEDULE_METADATA.cronOptions, method);
  }
}
