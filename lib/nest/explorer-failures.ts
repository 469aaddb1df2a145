import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';

/** The part of `@nestjs/schedule`'s `ScheduleExplorer` (6 and 12) that logs a decorated job's failure. */
interface ScheduleExplorer {
  logger: { error(message: unknown, ...rest: unknown[]): unknown };
}

/** A locked tick's failure, taken from the explorer's logger. */
interface FailureSlot {
  failed: boolean;
  error?: unknown;
}

/**
 * A decorated job's tick runs what `@nestjs/schedule`'s explorer made of the method (`wrapFunctionInTryCatchBlocks`),
 * not the bare method, because that is where instrumentation wraps jobs: `@nestjs/observe` patches that very
 * function, so its wrapper sits between the explorer's try/catch and the method. The try/catch logs a failure
 * with the explorer's logger and resolves; while a locked tick runs, that logger hands the failure to the tick
 * instead, which rethrows it. So the lock still records the run as failed and the failure is logged once, by the
 * tick, as before; outside locked ticks the logger logs as it did.
 */
@Injectable()
export class ExplorerFailures implements OnModuleInit {
  private readonly running = new AsyncLocalStorage<FailureSlot>();

  constructor(private readonly discovery: DiscoveryService) {}

  /** Every provider exists by now; the logger is read when a handler fails, so replacing it now is in time. */
  onModuleInit(): void {
    const explorer = this.findExplorer();
    const logger = explorer.logger;
    const running = this.running;
    explorer.logger = Object.assign(Object.create(logger) as ScheduleExplorer['logger'], {
      error(message: unknown, ...rest: unknown[]) {
        const slot = running.getStore();
        if (!slot || slot.failed) return logger.error(message, ...rest);
        slot.failed = true;
        slot.error = message;
      },
    });
  }

  /** Runs `handler` (the explorer's wrapper of a method) and rejects with the failure it swallowed, if any. */
  run(handler: () => unknown): Promise<unknown> {
    const slot: FailureSlot = { failed: false };
    return this.running.run(slot, async () => {
      const result = await handler();
      if (slot.failed) throw slot.error;
      return result;
    });
  }

  private findExplorer(): ScheduleExplorer {
    const wrapper = this.discovery.getProviders().find(({ metatype }) => metatype?.name === 'ScheduleExplorer');
    const explorer = wrapper?.instance as Partial<ScheduleExplorer> | undefined;
    if (typeof explorer?.logger?.error !== 'function') {
      const missing = explorer ? 'no ScheduleExplorer.logger' : 'no ScheduleExplorer provider';
      throw new SchedulerLockConfigurationError(
        `This version of @nestjs/schedule has ${missing}, which nest-scheduler-lock needs to tell a failed run ` +
          'of a locked job from a successful one (supported: @nestjs/schedule 6 and 12), so the app is refused',
      );
    }
    return explorer as ScheduleExplorer;
  }
}
