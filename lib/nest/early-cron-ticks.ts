import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { LockedJobRegistry } from './locked-job.registry.js';

/** The parts of `@nestjs/schedule`'s `SchedulerOrchestrator` (6 and 12) that hold decorated cron jobs. */
interface SchedulerOrchestrator {
  cronJobs: Record<string, { target: (...args: unknown[]) => unknown }>;
  mountCron(): void;
}

/**
 * `cron` fires a job inside its constructor when the first fire time has passed by less than its
 * `threshold` while the job starts (`Missed execution deadline by 4ms … Executing immediately`), or
 * with `runOnInit`. `@nestjs/schedule` creates decorated cron jobs started and registers them only
 * afterwards, so such a tick would run before the registry proxy locks the job — on every replica of
 * a rolling deploy at once.
 *
 * For a locked cron job, the orchestrator is handed a stand-in tick that only notes that cron fired;
 * the {@link SchedulerRegistryInterceptor} runs that tick under the lock once the job is registered, with
 * the handler the stand-in replaced: the method as `@nestjs/schedule` wrapped it, with whatever
 * instrumentation wrapped it there (`@nestjs/observe`), whichever was set up first.
 */
@Injectable()
export class EarlyCronTicks implements OnModuleInit {
  private readonly fired = new Set<string>();
  /** By job name: what the orchestrator held for each locked cron job before the stand-in. */
  private readonly handlers = new Map<string, () => unknown>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly jobs: LockedJobRegistry,
  ) {}

  /** Every `onModuleInit` runs before the orchestrator mounts cron jobs in `onApplicationBootstrap`. */
  onModuleInit(): void {
    const orchestrator = this.findOrchestrator();
    const mountCron = orchestrator.mountCron;
    // Patched, not done now: locked jobs are all known only once every onModuleInit has run.
    orchestrator.mountCron = () => {
      for (const [jobName, entry] of Object.entries(orchestrator.cronJobs)) {
        if (!this.jobs.find('cron', jobName)) continue;
        this.handlers.set(jobName, entry.target);
        entry.target = () => void this.fired.add(jobName);
      }
      mountCron.call(orchestrator);
    };
  }

  /** The handler of the decorated cron job `jobName`, as `@nestjs/schedule` made it; `undefined` for others. */
  handlerOf(jobName: string): (() => unknown) | undefined {
    return this.handlers.get(jobName);
  }

  /** Whether cron fired `jobName` while creating it, since the last call. */
  take(jobName: string): boolean {
    return this.fired.delete(jobName);
  }

  private findOrchestrator(): SchedulerOrchestrator {
    const wrapper = this.discovery.getProviders().find(({ metatype }) => metatype?.name === 'SchedulerOrchestrator');
    const orchestrator = wrapper?.instance as Partial<SchedulerOrchestrator> | undefined;
    const missing = !orchestrator
      ? 'no SchedulerOrchestrator provider'
      : typeof orchestrator.mountCron !== 'function'
        ? 'no SchedulerOrchestrator.mountCron()'
        : typeof orchestrator.cronJobs !== 'object'
          ? 'no SchedulerOrchestrator.cronJobs'
          : undefined;
    if (missing) {
      throw new SchedulerLockConfigurationError(
        `This version of @nestjs/schedule has ${missing}, which nest-scheduler-lock needs to lock cron jobs ` +
          'from their first tick (supported: @nestjs/schedule 6 and 12); a locked job could run unlocked at ' +
          'startup, so the app is refused',
      );
    }
    return orchestrator as SchedulerOrchestrator;
  }
}
