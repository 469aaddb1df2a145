import { Logger } from '@nestjs/common';
import { ActiveLock, type ActiveLockListener } from './active-lock.js';
import { FaultLog } from './fault-log.js';
import { LeaseKeeper } from './lease-keeper.js';
import {
  createLockConfiguration,
  SchedulerLockConfigurationError,
  type LockDefaults,
  type LockDurations,
  type RunLockConfiguration,
} from './lock-configuration.js';
import { heldLocks, holdsLock } from './lock-context.js';
import { LockEvents, type LockEvent, type LockLostReason } from './lock-events.js';
import { LockNotHeldError, type LockProvider } from './lock-provider.js';
import type { TaskResult } from './task-result.js';

/** A lock to run a task under: `name`, and durations that default to the executor's. */
export interface ExecuteWithLockOptions extends LockDurations {
  name: string;
}

/** Settings of a {@link LockingTaskExecutor}. */
export interface LockingTaskExecutorSettings {
  /** Durations for locks that do not set their own. Default: lockAtMostFor 60 s, lockAtLeastFor 0, no keepAlive. */
  defaults?: LockDefaults;
  /** This node's name in events and lock contexts. */
  lockedBy: string;
  /** Where lock events go. */
  events?: LockEvents;
}

/** Descriptive fields a locked job adds to its events. */
export interface RunLabels {
  jobName?: string;
}

const DEFAULTS: LockDefaults = { lockAtMostFor: 60_000, lockAtLeastFor: 0 };

/** After `shutdown`'s timeout, runs whose signal was aborted get this long to wind down. */
const SHUTDOWN_GRACE_MS = 1_000;

/**
 * Runs tasks under a lock, ShedLock's `LockingTaskExecutor`: the task runs only if the lock is free
 * (otherwise it is skipped, never queued), and the lock is released when the task settles, kept until
 * `lockAtLeastFor`. Reentrant per async context and lock name. Store faults skip the task; they never
 * throw and never let it run unlocked. Task errors propagate unchanged, after the release.
 *
 * One executor is one node's lock loop: its {@link LeaseKeeper} renews `keepAlive` leases and aborts
 * the signal of runs whose lock is lost.
 */
