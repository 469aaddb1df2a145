import { Logger } from '@nestjs/common';
import { ActiveLock, type ActiveLockListener, type RunClaim } from './active-lock.js';
import { AttemptDeadlines } from './attempt-deadlines.js';
import { FaultLog } from './fault-log.js';
import { LeaseKeeper } from './lease-keeper.js';
import {
  createLockConfiguration,
  initialTtl,
  SchedulerLockConfigurationError,
  type LockDefaults,
  type LockDurations,
  type RunLockConfiguration,
} from './lock-configuration.js';
import { heldLocks, holdsLock } from './lock-context.js';
import { LockEvents, type LockEvent, type LockLostReason } from './lock-events.js';
import { LockNotHeldError, type LockProvider, type RunOutcome, type SimpleLock } from './lock-provider.js';
import { OutcomeRetries } from './outcome-retries.js';
import { awaitProviderCall, checkedClaim, describeProvider, usableLock } from './provider-contract.js';
import type { StoreOutageReport } from './store-outage.js';
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
  /**
   * How long a lock attempt may take before the run is skipped as a store error (ms; noticed within a
   * quarter more). Default 2 s. A lock that arrives later is released at once, so a slow or
   * reconnecting store never blocks the job.
   */
  acquireTimeout?: number;
  /** Reports store outages once each; the failures it covers get no per-lock line. */
  outages?: StoreOutageReport;
}

/** Descriptive fields a locked job adds to its events. */
export interface RunLabels {
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
export class LockingTaskExecutor implements ActiveLockListener {
  private readonly logger = new Logger('SchedulerLock');
  private readonly faults = new FaultLog(this.logger);
  private readonly keeper: LeaseKeeper;
  private readonly defaults: LockDefaults;
  private readonly lockedBy: string;
  private readonly events: LockEvents;
  private readonly deadlines: AttemptDeadlines;
  private readonly outages: StoreOutageReport | undefined;
  /** Runs in progress, each with the promise that settles once its lock is released. */
  private readonly running = new Map<ActiveLock, Promise<unknown>>();
  private readonly unrecorded = new OutcomeRetries();
  private closing = false;
  /** @internal The provider's class, for messages about what it lacks or returned. */
  readonly providerName: string;

  constructor(
    private readonly provider: LockProvider,
    settings: LockingTaskExecutorSettings,
  ) {
    this.defaults = settings.defaults ?? DEFAULTS;
    this.lockedBy = settings.lockedBy;
    this.events = settings.events ?? new LockEvents();
    this.deadlines = new AttemptDeadlines(settings.acquireTimeout ?? DEFAULT_ACQUIRE_TIMEOUT);
    this.outages = settings.outages;
    this.keeper = new LeaseKeeper(provider, this.faults);
    this.providerName = describeProvider(provider);
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
      throw new SchedulerLockConfigurationError(
        `${subject}: keepAlive needs a provider with renewLeases(), which provider ${this.providerName} does not have`,
      );
    }
  }

  /** @internal Throws if the provider cannot claim occurrences (or, for `onCrash: 'rerun'`, recover them). */
  assertSupportsOccurrences(subject: string, recovery: boolean): void {
    const needed = recovery ? (['lockOccurrence', 'recoverOccurrence'] as const) : (['lockOccurrence'] as const);
    const missing = needed.filter((method) => typeof this.provider[method] !== 'function');
    if (missing.length > 0) {
      throw new SchedulerLockConfigurationError(
        `${subject}: once-per-occurrence locking needs a provider with ${missing.join('() and ')}(), which provider ` +
          `${this.providerName} does not have; set occurrence: false`,
      );
    }
  }

