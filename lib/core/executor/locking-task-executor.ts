import { ActiveLock, type ActiveLockListener } from './active-lock.js';
import { AttemptDeadlines } from './attempt-deadlines.js';
import { FaultLog } from './fault-log.js';
import { HeldRuns } from './held-runs.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { AcquiredLock, LockAcquisition, SkippedRun } from './lock-acquisition.js';
import {
  createLockConfiguration,
  firstTake,
  type LockDefaults,
  type RunLockConfiguration,
} from '../provider/lock-configuration.js';
import { holdsLock } from '../task/lock-context.js';
import type { LockLostReason } from '../provider/errors.js';
import { LockEvents } from '../task/lock-events.js';
import type { LockProvider } from '../provider/lock-provider.js';
import {
  DEFAULT_ACQUIRE_TIMEOUT,
  type ExecuteWithLockOptions,
  type LockingTaskExecutorSettings,
} from './executor-settings.js';
import { consoleLogger, type SchedulerLockLogger } from './logger.js';
import { describeError, jobLabel } from '../provider/message-text.js';
import { assertCanRenewLeases, awaitProviderCall, describeProvider, usableLock } from '../provider/provider-checks.js';
import { RunEvents } from './run-events.js';
import type { RunInProgress } from './run-health.js';
import { leaseRenewer } from './run-instrumentation.js';
import { RunRelease } from './run-release.js';
import { UnusedLocks } from './unused-locks.js';
import type { SkipCounts, SkipReason, TaskResult } from '../task/task-result.js';

/** Descriptive fields a locked job adds to its events. */
interface RunLabels {
  jobName?: string;
}

