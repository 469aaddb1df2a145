import type { ClusterNode, HistoryEntry } from '../operators/cluster-records.js';
import type { ElectionOverview } from '../operators/election-admin.js';
import type { ClusterJobHealth, JobHealthState } from '../operators/job-health.js';
import type { JobOverview, LastRun } from '../operators/job-overview.js';
import { renderFields, renderTable } from './table.js';

/** What stands in a cell that has no value. */
const NONE = '-';

/** The jobs as a table, one row each, with each one's health state. */
export function jobsView(
  jobs: readonly JobOverview[],
  states: ReadonlyMap<string, JobHealthState>,
  now: number,
): string {
  const rows = jobs.map((job) => [
    job.jobName,
    states.get(job.jobName) ?? NONE,
    schedule(job),
    job.paused ? 'yes' : 'no',
    job.holdingNode ?? NONE,
    job.lockedUntil === null ? NONE : relative(job.lockedUntil, now),
    job.nextFireAt === null ? NONE : relative(job.nextFireAt, now),
    job.lastRun ? lastRun(job.lastRun, now) : NONE,
  ]);
  return renderTable(['JOB', 'HEALTH', 'SCHEDULE', 'PAUSED', 'HOLDER', 'LOCKED UNTIL', 'NEXT FIRE', 'LAST RUN'], rows);
}

/** Each job's health: its state, last success and the occurrences no node ran. */
export function healthView(healths: readonly ClusterJobHealth[], now: number): string {
  const rows = healths.map((health) => [
    health.jobName,
    health.state,
    health.lastSuccess === null ? NONE : relative(health.lastSuccess, now),
    health.missed.length > 0 ? health.missed.map((at) => at.toISOString()).join(', ') : NONE,
  ]);
  return renderTable(['JOB', 'HEALTH', 'LAST SUCCESS', 'MISSED'], rows);
}

/** One election, a field per line: its leader (escaped where printed, as every field), term and since when. */
export function electionView(election: ElectionOverview, now: number): string {
  return renderFields([
    ['election', election.election],
    ['leader', election.leader ?? NONE],
    ['term', election.term === null ? NONE : String(election.term)],
    ['since', election.since === null ? NONE : moment(election.since, now)],
  ]);
}

/** The elections as a table. */
export function electionsView(elections: readonly ElectionOverview[], now: number): string {
  const rows = elections.map((election) => [
    election.election,
    election.leader ?? NONE,
    election.term === null ? NONE : String(election.term),
    election.since === null ? NONE : relative(election.since, now),
  ]);
  return renderTable(['ELECTION', 'LEADER', 'TERM', 'SINCE'], rows);
}

/** One job, a field per line. */
export function jobView(job: JobOverview, now: number): string {
  const skips = Object.entries(job.skips).map(([reason, count]) => `${reason} ${count}`);
  return renderFields([
    ['job', job.jobName],
    ['lock', job.lockName],
    ['kind', job.kind],
    ['schedule', schedule(job)],
    ['paused', job.pause ? `yes, by ${job.pause.actor} ${relative(job.pause.at, now)}${why(job.pause.reason)}` : 'no'],
    ['holder', job.holdingNode ?? NONE],
    ['locked since', job.lockedSince === null ? NONE : moment(job.lockedSince, now)],
    ['locked until', job.lockedUntil === null ? NONE : moment(job.lockedUntil, now)],
    ['next fire', job.nextFireAt === null ? NONE : moment(job.nextFireAt, now)],
    ['last run', job.lastRun ? lastRun(job.lastRun, now) : NONE],
    ['skips', skips.length > 0 ? skips.join(', ') : NONE],
    ['nodes', job.nodes.length > 0 ? job.nodes.join(', ') : NONE],
  ]);
}

/** A job's history as a table, newest first. */
export function historyView(entries: readonly HistoryEntry[], now: number): string {
  const rows = entries.map((entry) => {
    if (entry.type !== 'run') {
      const detail = [entry.reason && `reason: ${entry.reason}`, entry.formerNode && `held by ${entry.formerNode}`];
      return [moment(entry.at, now), entry.type, entry.actor, detail.filter(Boolean).join(', ')];
    }
    const detail = [
      entry.durationMs === null ? undefined : `took ${elapsed(entry.durationMs)}`,
      entry.manual && `triggered by ${entry.manual.actor}`,
      entry.occurrence === null ? undefined : `occurrence ${entry.occurrence.toISOString()}`,
      entry.attempt > 1 ? `attempt ${entry.attempt}` : undefined,
      entry.fencingToken === null ? undefined : `fencing token ${entry.fencingToken}`,
      entry.error && `error: ${entry.error}`,
    ];
    return [moment(entry.startedAt, now), `run ${entry.outcome}`, entry.node, detail.filter(Boolean).join(', ')];
  });
  return renderTable(['WHEN', 'WHAT', 'NODE / ACTOR', 'DETAIL'], rows);
}

/** The nodes as a table. */
export function nodesView(nodes: readonly ClusterNode[], now: number): string {
  const rows = nodes.map((node) => [
    node.node,
    node.version,
    relative(node.startedAt, now),
    relative(node.lastSeen, now),
    node.jobs.join(', ') || NONE,
  ]);
  return renderTable(['NODE', 'VERSION', 'STARTED', 'LAST SEEN', 'JOBS'], rows);
}

function schedule(job: JobOverview): string {
  return job.timeZone ? `${job.schedule} (${job.timeZone})` : job.schedule;
}

function lastRun(run: LastRun, now: number): string {
  // A crashed run has no duration: its node died before it ended.
  const details = [
    run.durationMs === null ? undefined : `took ${elapsed(run.durationMs)}`,
    run.manual && `triggered by ${run.manual.actor}`,
  ].filter(Boolean);
  const detail = details.length ? ` (${details.join(', ')})` : '';
  return `${run.outcome} on ${run.node} ${relative(run.startedAt, now)}${detail}`;
}

function why(reason: string | null): string {
  return reason ? `: ${reason}` : '';
}

/** An instant as ISO-8601 (UTC) and relative to now. */
function moment(at: Date, now: number): string {
  return `${at.toISOString()} (${relative(at, now)})`;
}

/** `in 4s`, `12s ago`, `now`. */
function relative(at: Date, now: number): string {
  const distance = at.getTime() - now;
  if (Math.abs(distance) < 1_000) return 'now';
  return distance > 0 ? `in ${elapsed(distance)}` : `${elapsed(-distance)} ago`;
}

/** A duration for people: `340ms`, `4.2s`, `3m 5s`, `2h 10m`, `3d 4h`. */
function elapsed(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1).replace(/\.0$/, '')}s`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  const first = units.findIndex(([, size]) => ms >= size);
  const [bigUnit, bigSize] = units[first];
  const [smallUnit, smallSize] = units[first + 1];
  const big = Math.floor(ms / bigSize);
  const small = Math.floor((ms - big * bigSize) / smallSize);
  return small > 0 ? `${big}${bigUnit} ${small}${smallUnit}` : `${big}${bigUnit}`;
}
