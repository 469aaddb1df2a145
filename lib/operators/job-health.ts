import type { CatalogueJob, HistoryEntry, RunHistoryEntry } from './cluster-records.js';
import type { LockState } from './operator-provider.js';

/**
 * How a job stands, cluster-wide, from its schedule and the store's records:
 * - `on-time`: every occurrence due so far was started;
 * - `late`: an occurrence is due and no node started it within the grace period, and the next is not due yet;
 * - `missed`: an occurrence passed (the next one came) and no node ran it;
 * - `failing`: its last `failingAfter` runs failed (an occurrence's attempts count once);
 * - `paused`: an operator (or the failure policy) paused it;
 * - `never-run`: no run yet, and none due.
 */
export type JobHealthState = 'on-time' | 'late' | 'missed' | 'failing' | 'paused' | 'never-run';

/** The states that make a job unhealthy: a probe reports down for them. */
export const UNHEALTHY_STATES: ReadonlySet<JobHealthState> = new Set(['late', 'missed', 'failing']);

/** A job's health, as the admin service, the CLI and the status page show it. */
export interface ClusterJobHealth {
  /** The job's name. */
  readonly jobName: string;
  /** The name of its lock, under which the store keeps its history. */
  readonly lockName: string;
  /** How it stands. */
  readonly state: JobHealthState;
  /** Whether `state` is `late`, `missed` or `failing`. */
  readonly unhealthy: boolean;
  /** When the newest successful run started, or `null`. */
  readonly lastSuccess: Date | null;
  /**
   * The occurrences no node ran, oldest first, among those since the oldest run the history keeps (at most
   * 100): also those before the last success, which no longer make the job `missed`.
   */
  readonly missed: readonly Date[];
  /** The occurrence due and not started within the grace period, or `null`. */
  readonly late: Date | null;
  /**
   * How many of the newest runs failed in a row, since the last success or `resume`: an occurrence's attempts
   * (retries, re-runs) count once.
   */
  readonly failuresInARow: number;
  /** When the first of those failed runs was due (its occurrence, or its start); `null` with none. */
  readonly failingSince: Date | null;
}

/** How strict health is. */
export interface HealthPolicy {
  /** How long after its time an occurrence may start before it counts as late (ms). */
  readonly grace: number;
  /** How many failed runs in a row make a job `failing`. */
  readonly failingAfter: number;
  /** How many failed runs in a row make the scheduler pause the job (`null`: never). */
  readonly pauseAfter: number | null;
}

/** The fire times of a cron job: the first strictly after a time (epoch ms). */
export interface FireTimes {
  nextAfter(ms: number): number;
}

/** What a job's health is computed from, as the store has it. */
export interface HealthFacts {
  readonly job: CatalogueJob;
  readonly lock: LockState;
  /** Its newest history entries, newest first. */
  readonly recent: readonly HistoryEntry[];
  /** The cron job's fire times; `null` for other jobs, or when `cron` cannot be loaded. */
  readonly fireTimes: FireTimes | null;
  /** Since when live nodes run the job (the earliest start among them), for a job with no run yet. */
  readonly watchedSince: Date;
}

/** The most missed occurrences listed: a job down for days lists its first ones, not thousands. */
export const MAX_LISTED_MISSES = 100;

/** `facts`' health at `now` (epoch ms). */
export function jobHealth(facts: HealthFacts, policy: HealthPolicy, now: number): ClusterJobHealth {
  const { job, lock, recent } = facts;
  const runs = recent.filter(isRun);
  const success = runs.find((run) => run.outcome === 'succeeded');
  // A resume starts the count anew: the pause it ends may be the failure policy's own.
  const streakEnd = recent.findIndex((entry) => entry.type === 'resume' || entry === success);
  const streak = (streakEnd < 0 ? recent : recent.slice(0, streakEnd)).filter(isRun);
  // An occurrence's attempts (its retries, its re-runs) are one failure.
  const failuresInARow = new Set(streak.map((run) => (run.occurrence ?? run.startedAt).getTime())).size;
  // Misses are looked for after the oldest run the history keeps, or, for a job with none, since the watch began.
  const from = runs.length > 0 ? runStart(runs[runs.length - 1]) : facts.watchedSince.getTime();
  const started = [...runs.map(runStart), ...(lock.holder ? [lock.holder.since.getTime()] : [])];
  const { missed, late } = dueWithoutRun(facts, started, from, policy.grace, now);
  const sinceSuccess = success ? missed.filter((at) => at > runStart(success)) : missed;
  const state: JobHealthState = lock.paused
    ? 'paused'
    : failuresInARow >= policy.failingAfter
      ? 'failing'
      : sinceSuccess.length > 0
        ? 'missed'
        : late !== null
          ? 'late'
          : runs.length === 0 && !lock.holder
            ? 'never-run'
            : 'on-time';
  return {
    jobName: job.jobName,
    lockName: job.lockName,
    state,
    unhealthy: UNHEALTHY_STATES.has(state),
    lastSuccess: success ? success.startedAt : null,
    missed: missed.map((at) => new Date(at)),
    late: late === null ? null : new Date(late),
    failuresInARow,
    failingSince: streak.length > 0 ? new Date(runStart(streak[streak.length - 1])) : null,
  };
}

/**
 * The occurrences after `from` that no run started: those whose next occurrence came are missed, the one still
 * current is late once `grace` has passed. An occurrence is started by a run that claimed it, or (a job without
 * occurrence claims) by one that started between it and the next.
 */
function dueWithoutRun(
  { job, recent, fireTimes }: HealthFacts,
  started: readonly number[],
  from: number,
  grace: number,
  now: number,
): { missed: number[]; late: number | null } {
  const next = nextOccurrence(job, fireTimes);
  if (!next) return { missed: [], late: null };
  const claimed = new Set(
    recent.filter(isRun).flatMap((run) => (run.occurrence === null ? [] : [run.occurrence.getTime()])),
  );
  const paused = pausedSpans(recent);
  const missed: number[] = [];
  for (let at = next(from); at + grace <= now && missed.length < MAX_LISTED_MISSES; at = next(at)) {
    const following = next(at);
    if (claimed.has(at) || started.some((start) => start >= at && start < following)) continue;
    if (paused.some(([start, end]) => at >= start && at < end)) continue;
    if (following > now) return { missed, late: at };
    missed.push(at);
  }
  return { missed, late: null };
}

/** When the job was paused, from the pauses and resumes of its history (newest first): `[from, until)`, epoch ms. */
function pausedSpans(recent: readonly HistoryEntry[]): [number, number][] {
  const spans: [number, number][] = [];
  let until = Infinity;
  for (const entry of recent) {
    if (entry.type === 'resume') until = entry.at.getTime();
    if (entry.type === 'pause') {
      spans.push([entry.at.getTime(), until]);
      until = Infinity;
    }
  }
  return spans;
}

/** The occurrence after a time: a cron job's next fire time, an interval job's time plus its period. */
function nextOccurrence(job: CatalogueJob, fireTimes: FireTimes | null): ((ms: number) => number) | null {
  if (job.kind === 'cron') return fireTimes && ((ms) => fireTimes.nextAfter(ms));
  if (job.kind === 'interval') return (ms) => ms + Number(job.schedule);
  return null;
}

/** When a run's occurrence was due: its claimed occurrence, or its start. */
function runStart(run: RunHistoryEntry): number {
  return (run.occurrence ?? run.startedAt).getTime();
}

function isRun(entry: HistoryEntry): entry is RunHistoryEntry {
  return entry.type === 'run';
}
