import { Logger } from '@nestjs/common';
import { ActiveLock, type ActiveLockListener } from './active-lock.js';
import { FaultLog } from './fault-log.js';
import { createLockConfiguration, type LockConfiguration, type LockDefaults, type LockDurations } from './lock-configuration.js';
import { heldLocks, holdsLock } from './lock-context.js';
import { LockEvents, type LockEvent, type LockLostReason } from './lock-events.js';
import { LockNotHeldError, type LockProvider } from './lock-provider.js';
import type { TaskResult } from './task-result.js';

/** A lock to run a task under: `name`, and durations that default to the module's. */
export interface ExecuteWithLockOptions extends LockDurations {
  name: string;
}

/** Settings of a {@link LockingTaskExecutor}. */
export interface LockingTaskExecutorSettings {
  /** Durations for locks that do not set their own. Default: lockAtMostFor 60 s, lockAtLeastFor 0. */
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

/**
 * Runs tasks under a lock, ShedLock's `LockingTaskExecutor`: the task runs only if the lock is free
 * (otherwise it is skipped, never queued), and the lock is released when the task settles, kept until
 * `lockAtLeastFor`. Reentrant per async context and lock name. Store faults skip the task; they never
 * throw and never let it run unlocked. Task errors propagate unchanged, after the release.
 */
export class LockingTaskExecutor implements ActiveLockListener {
  private readonly logger = new Logger('SchedulerLock');
  private readonly faults = new FaultLog(this.logger);
  private readonly defaults: LockDefaults;
  private readonly lockedBy: string;
  private readonly events: LockEvents;

  constructor(
    private readonly provider: LockProvider,
    settings: LockingTaskExecutorSettings,
  ) {
    this.defaults = settings.defaults ?? DEFAULTS;
    this.lockedBy = settings.lockedBy;
    this.events = settings.events ?? new LockEvents();
  }

  /**
   * Runs `task` if the lock `options.name` can be taken, and releases the lock after it settles.
   * Resolves to `{ executed: true, result }`, or `{ executed: false, reason }` when the lock is held
   * elsewhere (`locked`) or the store failed (`store-error`). Rejects only with the task's own error.
   */
  executeWithLock<T>(task: () => T | Promise<T>, options: ExecuteWithLockOptions): Promise<TaskResult<T>> {
    return this.run(task, createLockConfiguration(options.name, options, this.defaults));
  }

  /** @internal {@link executeWithLock} for a configuration validated at startup. */
  async run<T>(task: () => T | Promise<T>, configuration: LockConfiguration, labels: RunLabels = {}): Promise<TaskResult<T>> {
    const { name } = configuration;
    if (holdsLock(name)) return { executed: true, result: await task() };

    this.emit(() => ({ type: 'attempt', ...this.base(name, labels) }));
    const requestedAt = Date.now();
    let lock;
    try {
      lock = await this.provider.lock(configuration);
    } catch (error) {
      this.faults.error(name, `Could not take lock "${name}"${jobLabel(labels)}, skipping this run: ${describe(error)}`);
      this.emit(() => ({ type: 'skipped', reason: 'store-error', error, ...this.base(name, labels) }));
      return { executed: false, reason: 'store-error', error };
    }
    this.faults.clear(name);
    if (!lock) {
      this.logger.debug(`Lock "${name}"${jobLabel(labels)} is held elsewhere, skipping this run`);
      this.emit(() => ({ type: 'skipped', reason: 'locked', ...this.base(name, labels) }));
      return { executed: false, reason: 'locked' };
    }

    const active = new ActiveLock(lock, this.lockedBy, requestedAt, this);
    this.emit(() => ({ type: 'acquired', fencingToken: lock.fencingToken, lockedUntil: active.lockedUntil.getTime(), ...this.base(name, labels) }));
    this.emit(() => ({ type: 'started', ...this.base(name, labels) }));
    const startedAt = performance.now();
    try {
      const result = await heldLocks.run({ name, context: active, parent: heldLocks.getStore() }, task);
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, ...this.base(name, labels) }));
      return { executed: true, result };
    } catch (error) {
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, error, ...this.base(name, labels) }));
      throw error;
    } finally {
      await this.release(active, startedAt, labels);
    }
  }

  /** Releases after the run; a failure is logged and emitted, never thrown over the task's outcome. */
  private async release(active: ActiveLock, startedAt: number, labels: RunLabels): Promise<void> {
    const { name } = active;
    try {
      await active.lock.unlock();
      this.emit(() => ({ type: 'released', heldForMs: performance.now() - startedAt, ...this.base(name, labels) }));
    } catch (error) {
      if (error instanceof LockNotHeldError) {
        this.logger.warn(`Lock "${name}"${jobLabel(labels)} was lost before its run ended (${error.reason}); another node may have run the job meanwhile`);
        this.emit(() => ({ type: 'release-failed', reason: error.reason, error, ...this.base(name, labels) }));
      } else {
        this.logger.error(`Could not release lock "${name}"${jobLabel(labels)}; it expires on its own: ${describe(error)}`);
        this.emit(() => ({ type: 'release-failed', reason: 'store-error', error, ...this.base(name, labels) }));
      }
    }
  }

  /** @internal */
  extended(active: ActiveLock): void {
    this.emit(() => ({ type: 'extended', lockedUntil: active.lockedUntil.getTime(), ...this.base(active.name, {}) }));
  }

  /** @internal */
  lost(active: ActiveLock, reason: LockLostReason): void {
    this.logger.warn(`Lock "${active.name}" was lost while its run was still going (${reason}); the run's signal is aborted`);
    this.emit(() => ({ type: 'lost', reason, ...this.base(active.name, {}) }));
  }

  private base(lockName: string, labels: RunLabels) {
    return { lockName, jobName: labels.jobName, lockedBy: this.lockedBy, at: Date.now() };
  }

  private emit(build: () => LockEvent): void {
    if (this.events.observed) this.events.emit(build());
  }
}

function jobLabel({ jobName }: RunLabels): string {
  return jobName ? ` (job "${jobName}")` : '';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
