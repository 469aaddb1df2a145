import { Logger } from '@nestjs/common';
import { formatDuration } from '../core/provider/duration.js';
import {
  createLockConfiguration,
  SchedulerLockConfigurationError,
  type RunLockConfiguration,
} from '../core/provider/lock-configuration.js';
import type { LockProvider } from '../core/provider/lock-provider.js';
import { quoted } from '../core/provider/message-text.js';
import { assertCanRenewLeases } from '../core/provider/provider-checks.js';
import { CronSchedule } from '../occurrence/cron-schedule.js';
import { occurrenceStore, type OccurrenceStore } from '../occurrence/occurrence-claims.js';
import type { JobKind } from '../occurrence/occurrence-options.js';
import { resolveOccurrencePolicy, type OccurrencePolicy } from '../occurrence/occurrence-policy.js';
import type { CronJobParts, TimerParts } from './scheduled-job-parts.js';
import type { SchedulerLockOptions } from './scheduler-lock-options.interface.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** A job whose ticks run under a lock. */
export interface LockedJob {
  /** The job's name in `SchedulerRegistry`. */
  readonly jobName: string;
  /** `undefined` for a job declared for runtime registration: it locks whichever kind is added under `jobName`. */
  readonly kind: JobKind | undefined;
  readonly configuration: RunLockConfiguration;
  /** Where the lock was declared, for error messages. */
  readonly source: string;
  /** Once-per-occurrence settings when the job is (or may be, for runtime jobs) a cron job with them on. */
  readonly occurrence?: OccurrencePolicy;
  /** A runtime declaration's options, checked again once the job's kind is known. */
  readonly declaredOptions?: SchedulerLockOptions;
  /** The election whose leader alone runs the job's ticks; `null` when any node may. */
  readonly leader: string | null;
}

/** What a locked job is made from: a decorated method or a runtime declaration. */
interface LockedJobDeclaration {
  readonly jobName: string;
  readonly kind: JobKind | undefined;
  readonly options: SchedulerLockOptions;
  readonly source: string;
}

/** What a job takes from the module's settings when it does not say. */
type LockedJobDefaults = Pick<SchedulerLockSettings, 'defaults' | 'provider' | 'defaultLeader' | 'retry'>;

const logger = new Logger('SchedulerLock');

/*
 * Every startup check of a locked job lives in this file: its options when it is declared
 * (createLockedJob), and what can only be seen once `@nestjs/schedule` hands over the job
 * (checkCronJob, checkTimerJob, checkRuntimeTimer).
 */

/**
 * The locked job `declaration` describes, its options validated against the module's defaults and
 * the provider's abilities. The one place options become a job.
 *
 * @throws SchedulerLockConfigurationError naming the job (`source`) and the bad value.
 */
export function createLockedJob(
  declaration: LockedJobDeclaration,
  { defaults, provider, defaultLeader, retry }: LockedJobDefaults,
): LockedJob {
  const { jobName, kind, options, source } = declaration;
  const leader = leaderOption(options.leader, defaultLeader, source);
  const configuration = createLockConfiguration(options.name ?? jobName, options, defaults, source);
  assertCanRenewLeases(provider, configuration, source);
  const occurrence = resolveOccurrencePolicy(options, kind, source, retry);
  // A runtime job's kind is known only when it is added: its provider abilities are checked then.
  if (occurrence && kind === 'cron') occurrenceStore(provider, occurrence, source);
  return {
    jobName,
    kind,
    configuration,
    source,
    occurrence,
    declaredOptions: kind === undefined ? options : undefined,
    leader,
  };
}

/** The `leader` option: an election's name, or `false` for none; the module's `defaultLeader` when absent. */
function leaderOption(leader: unknown, fallback: string | null, source: string): string | null {
  if (leader === undefined) return fallback;
  if (leader === false) return null;
  if (typeof leader === 'string' && leader.trim() !== '') return leader;
  throw new SchedulerLockConfigurationError(
    `${source}: leader must be an election's name or false (got ${quoted(leader)})`,
  );
}

/**
 * Checks a cron job as `@nestjs/schedule` hands it over, and warns when its `lockAtLeastFor` is not
 * shorter than the shortest gap between its fire times. Resolves to the provider abilities its
 * once-per-occurrence locking uses, if it has that on.
 *
 * @throws SchedulerLockConfigurationError when the job cannot be locked: it would run unlocked.
 */
export function checkCronJob(job: LockedJob, cron: CronJobParts, provider: LockProvider): OccurrenceStore | undefined {
  if (job.kind === undefined && (cron.isActive || cron.lastDate())) {
    // Started before the proxy could lock it, cron may already have fired it inside CronJob.from().
    throw unlockable(
      job,
      'it was started (or ran) before addCronJob; create it with start: false and call job.start() after addCronJob',
    );
  }
  if (!Array.isArray(cron._callbacks)) throw unlockable(job, 'this version of "cron" keeps its callbacks elsewhere');
  const { minGap } = CronSchedule.of(cron.cronTime);
  warnIfLockOutlasts(
    job,
    minGap,
    `the shortest gap between its fire times (${formatDuration(minGap)}, '${String(cron.cronTime.source)}')`,
  );
  return job.occurrence && occurrenceStore(provider, job.occurrence, job.source);
}

/**
 * Checks an interval or timeout job as it is locked, and warns when an interval's `lockAtLeastFor` is not shorter
 * than its `period` (ms). A runtime declaration may carry cron-only options: now that the kind is known, they are
 * an error.
 */
export function checkTimerJob(job: LockedJob, kind: 'interval' | 'timeout', period: number | undefined): void {
  if (job.declaredOptions) resolveOccurrencePolicy(job.declaredOptions, kind, job.source, null);
  if (kind === 'interval' && typeof period === 'number')
    warnIfLockOutlasts(job, period, `its interval (${formatDuration(period)})`);
}

/**
 * Checks a timer the app adds itself with `addInterval` / `addTimeout`: the registry proxy locks it by wrapping
 * its Node.js callback, the only part of it there is to wrap, which a fake timer (Jest's, Vitest's) has not.
 * Returns its parts.
 */
export function checkRuntimeTimer(job: LockedJob, timer: unknown): TimerParts {
  const parts = timer as TimerParts | undefined;
  if (typeof parts?._onTimeout !== 'function') {
    throw unlockable(
      job,
      'the timer is not a Node.js Timeout: a timer added with addInterval or addTimeout is locked through its ' +
        'Node.js callback, which a fake timer lacks (install fake timers once it is added; decorated @Interval and ' +
        '@Timeout jobs work with fake timers)',
    );
  }
  return parts;
}

/**
 * Each run keeps the lock past the next tick, so the job runs far less often than its schedule says,
 * which would otherwise show only as DEBUG skip lines.
 */
function warnIfLockOutlasts(job: LockedJob, period: number, what: string): void {
  const { lockAtLeastFor } = job.configuration;
  if (lockAtLeastFor === 0 || lockAtLeastFor < period) return;
  const hold = formatDuration(lockAtLeastFor);
  logger.warn(
    `Job "${job.jobName}": lockAtLeastFor ${hold} is not shorter than ${what}, so each run holds the lock past the ` +
      `next tick: the job runs at most once per ${hold} cluster-wide, and the ticks in between are skipped`,
  );
}

function unlockable(job: LockedJob, why: string): SchedulerLockConfigurationError {
  return new SchedulerLockConfigurationError(
    `Cannot lock job "${job.jobName}" (${job.source}): ${why}; it would run unlocked, so it is refused`,
  );
}
