import { ActiveLock, type ActiveLockListener } from './active-lock.js';
import { AttemptDeadlines } from './attempt-deadlines.js';
import { FaultLog } from './fault-log.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { AcquiredLock, LockAcquisition, SkippedRun } from './lock-acquisition.js';
import {
  createLockConfiguration,
  firstTake,
  type LockDefaults,
  type RunLockConfiguration,
} from './lock-configuration.js';
import { heldLocks, holdsLock } from './lock-context.js';
import { LockEvents, type LockLostReason } from './lock-events.js';
import type { LockProvider, SimpleLock } from './lock-provider.js';
import type { ExecuteWithLockOptions, LockingTaskExecutorSettings } from './executor-settings.js';
import type { StoreOutageReport } from './store-outage.js';
import { consoleLogger, type SchedulerLockLogger } from './logger.js';
import { describeError, jobLabel } from './messages.js';
import { assertCanRenewLeases, awaitProviderCall, describeProvider, usableLock } from './provider-contract.js';
import { RunEvents } from './run-events.js';
import { describeRun, type RunInProgress } from './run-health.js';
import { leaseRenewer, type RunInstrumentation } from './run-instrumentation.js';
import { RunRelease } from './run-release.js';
import { settledWithin } from './settled-within.js';
import type { SkipReason, TaskResult } from './task-result.js';

/** Descriptive fields a locked job adds to its events. */
interface RunLabels {
  jobName?: string;
}

const DEFAULTS: LockDefaults = { lockAtMostFor: 60_000, lockAtLeastFor: 0 };
const DEFAULT_ACQUIRE_TIMEOUT = 2_000;

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
export class LockingTaskExecutor {
  private readonly logger: SchedulerLockLogger;
  private readonly faults: FaultLog;
  private readonly keeper: LeaseKeeper;
  private readonly defaults: LockDefaults;
  private readonly lockedBy: string;
  private readonly events: RunEvents;
  private readonly releases: RunRelease;
  private readonly deadlines: AttemptDeadlines;
  private readonly outages: StoreOutageReport | undefined;
  private readonly instrumentation: RunInstrumentation | undefined;
  /** A plain lock from the provider: how a run is locked unless it is handed another {@link LockAcquisition}. */
  private readonly plainLock: LockAcquisition;
  /** Runs in progress, each with the promise that settles once its lock is released. */
  private readonly running = new Map<ActiveLock, Promise<unknown>>();
  private closing = false;
  /** The provider's class, for messages about what it lacks or returned. */
  private readonly providerName: string;
  /** What the run's {@link ActiveLock} reports back: extensions and lost locks. */
  private readonly listener: ActiveLockListener;

  constructor(
    private readonly provider: LockProvider,
    settings: LockingTaskExecutorSettings,
  ) {
    this.defaults = settings.defaults ?? DEFAULTS;
    this.lockedBy = settings.lockedBy;
    this.logger = settings.logger ?? consoleLogger;
    this.faults = new FaultLog(this.logger);
    const events = settings.events ?? new LockEvents();
    this.events = new RunEvents(events, this.lockedBy);
    this.instrumentation = settings.instrumentation;
    this.instrumentation?.attach?.(events);
    this.deadlines = new AttemptDeadlines(settings.acquireTimeout ?? DEFAULT_ACQUIRE_TIMEOUT);
    this.outages = settings.outages;
    this.keeper = new LeaseKeeper(leaseRenewer(provider, this.instrumentation), this.faults);
    this.releases = new RunRelease(this.keeper, this.events, this.logger);
    this.providerName = describeProvider(provider);
    this.plainLock = { acquire: (configuration) => this.lockPlain(configuration) };
    this.listener = {
      providerName: this.providerName,
      extended: (active) => this.extended(active),
      lost: (active, reason) => this.lost(active, reason),
    };
  }

  /**
   * Runs `task` if the lock `options.name` can be taken, and releases the lock after it settles.
   * Resolves to `{ executed: true, result }`, or `{ executed: false, reason }` when the lock is held
   * elsewhere (`locked`), the store failed (`store-error`) or the app is shutting down (`shutdown`).
   * Rejects with the task's own error, or a {@link SchedulerLockConfigurationError} for bad options.
   */
  async executeWithLock<T>(task: () => T | Promise<T>, options: ExecuteWithLockOptions): Promise<TaskResult<T>> {
    const configuration = createLockConfiguration(options.name, options, this.defaults);
    assertCanRenewLeases(this.provider, configuration, `lock "${options.name}"`);
    return this.run(task, configuration);
  }

