import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';

/** The parts of `@nestjs/schedule`'s `ScheduleExplorer` (6 and 12) a decorated job's handler is made and run with. */
interface ScheduleExplorer {
  logger: { error(message: unknown, ...rest: unknown[]): unknown };
  wrapFunctionInTryCatchBlocks(methodRef: Function, instance: object): (...args: unknown[]) => Promise<void>;
}

/** What a locked tick of a decorated job took back from around the explorer's wrapper. */
interface TickSlot {
  failed: boolean;
  error?: unknown;
  /** What the method resolved to. */
  result?: unknown;
}

/** A decorated method and the instance `@nestjs/schedule` calls it on. */
export interface DecoratedMethod {
  readonly instance: object;
  readonly method: Function;
}

/**
 * A decorated job's tick runs what `@nestjs/schedule`'s explorer made of the method (`wrapFunctionInTryCatchBlocks`),
 * not the bare method, because that is where instrumentation wraps jobs: `@nestjs/observe` patches that very
 * function, so its wrapper sits between the explorer's try/catch and the method. That wrapper keeps neither the
 * method's value nor its failure: the try/catch logs a failure with the explorer's logger and resolves. While a
 * locked tick runs, that logger hands the failure to the tick instead, which rethrows it, so the lock still records
 * the run as failed and the failure is logged once, by the tick, as before; outside locked ticks the logger logs as
 * it did. The method's value is kept by the method the explorer is handed (see {@link handlerOf}).
 */
@Injectable()
export class ExplorerHandlers implements OnModuleInit {
  private readonly running = new AsyncLocalStorage<TickSlot>();
  private explorer: ScheduleExplorer | undefined;

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
    this.explorer = explorer;
  }

  /**
   * The handler a locked tick of the decorated `method` runs: what the explorer makes of the method, with its own
   * `wrapFunctionInTryCatchBlocks` as instrumentation patched it, made anew from a stand-in of the method that keeps
   * its value for the tick. It resolves to the method's value and rejects with the failure the wrapper swallowed.
   * Called once the explorer has explored (when the orchestrator mounts jobs): it has its instrumentation by then.
   */
  handlerOf({ instance, method }: DecoratedMethod): () => Promise<unknown> {
    const made = this.explorer!.wrapFunctionInTryCatchBlocks(this.keepingValue(method), instance);
    return this.handlerAround(made);
  }

  /**
   * The handler of a locked tick that runs `made`, the explorer's wrapper of a method this module does not know
   * (a decorated job locked by a runtime declaration): it rejects with the failure the wrapper swallowed, and
   * resolves to `undefined`, as the wrapper does.
   */
  handlerAround(made: () => unknown): () => Promise<unknown> {
    return () => {
      const slot: TickSlot = { failed: false };
      return this.running.run(slot, async () => {
        await made();
        if (slot.failed) throw slot.error;
        return slot.result;
      });
    };
  }

  /**
   * `method`, keeping what it resolves to in the running tick's slot. It carries the method's name and metadata:
   * instrumentation reads them off the method it is handed (`@nestjs/observe` names the job by them).
   */
  private keepingValue(method: Function): Function {
    const running = this.running;
    const keeping = function (this: unknown, ...args: unknown[]): unknown {
      const value: unknown = method.apply(this, args);
      const slot = running.getStore();
      if (!slot) return value;
      if (!isThenable(value)) {
        slot.result = value;
        return value;
      }
      return Promise.resolve(value).then((resolved) => (slot.result = resolved));
    };
    Object.defineProperty(keeping, 'name', { value: method.name });
    for (const key of Reflect.getOwnMetadataKeys(method) as unknown[])
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, method), keeping);
    return keeping;
  }

  private findExplorer(): ScheduleExplorer {
    const wrapper = this.discovery.getProviders().find(({ metatype }) => metatype?.name === 'ScheduleExplorer');
    const explorer = wrapper?.instance as Partial<ScheduleExplorer> | undefined;
    const missing = !explorer
      ? 'no ScheduleExplorer provider'
      : typeof explorer.logger?.error !== 'function'
        ? 'no ScheduleExplorer.logger'
        : typeof explorer.wrapFunctionInTryCatchBlocks !== 'function'
          ? 'no ScheduleExplorer.wrapFunctionInTryCatchBlocks()'
          : undefined;
    if (missing) {
      throw new SchedulerLockConfigurationError(
        `This version of @nestjs/schedule has ${missing}, which nest-scheduler-lock needs to run a locked job's ` +
          'handler and tell a failed run from a successful one (supported: @nestjs/schedule 6 and 12), so the app ' +
          'is refused',
      );
    }
    return explorer as ScheduleExplorer;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