export class LockingTaskExecutor implements ActiveLockListener {
  private readonly logger = new Logger('SchedulerLock');
  private readonly faults = new FaultLog(this.logger);
  private readonly keeper: LeaseKeeper;
  private readonly defaults: LockDefaults;
  private readonly lockedBy: string;
  private readonly events: LockEvents;
  /** Runs in progress, each with the promise that settles once its lock is released. */
  private readonly running = new Map<ActiveLock, Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly provider: LockProvider,
    settings: LockingTaskExecutorSettings,
  ) {
    this.defaults = settings.defaults ?? DEFAULTS;
    this.lockedBy = settings.lockedBy;
    this.events = settings.events ?? new LockEvents();
    this.keeper = new LeaseKeeper(provider, this.faults);
  }

  /**
   * Runs `task` if the lock `options.name` can be taken, and releases the lock after it settles.
   * Resolves to `{ executed: true, result }`, or `{ executed: false, reason }` when the lock is held
   * elsewhere (`locked`), the store failed (`store-error`) or the app is shutting down (`shutdown`).
   * Rejects with the task's own error, or a {@link SchedulerLockConfigurationError} for bad options.
   */
  async executeWithLock<T>(task: () => T | Promise<T>, options: ExecuteWithLockOptions): Promise<TaskResult<T>> {
    const configuration = createLockConfiguration(options.name, options, this.defaults);
    this.assertSupported(configuration, `lock "${options.name}"`);
    return this.run(task, configuration);
  }

  /** @internal Throws if `configuration` needs a capability the provider lacks. */
  assertSupported(configuration: RunLockConfiguration, subject: string): void {
    if (configuration.lease !== undefined && typeof this.provider.renewLeases !== 'function') {
      throw new SchedulerLockConfigurationError(`${subject}: keepAlive needs a provider with renewLeases(), which this provider does not have`);
    }
  }

  /** @internal {@link executeWithLock} for a configuration validated at startup. */
  async run<T>(task: () => T | Promise<T>, configuration: RunLockConfiguration, labels: RunLabels = {}): Promise<TaskResult<T>> {
    const { name } = configuration;
    if (holdsLock(name)) return { executed: true, result: await task() };
    if (this.closing) {
      this.emit(() => ({ type: 'skipped', reason: 'shutdown', ...this.base(name, labels.jobName) }));
      return { executed: false, reason: 'shutdown' };
    }

    this.emit(() => ({ type: 'attempt', ...this.base(name, labels.jobName) }));
    const ttl = Math.min(configuration.lease ?? Infinity, configuration.lockAtMostFor);
    const requestedAt = performance.now();
    let lock;
    try {
      // A renewing lock is taken for one lease; the keeper carries it towards lockAtMostFor.
      lock = await this.provider.lock(ttl === configuration.lockAtMostFor ? configuration : { ...configuration, lockAtMostFor: ttl });
    } catch (error) {
      this.faults.error(name, `Could not take lock "${name}"${jobLabel(labels)}, skipping this run: ${describe(error)}`);
      this.emit(() => ({ type: 'skipped', reason: 'store-error', error, ...this.base(name, labels.jobName) }));
      return { executed: false, reason: 'store-error', error };
    }
    this.faults.clear(name);
    if (!lock) {
      this.logger.debug(`Lock "${name}"${jobLabel(labels)} is held elsewhere, skipping this run`);
      this.emit(() => ({ type: 'skipped', reason: 'locked', ...this.base(name, labels.jobName) }));
      return { executed: false, reason: 'locked' };
    }

    const active = new ActiveLock(lock, configuration, requestedAt, this.lockedBy, labels.jobName, this);
    this.emit(() => ({ type: 'acquired', lockedUntil: active.lockedUntil.getTime(), ...this.runBase(active) }));
    const outcome = this.hold(active, task);
    this.running.set(active, outcome);
    try {
      return { executed: true, result: await outcome };
    } finally {
      this.running.delete(active);
    }
  }

  /**
   * Stops taking locks, waits up to `timeoutMs` for runs in progress, then aborts the signal of those
   * still going (reason `shutdown`) and waits {@link SHUTDOWN_GRACE_MS} more. A lock whose run is still
   * going is not released: renewal stops, so it expires on its lease.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (!(await settledWithin(this.running.values(), timeoutMs))) {
      for (const active of this.running.keys()) active.markLost('shutdown');
      await settledWithin(this.running.values(), SHUTDOWN_GRACE_MS);
    }
    this.keeper.stop();
  }

  /** Runs the task with its lock as the async context's innermost lock, then releases it. */
  private async hold<T>(active: ActiveLock, task: () => T | Promise<T>): Promise<T> {
    this.keeper.track(active);
    this.emit(() => ({ type: 'started', ...this.runBase(active) }));
    const startedAt = performance.now();
    const frame = { name: active.name, context: active, parent: heldLocks.getStore(), ended: false };
    try {
      const result = await heldLocks.run(frame, task);
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, ...this.runBase(active) }));
      return result;
    } catch (error) {
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, error, ...this.runBase(active) }));
      throw error;
    } finally {
      frame.ended = true;
      this.keeper.untrack(active);
      await this.release(active, startedAt);
    }
  }

  /** Releases after the run; a failure is logged and emitted, never thrown over the task's outcome. */
  private async release(active: ActiveLock, startedAt: number): Promise<void> {
    const { name, jobName } = active;
    try {
      await active.lock.unlock();
      this.emit(() => ({ type: 'released', heldForMs: performance.now() - startedAt, ...this.runBase(active) }));
    } catch (error) {
      if (error instanceof LockNotHeldError) {
        this.logger.warn(`Lock "${name}"${jobLabel({ jobName })} was lost before its run ended (${error.reason}); another node may have run the job meanwhile`);
        this.emit(() => ({ type: 'release-failed', reason: error.reason, error, ...this.runBase(active) }));
      } else {
        this.logger.error(`Could not release lock "${name}"${jobLabel({ jobName })}; it expires on its own: ${describe(error)}`);
        this.emit(() => ({ type: 'release-failed', reason: 'store-error', error, ...this.runBase(active) }));
      }
    }
  }

  /** @internal */
  extended(active: ActiveLock): void {
    this.emit(() => ({ type: 'extended', lockedUntil: active.lockedUntil.getTime(), ...this.runBase(active) }));
  }

  /** @internal */
  lost(active: ActiveLock, reason: LockLostReason): void {
    this.logger.warn(`Lock "${active.name}"${jobLabel(active)} was lost while its run was still going (${reason}); the run's signal is aborted`);
    this.emit(() => ({ type: 'lost', reason, ...this.runBase(active) }));
  }

  private base(lockName: string, jobName: string | undefined) {
    return { lockName, jobName, lockedBy: this.lockedBy, at: Date.now() };
  }

  private runBase(active: ActiveLock) {
    return { ...this.base(active.name, active.jobName), fencingToken: active.fencingToken };
  }

  private emit(build: () => LockEvent): void {
    if (this.events.observed) this.events.emit(build());
  }
}

/** Whether all `promises` settled within `ms`. */
async function settledWithin(promises: Iterable<Promise<unknown>>, ms: number): Promise<boolean> {
  const list = [...promises];
  if (list.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([Promise.allSettled(list).then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function jobLabel({ jobName }: { jobName?: string }): string {
  return jobName ? ` (job "${jobName}")` : '';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