  /**
   * @internal {@link executeWithLock} for a configuration validated at startup, the lock taken the way
   * `acquisition` says (a plain `lock()` by default).
   */
  async run<T>(
    task: () => T | Promise<T>,
    configuration: RunLockConfiguration,
    labels: RunLabels = {},
    acquisition: LockAcquisition = this.plainLock,
  ): Promise<TaskResult<T>> {
    const { name } = configuration;
    const { jobName } = labels;
    if (holdsLock(name)) return { executed: true, result: await task() };
    if (this.closing) return this.events.skipped({ executed: false, reason: 'shutdown' }, name, jobName);

    this.events.attempt(name, jobName);
    const requestedAt = performance.now();
    let taken: AcquiredLock | SkippedRun;
    try {
      const attempt = acquisition.acquire(firstTake(configuration));
      taken = await this.deadlines.within(
        attempt,
        (late) => 'lock' in late && this.abandon(name, late.lock, 'its attempt timed out'),
      );
    } catch (error) {
      if (!this.outages?.covers(error)) {
        this.faults.error(
          name,
          `Could not take lock "${name}"${jobLabel(jobName)}, skipping this run: ${describeError(error)}`,
        );
      }
      return this.events.skipped({ executed: false, reason: 'store-error', error }, name, jobName);
    }
    this.outages?.answered();
    this.faults.clear(name);
    if ('lock' in taken && this.closing) {
      // Shutdown began while Redis answered: the keeper is stopping, so the run must not start.
      this.abandon(name, taken.lock, 'the app is shutting down');
      return this.events.skipped({ executed: false, reason: 'shutdown' }, name, jobName);
    }
    if (!('lock' in taken)) {
      this.logger.debug(`Lock "${name}"${jobLabel(jobName)}: skipping this run (${taken.reason})`);
      return this.events.skipped(taken, name, jobName);
    }

    const active = new ActiveLock(taken, configuration, requestedAt, this.lockedBy, jobName, this.listener);
    this.events.ofRun(active, () => ({ type: 'acquired', lockedUntil: active.lockedUntil.getTime() }));
    const outcome = this.hold(active, task);
    this.running.set(active, outcome);
    try {
      return { executed: true, result: await outcome };
    } finally {
      this.running.delete(active);
    }
  }

  /** @internal The skips counted since the last call, by lock name and reason (for the cluster view). */
  drainSkips(): Map<string, Map<SkipReason, number>> {
    return this.events.drainSkips();
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
    this.releases.stop();
    this.keeper.stop();
  }

  /** @internal The runs in progress on this node, for a health check. */
  runsInProgress(): RunInProgress[] {
    const now = performance.now();
    return [...this.running.keys()].map((active) => describeRun(active, now));
  }

  private extended(active: ActiveLock): void {
    this.keeper.reschedule(active);
    this.events.ofRun(active, () => ({ type: 'extended', lockedUntil: active.lockedUntil.getTime() }));
  }

  private lost(active: ActiveLock, reason: LockLostReason): void {
    if (this.releases.pending(active)) return; // its run has ended: the retry reports how the record went
    this.logger.warn(
      `Lock "${active.name}"${jobLabel(active.jobName)} was lost while its run was still going (${reason}); ` +
        "the run's signal is aborted",
    );
    this.events.ofRun(active, () => ({ type: 'lost', reason }));
  }

  /** The provider's `lock()`, its answer checked: a broken provider is named in the log, never a TypeError. */
  private async lockPlain(configuration: RunLockConfiguration): Promise<AcquiredLock | SkippedRun> {
    const locking = awaitProviderCall(this.provider.lock(configuration), this.providerName, 'lock()');
    const lock = usableLock(await locking, this.providerName, 'lock()');
    return lock ? { lock } : { executed: false, reason: 'locked' };
  }

  /**
   * Releases a lock that must not be used (its attempt timed out, or shutdown began meanwhile). An
   * occurrence's record keeps saying running without a lock, as after a crash: with `onCrash: 'rerun'`
   * another node runs it.
   */
  private abandon(name: string, lock: SimpleLock, why: string): void {
    this.logger.warn(`Lock "${name}" arrived after ${why}; releasing it unused`);
    lock
      .unlock()
      .catch((error: unknown) =>
        this.faults.error(
          name,
          `Could not release the late lock "${name}"; it expires on its own: ${describeError(error)}`,
        ),
      );
  }

  /** Runs the task with its lock as the async context's innermost lock, then releases it. */
  private async hold<T>(active: ActiveLock, task: () => T | Promise<T>): Promise<T> {
    this.keeper.track(active);
    this.events.ofRun(active, () => ({ type: 'started' }));
    const startedAt = performance.now();
    const frame = { name: active.name, context: active, parent: heldLocks.getStore(), ended: false };
    let failed = true;
    let failure: unknown;
    try {
      // Without an instrumentation, `?.` makes no closure: the run costs what it did.
      const around = this.instrumentation?.around(active, () => heldLocks.run(frame, task));
      const result = await (around ?? heldLocks.run(frame, task));
      failed = false;
      this.events.ofRun(active, () => ({ type: 'finished', durationMs: performance.now() - startedAt }));
      return result;
    } catch (error) {
      failure = error;
      this.events.ofRun(active, () => ({ type: 'finished', durationMs: performance.now() - startedAt, error }));
      throw error;
    } finally {
      frame.ended = true;
      this.keeper.untrack(active);
      await this.releases.release(active, startedAt, failed, failure);
    }
  }
}
