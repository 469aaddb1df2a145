import type { CatalogueJob, HistoryEntry, HistoryOutcome, PauseState, RunHistoryEntry } from './cluster-records.js';
import type { LockState } from './operator-provider.js';

/** A job as an operator sees it, cluster-wide (`jobs` / `job NAME` of the CLI and the admin service). */
export interface JobOverview {
  readonly jobName: string;
  readonly lockName: string;
  readonly kind: CatalogueJob['kind'];
  /** The cron expression, or `every <ms> ms` / `once after <ms> ms`. */
  readonly schedule: string;
  readonly timeZone: string | null;
  readonly paused: boolean;
  readonly pause: PauseState | null;
  /** The node that holds the lock now, or `null`. */
  readonly holdingNode: string | null;
  /** Since when the holding node has it (that node's clock), or `null`. */
  readonly lockedSince: Date | null;
  /** Until when the lock is held at most as the store has it now, or `null`. */
  readonly lockedUntil: Date | null;
  /** The holder's fencing token, when held. */
  readonly fencingToken: number | null;
  /**
   * When a cron job fires next, from its expression and time zone with `cron`'s `CronTime` (without a
   * time zone, in the zone of the process that asks). `null` for interval and timeout jobs, and where the `cron`
   * package (`@nestjs/schedule`'s dependency) cannot be loaded.
   */
  readonly nextFireAt: Date | null;
  /** The newest run in the history, or `null`. */
  readonly lastRun: LastRun | null;
  /** Skips by reason since the counts began. */
  readonly skips: Readonly<Record<string, number>>;
  /** The live nodes that run the job. */
  readonly nodes: readonly string[];
}

/** The newest run of a job, as `lastRun` of a {@link JobOverview}. */
export interface LastRun {
  readonly occurrence: Date | null;
  readonly outcome: HistoryOutcome;
  readonly node: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly durationMs: number | null;
  readonly error: string | null;
  readonly fencingToken: number | null;
  readonly attempt: number;
  readonly manual: RunHistoryEntry['manual'];
}

/** What a job's overview is made of, as the store has it. */
export interface JobFacts {
  readonly job: CatalogueJob;
  /** The live nodes that run it. */
  readonly nodes: readonly string[];
  readonly skips: Record<string, number>;
  readonly lock: LockState;
  /** Its newest history entries, newest first. */
  readonly recent: readonly HistoryEntry[];
  readonly nextFireAt: Date | null;
}

/** A job's overview from what the store has of it; `now`: epoch ms, for when the lock expires. */
export function jobOverview({ job, nodes, skips, lock, recent, nextFireAt }: JobFacts, now: number): JobOverview {
  const { holder, fencingToken, paused } = lock;
  const last = recent.find(isRun);
  return {
    jobName: job.jobName,
    lockName: job.lockName,
    kind: job.kind,
    schedule: describeSchedule(job),
    timeZone: job.timeZone,
    paused: paused !== null,
    pause: paused,
    holdingNode: holder ? holder.node : null,
    lockedSince: holder ? holder.since : null,
    lockedUntil: holder && holder.ttl > 0 ? new Date(now + holder.ttl) : null,
    fencingToken,
    nextFireAt,
    lastRun: last ? lastRun(last) : null,
    skips,
    nodes,
  };
}

function lastRun(run: RunHistoryEntry): LastRun {
  return {
    occurrence: run.occurrence,
    outcome: run.outcome,
    node: run.node,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationMs: run.durationMs,
    error: run.error,
    fencingToken: run.fencingToken,
    attempt: run.attempt,
    manual: run.manual,
  };
}

function isRun(entry: HistoryEntry): entry is RunHistoryEntry {
  return entry.type === 'run';
}

function describeSchedule(job: CatalogueJob): string {
  if (job.kind === 'cron') return job.schedule;
  return job.kind === 'interval' ? `every ${job.schedule} ms` : `once after ${job.schedule} ms`;
}