  /**
   * @internal {@link executeWithLock} for a configuration validated at startup; with a `claim`, the
   * run takes the lock for one occurrence of a cron job (or re-runs it after its node died).
   */
  async run<T>(
    task: () => T | Promise<T>,
    configuration: RunLockConfiguration,
    labels: RunLabels = {},
    claim?: RunClaim,
  ): Promise<TaskResult<T>> {
    const { name } = configuration;
    if (holdsLock(name)) return { executed: true, result: await task() };
    if (this.closing) return this.skip({ executed: false, reason: 'shutdown' }, name, labels);

    this.emit(() => ({ type: 'attempt', ...this.base(name, labels.jobName) }));
    const requestedAt = performance.now();
    let taken: Taken | Skipped;
    try {
      taken = await this.deadlines.within(this.take(configuration, claim), (late) => 'lock' in late && this.abandon(name, late.lock, 'its attempt timed out'));
    } catch (error) {
      if (!this.outages?.covers(error)) {
        const message = `Could not take lock "${name}"${jobLabel(labels)}, skipping this run: ${describe(error)}`;
        this.faults.error(name, message);
      }
      return this.skip({ executed: false, reason: 'store-error', error }, name, labels);
    }
    this.outages?.answered();
    this.faults.clear(name);
    if ('lock' in taken && this.closing) {
      // Shutdown began while Redis answered: the keeper is stopping, so the run must not start.
      this.abandon(name, taken.lock, 'the app is shutting down');
      return this.skip({ executed: false, reason: 'shutdown' }, name, labels);
    }
    if (!('lock' in taken)) {
      this.logger.debug(`Lock "${name}"${jobLabel(labels)}: skipping this run (${taken.reason})`);
      return this.skip(taken, name, labels);
    }

    const active = new ActiveLock(taken.lock, configuration, requestedAt, this.lockedBy, labels.jobName, this, claim, taken.recovery);
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
   * Releases a lock that must not be used (its attempt timed out, or shutdown began meanwhile). An
   * occurrence's record keeps saying running without a lock, as after a crash: with `onCrash: 'rerun'`
   * another node runs it.
   */
  private abandon(name: string, lock: SimpleLock, why: string): void {
    this.logger.warn(`Lock "${name}" arrived after ${why}; releasing it unused`);
    lock.unlock().catch((error: unknown) => this.faults.error(name, `Could not release the late lock "${name}"; it expires on its own: ${describe(error)}`));
  }

  /** Asks the provider for the lock, the occurrence or the recovery the claim names. */
  private async take(configuration: RunLockConfiguration, claim: RunClaim | undefined): Promise<Taken | Skipped> {
    // A renewing lock is taken for one lease; the keeper carries it towards lockAtMostFor.
    const ttl = initialTtl(configuration);
    const forStore = ttl === configuration.lockAtMostFor ? configuration : { ...configuration, lockAtMostFor: ttl };
    // What the provider returns is checked, so a broken provider is named in the log, never a TypeError.
    const provider = this.providerName;
    if (!claim) {
      const locking = awaitProviderCall(this.provider.lock(forStore), provider, 'lock()');
      const lock = usableLock(await locking, provider, 'lock()');
      return lock ? { lock } : { executed: false, reason: 'locked' };
    }
    if (claim.recoverUpTo !== undefined) {
      const grace = claim.recoveryGrace ?? 0;
      const recovering = this.provider.recoverOccurrence!(forStore, claim.occurrence, claim.recoverUpTo, grace);
      const recovered = await checkedClaim(recovering, provider, 'recoverOccurrence()');
      if ('lock' in recovered) return { lock: recovered.lock, recovery: { attempt: recovered.attempt, previousHolder: recovered.previousHolder } };
      return recovered.refused === 'running' ? { executed: false, reason: 'locked' } : { executed: false, reason: 'already-ran', running: false };
    }
    const claiming = this.provider.lockOccurrence!(forStore, claim.occurrence);
    const claimed = await checkedClaim(claiming, provider, 'lockOccurrence()');
    if ('lock' in claimed) return { lock: claimed.lock };
    return claimed.refused === 'locked' ? { executed: false, reason: 'locked' } : { executed: false, reason: 'already-ran', running: claimed.running };
  }

  private skip(result: Skipped, name: string, labels: RunLabels): Skipped {
    const error = 'error' in result ? result.error : undefined;
    this.emit(() => ({ type: 'skipped', reason: result.reason, error, ...this.base(name, labels.jobName) }));
    return result;
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
    const unrecorded = this.unrecorded.stop();
    if (unrecorded > 0) {
      this.logger.warn(
        `Shutting down with ${unrecorded} run outcome(s) not recorded (Redis unreachable); with onCrash 'rerun' ` +
          'another node re-runs those occurrences once their recovery grace has passed',
      );
    }
    this.keeper.stop();
  }

  /** Runs the task with its lock as the async context's innermost lock, then releases it. */
  private async hold<T>(active: ActiveLock, task: () => T | Promise<T>): Promise<T> {
    this.keeper.track(active);
    this.emit(() => ({ type: 'started', ...this.runBase(active) }));
    const startedAt = performance.now();
    const frame = { name: active.name, context: active, parent: heldLocks.getStore(), ended: false };
    let failed = true;
    try {
      const result = await heldLocks.run(frame, task);
      failed = false;
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, ...this.runBase(active) }));
      return result;
    } catch (error) {
      this.emit(() => ({ type: 'finished', durationMs: performance.now() - startedAt, error, ...this.runBase(active) }));
      throw error;
    } finally {
      frame.ended = true;
      this.keeper.untrack(active);
      await this.release(active, startedAt, failed);
    }
  }

  /** Releases after the run; a failure is logged and emitted, never thrown over the task's outcome. */
  private async release(active: ActiveLock, startedAt: number, failed: boolean): Promise<void> {
    const { name, jobName, lock } = active;
    const outcome: RunOutcome = failed ? 'failed' : 'succeeded';
    try {
      // An occurrence's run is recorded as finished in the same round trip as the release.
      if (active.occurrence && lock.finish) await lock.finish(outcome);
      else await lock.unlock();
      this.emit(() => ({ type: 'released', heldForMs: performance.now() - startedAt, ...this.runBase(active) }));
    } catch (error) {
      if (error instanceof LockNotHeldError) {
        this.logger.warn(`Lock "${name}"${jobLabel({ jobName })} was lost before its run ended (${error.reason}); another node may have run the job meanwhile`);
        this.emit(() => ({ type: 'release-failed', reason: error.reason, error, ...this.runBase(active) }));
      } else if (active.occurrence && lock.finish) {
        this.logger.error(
          `Could not record how the run of lock "${name}"${jobLabel({ jobName })} ended (${outcome}): ${describe(error)}; ` +
            'retrying until Redis answers, keeping its lease meanwhile',
        );
        this.emit(() => ({ type: 'release-failed', reason: 'store-error', error, ...this.runBase(active) }));
        this.recordLater(active, outcome, startedAt);
      } else {
        this.logger.error(`Could not release lock "${name}"${jobLabel({ jobName })}; it expires on its own: ${describe(error)}`);
        this.emit(() => ({ type: 'release-failed', reason: 'store-error', error, ...this.runBase(active) }));
      }
    }
  }

  /**
   * Keeps trying to record an occurrence's outcome (see {@link OutcomeRetries}); the keeper renews its
   * lease meanwhile, so that other nodes do not see the lock gone while Redis answers.
   */
  private recordLater(active: ActiveLock, outcome: RunOutcome, startedAt: number): void {
    const { name, jobName, lock } = active;
    this.keeper.track(active);
    const isStoreError = (error: unknown) => !(error instanceof LockNotHeldError);
    this.unrecorded.retry(active, () => lock.finish!(outcome), isStoreError, (error) => {
      this.keeper.untrack(active);
      if (error === undefined) {
        this.logger.log(`Recorded how the run of lock "${name}"${jobLabel({ jobName })} ended (${outcome}) once Redis answered again`);
        this.emit(() => ({ type: 'released', heldForMs: performance.now() - startedAt, ...this.runBase(active) }));
        return;
      }
      const reason = (error as LockNotHeldError).reason;
      this.logger.warn(
        `Lock "${name}"${jobLabel({ jobName })} was gone (${reason}) when Redis answered again; its run's outcome ` +
          `(${outcome}) was recorded unless another node had taken the occurrence over`,
      );
      this.emit(() => ({ type: 'release-failed', reason, error, ...this.runBase(active) }));
    });
  }

  /** @internal */
  extended(active: ActiveLock): void {
    this.keeper.reschedule(active);
    this.emit(() => ({ type: 'extended', lockedUntil: active.lockedUntil.getTime(), ...this.runBase(active) }));
  }

  /** @internal */
  lost(active: ActiveLock, reason: LockLostReason): void {
    if (this.unrecorded.has(active)) return; // its run has ended: the retry reports how the record went
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

/** A run that did not start. */
type Skipped = Extract<TaskResult<never>, { executed: false }>;

/** A lock the provider gave, with what a recovery took over. */
interface Taken {
  lock: SimpleLock;
  recovery?: { attempt: number; previousHolder: string };
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