const DEFAULTS: LockDefaults = { lockAtMostFor: 60_000, lockAtLeastFor: 0 };

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
  /** @internal This node's lease keeper: it renews the leases of the elections the node leads too. */
  readonly keeper: LeaseKeeper;
  private readonly defaults: LockDefaults;
  private readonly node: string;
  private readonly events: RunEvents;
  private readonly releases: RunRelease;
  private readonly deadlines: AttemptDeadlines;
  /** Locks that arrived too late to use (with `onCrash: 'rerun'`, another node runs the occurrence). */
  private readonly unused: UnusedLocks;
  private readonly logSkips: boolean;
  /** A plain lock from the provider: how a run is locked unless it is handed another {@link LockAcquisition}. */
  private readonly plainLock: LockAcquisition;
  /** The runs that hold their lock. */
  private readonly held: HeldRuns;
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
    this.node = settings.node;
    this.logger = settings.logger ?? consoleLogger;
    this.faults = new FaultLog(this.logger, settings.outages);
    this.logSkips = settings.logSkips ?? false;
    const events = settings.events ?? new LockEvents();
    this.events = new RunEvents(events, this.node);
    const { instrumentation } = settings;
    instrumentation?.attach?.(events);
    this.deadlines = new AttemptDeadlines(settings.acquireTimeout ?? DEFAULT_ACQUIRE_TIMEOUT);
    this.unused = new UnusedLocks(this.logger, this.faults);
    this.keeper = new LeaseKeeper(leaseRenewer(provider, instrumentation), this.faults);
    this.releases = new RunRelease(this.keeper, this.events, this.logger, this.faults);
    this.held = new HeldRuns(this.keeper, this.events, this.releases, instrumentation);
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
   * elsewhere (`locked`), the store failed (`provider-error`) or the app is shutting down (`shutdown`).
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
   *
   * Not `async`, and the run's own part ({@link runHeld}) apart: every node attempts every tick, and a
   * tick holds what it allocated here while its claim waits for Redis with the node's whole burst of
   * ticks. Only the node that takes the lock goes on to the async part.
   */
  run<T>(
    task: () => T | Promise<T>,
    configuration: RunLockConfiguration,
    labels: RunLabels = {},
    acquisition: LockAcquisition = this.plainLock,
  ): Promise<TaskResult<T>> {
    const { name } = configuration;
    const jobName = labels.jobName ?? null;
    if (holdsLock(name)) return this.reentered(task);
    if (this.closing)
      return Promise.resolve(this.events.skipped({ executed: false, reason: 'shutdown' }, name, jobName));

    this.events.attempt(name, jobName);
    const requestedAt = performance.now();
    let answer: Promise<AcquiredLock | SkippedRun>;
    try {
      const take = firstTake(configuration);
      const attempt = acquisition.acquire(take);
      // A burst waits longer, but a lock that arrives still has at least half its first TTL left.
      answer = this.deadlines.within(
        attempt,
        (late) => 'lock' in late && this.unused.release(name, late.lock, 'timed-out'),
        take.lockAtMostFor / 2,
      );
    } catch (error) {
      answer = Promise.reject(error); // a provider that threw instead of rejecting: a store error all the same
    }
    return answer.then(
      (taken) => this.answered(taken, task, configuration, jobName, requestedAt),
      (error: unknown) => this.notTaken(error, name, jobName, requestedAt),
    );
  }

  /** A run inside a run that holds the same lock: it runs as part of that run (reentrancy). */
  private async reentered<T>(task: () => T | Promise<T>): Promise<TaskResult<T>> {
    return { executed: true, result: await task() };
  }

  /**
   * The store did not answer the attempt, or failed: the run is skipped, the fault logged once per streak. An
   * attempt sent during an outage that fails once the store is back is that outage's (`requestedAt`).
   */
  private notTaken(error: unknown, name: string, jobName: string | null, requestedAt: number): SkippedRun {
    this.faults.storeFailed(
      name,
      `Could not take lock "${name}"${jobLabel(jobName)}, skipping this run: ${describeError(error)}`,
      error,
      requestedAt,
    );
    return this.events.skipped({ executed: false, reason: 'provider-error', error }, name, jobName);
  }

  /** The store answered: the run starts under its lock, or is skipped for the reason the store gave. */
  private answered<T>(
    taken: AcquiredLock | SkippedRun,
    task: () => T | Promise<T>,
    configuration: RunLockConfiguration,
    jobName: string | null,
    requestedAt: number,
  ): SkippedRun | Promise<TaskResult<T>> {
    const { name } = configuration;
    this.faults.storeAnswered(name);
    if ('lock' in taken && this.closing) {
      // Shutdown began while Redis answered: the keeper is stopping, so the run must not start.
      this.unused.release(name, taken.lock, 'shutdown');
      return this.events.skipped({ executed: false, reason: 'shutdown' }, name, jobName);
    }
    if (!('lock' in taken)) {
      if (this.logSkips) this.logger.debug(`Lock "${name}"${jobLabel(jobName)}: skipping this run (${taken.reason})`);
      return this.events.skipped(taken, name, jobName);
    }
    return this.held.start(new ActiveLock(taken, configuration, requestedAt, this.node, jobName, this.listener), task);
  }

  /** @internal The skips counted since the last call, by lock name and reason (for the cluster view). */
  drainSkips(): Map<string, Map<SkipReason, number>> {
    return this.events.drainSkips();
  }

  /** @internal Counts again skips drained but not sent (the store failed): the next drain has them too. */
  putBackSkips(skips: SkipCounts): void {
    this.events.putBackSkips(skips);
  }

  /**
   * Stops taking locks, waits up to `timeoutMs` for runs in progress, then aborts the signal of those
   * still going (reason `shutdown`) and waits a second more ({@link HeldRuns.windDown}). A lock whose run
   * is still going is not released: renewal stops, so it expires on its lease.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    this.closing = true;
    await this.held.windDown(timeoutMs);
    this.releases.stop();
    this.keeper.stop();
  }

  /** @internal The runs in progress on this node, for a health check. */
  runsInProgress(): RunInProgress[] {
    return this.held.describe();
  }

  private extended(active: ActiveLock): void {
    this.keeper.reschedule(active);
    this.events.ofRun(active, () => ({ type: 'extended', lockedUntil: active.lockedUntil }));
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
}
