import {
  CHAOS_JOBS,
  FAULT_KINDS,
  type AppLine,
  type ChaosJob,
  type FaultKind,
  type RunLogLine,
  type RunOutcome,
} from './journal.js';
import { findLocksHeldUnused, type HeldUnused } from './held-unused.js';
import {
  assembleTerms,
  findHandovers,
  findTermFencingViolations,
  findTwoLeaders,
  type Handovers,
  type LeaderTerm,
  type TermFencingViolation,
  type TwoLeaders,
} from './leader-terms.js';

/**
 * The chaos soak's verdict, computed from its run log alone (pure functions: the unit test feeds it
 * hand-made logs). Every time compared is on the machine's monotonic clock.
 */

type Line<T extends RunLogLine['type']> = Extract<RunLogLine, { type: T }>;

/**
 * A run of a job, from its `start` line to its end: its `end` line, else its process's kill or exit, else
 * the soak's end.
 */
export interface Run {
  readonly run: string;
  readonly job: ChaosJob;
  readonly lock: string;
  readonly node: string;
  readonly pid: number;
  readonly locked: boolean;
  readonly start: number;
  readonly end: number;
  /** `killed`: its process was killed by the soak before the run ended; `died`: it exited on its own. */
  readonly outcome: RunOutcome | 'killed' | 'died' | 'unfinished';
  /** For cron jobs: the occurrence; for an unlocked run, the fire time nearest its start on its node's clock. */
  readonly occurrence?: number;
  readonly attempt?: number;
  readonly fencingToken?: number;
  /** Its lock was released (for a cron job: its outcome recorded in the job record). */
  readonly released: boolean;
  /** When its process was killed or exited, if it did. */
  readonly exitedAt?: number;
}

/** An occurrence of a cron job that ran more often than the README allows. */
export interface Duplicate {
  readonly job: ChaosJob;
  readonly occurrence: number;
  readonly runs: readonly Run[];
  /** Why the extra run is not a legitimate re-run. */
  readonly why: string;
}

/** Two runs of one lock at the same time. */
export interface Overlap {
  readonly lock: string;
  readonly first: Run;
  readonly second: Run;
  readonly overlapMs: number;
}

/** A run whose fencing token is not above every token of its lock that started before it. */
export interface FencingViolation {
  readonly lock: string;
  readonly run: Run;
  readonly highestBefore: number;
}

/** A second of the 1 s cron that no app ran. */
export interface Miss {
  readonly occurrence: number;
  /** When the apps' timers fire for it, on the monotonic clock (their skews apart). */
  readonly window: readonly [number, number];
  /** The longest event-loop delay any app reported meanwhile, and the machine's CPU use. */
  readonly maxLoopDelayMs: number;
  readonly cpuBusyPercent: number | undefined;
}

/** A configured skew against the skew the app's clock showed at startup. */
export interface SkewCheck {
  readonly node: string;
  readonly pid: number;
  readonly configuredMs: number;
  readonly measuredMs: number;
  /** The app's monotonic clock is the soak's: its `ready` came after its start, in time. */
  readonly monotonicShared: boolean;
  readonly ok: boolean;
}

/** The seconds of the 1 s cron checked (wholly inside the soak), and those missed, by cause: {@link findMisses}. */
export interface CronMisses {
  readonly checkedSeconds: number;
  readonly missesInFaults: number;
  /** Missed while an app's event loop was over half a gap late: the README's timer assumption did not hold. */
  readonly missesUnderLoad: readonly Miss[];
  readonly quietMisses: readonly Miss[];
}

/** Errors no fault explains, apart from those load does: {@link findQuietErrors}. */
export interface QuietErrors {
  /** Errors (store errors, lost locks, failed releases, error logs) outside every fault window and its margin. */
  readonly quietErrors: readonly AppLine[];
  /** Such errors of an app whose event loop had just lagged over a second: load, not a violation. */
  readonly errorsUnderLoad: readonly AppLine[];
}

/** The guarantees the soak checks, by their names in its final line. */
export type Guarantee =
  | 'duplicates'
  | 'overlaps'
  | 'unlocked'
  | 'fencing'
  | 'unhandled'
  | 'unexpected-exits'
  | 'quiet-misses'
  | 'quiet-errors'
  | 'skew-failures'
  | 'held-unused'
  | 'two-leaders'
  | 'leader-fencing'
  | 'slow-handovers';

/** What a soak's run log shows: the counts of its report, and the findings that break a guarantee. */
export interface ChaosFindings extends CronMisses, QuietErrors, Handovers {
  readonly soak: Line<'soak'>;
  readonly durationMs: number;
  readonly runs: readonly Run[];
  readonly runsPerJob: Record<ChaosJob, number>;
  /** Runs stopped because their lock was lost, and runs cut short by a kill. */
  readonly abortedRuns: number;
  readonly killedRuns: number;
  /** Re-runs of an occurrence whose first run did not finish (killed or lost its lock): allowed. */
  readonly recoveries: readonly Run[];
  readonly duplicates: readonly Duplicate[];
  readonly overlaps: readonly Overlap[];
  readonly unlockedRuns: readonly Run[];
  readonly fencingViolations: readonly FencingViolation[];
  readonly unhandled: readonly Line<'unhandled'>[];
  readonly unexpectedExits: ReadonlyArray<Line<'app-exit'> | Line<'store-exit'>>;
  readonly skewChecks: readonly SkewCheck[];
  /** Locks held unused after a store pause for longer than the pause plus one renewal interval. */
  readonly heldUnused: readonly HeldUnused[];
  /** The terms of the leader workload's election, in order of start. */
  readonly terms: readonly LeaderTerm[];
  readonly twoLeaders: readonly TwoLeaders[];
  readonly termFencingViolations: readonly TermFencingViolation[];
  readonly faultsPerKind: Record<FaultKind, number>;
  readonly cpu: { readonly averagePercent: number; readonly maxPercent: number } | undefined;
  /** How many findings break each guarantee. */
  readonly violationsPerGuarantee: Record<Guarantee, number>;
  /** Their sum: the soak fails unless it is 0. */
  readonly violations: number;
}

/** How far from its configured skew an app's clock may read at startup. */
export const SKEW_TOLERANCE_MS = 100;

/** Analyses a soak's run log. Throws if it has no `soak` line. */
export function analyze(lines: readonly RunLogLine[]): ChaosFindings {
  const soak = lines.find((line): line is Line<'soak'> => line.type === 'soak');
  if (!soak) throw new Error('The run log has no "soak" line: it is not the log of a chaos soak');
  const end =
    lines.find((line): line is Line<'soak-end'> => line.type === 'soak-end')?.mono ?? Math.max(...lines.map(monoOf));
  const faults = lines.filter((line): line is Line<'fault'> => line.type === 'fault');
  const excused = faults.map((fault) => [fault.start, fault.end + soak.missMarginMs] as const);

  const runs = assembleRuns(lines, end);
  const { duplicates, recoveries } = findDuplicates(runs);
  const misses = findMisses(lines, runs, soak, end, excused);
  const cpuLines = lines.filter((line): line is Line<'cpu'> => line.type === 'cpu');
  const terms = assembleTerms(lines, end);

  const findings = {
    soak,
    durationMs: end - soak.mono,
    runs,
    runsPerJob: countBy(Object.keys(CHAOS_JOBS) as ChaosJob[], runs, (run) => run.job),
    abortedRuns: runs.filter((run) => run.outcome === 'aborted').length,
    killedRuns: runs.filter((run) => run.outcome === 'killed').length,
    recoveries,
    duplicates,
    overlaps: findOverlaps(runs),
    unlockedRuns: runs.filter((run) => !run.locked),
    fencingViolations: findFencingViolations(runs),
    unhandled: lines.filter((line): line is Line<'unhandled'> => line.type === 'unhandled'),
    unexpectedExits: lines.filter(
      (line): line is Line<'app-exit'> | Line<'store-exit'> =>
        (line.type === 'app-exit' || line.type === 'store-exit') && !line.expected,
    ),
    ...misses,
    ...findQuietErrors(lines, excused),
    skewChecks: checkSkews(lines, soak),
    heldUnused: findLocksHeldUnused(runs, faults, end),
    terms,
    twoLeaders: findTwoLeaders(terms),
    termFencingViolations: findTermFencingViolations(terms),
    ...findHandovers(lines, terms, end),
    faultsPerKind: countBy(FAULT_KINDS, faults, (fault) => fault.kind),
    cpu: cpuLines.length
      ? {
          averagePercent: Math.round(cpuLines.reduce((sum, line) => sum + line.busyPercent, 0) / cpuLines.length),
          maxPercent: Math.max(...cpuLines.map((line) => line.busyPercent)),
        }
      : undefined,
  };
  const violationsPerGuarantee: Record<Guarantee, number> = {
    duplicates: findings.duplicates.length,
    overlaps: findings.overlaps.length,
    unlocked: findings.unlockedRuns.length,
    fencing: findings.fencingViolations.length,
    unhandled: findings.unhandled.length,
    'unexpected-exits': findings.unexpectedExits.length,
    'quiet-misses': findings.quietMisses.length,
    'quiet-errors': findings.quietErrors.length,
    'skew-failures': findings.skewChecks.filter((check) => !check.ok).length,
    'held-unused': findings.heldUnused.length,
    'two-leaders': findings.twoLeaders.length,
    'leader-fencing': findings.termFencingViolations.length,
    'slow-handovers': findings.slowHandovers.length,
  };
  const violations = Object.values(violationsPerGuarantee).reduce((sum, n) => sum + n, 0);
  return { ...findings, violationsPerGuarantee, violations };
}

/** Every run, ended by its `end` line, else by its process's exit (a kill), else by the soak's end. */
export function assembleRuns(lines: readonly RunLogLine[], soakEnd: number): Run[] {
  const ends = new Map<string, Line<'end'>>();
  const exits = new Map<number, Line<'app-exit'>>();
  const released = new Set<string>();
  for (const line of lines) {
    if (line.type === 'end') ends.set(line.run, line);
    else if (line.type === 'app-exit') exits.set(line.pid, line);
    else if (line.type === 'lock-event' && line.event === 'released')
      released.add(tokenKey(line.pid, line.lock, line.fencingToken));
  }
  return lines
    .filter((line): line is Line<'start'> => line.type === 'start')
    .map((start): Run => {
      const ended = ends.get(start.run);
      const exit = exits.get(start.pid);
      const end = ended?.mono ?? exit?.mono ?? soakEnd;
      const outcome = ended?.outcome ?? (exit ? (exit.expected ? 'killed' : 'died') : 'unfinished');
      const gap = CHAOS_JOBS[start.job] as { cronGapMs?: number };
      const occurrence =
        start.occurrence ??
        (gap.cronGapMs === undefined ? undefined : Math.round(start.wall / gap.cronGapMs) * gap.cronGapMs);
      return {
        run: start.run,
        job: start.job,
        lock: start.lock,
        node: start.node,
        pid: start.pid,
        locked: start.locked,
        start: start.mono,
        end,
        outcome,
        occurrence,
        attempt: start.attempt,
        fencingToken: start.fencingToken,
        released: released.has(tokenKey(start.pid, start.lock, start.fencingToken)),
        exitedAt: exit?.mono,
      };
    })
    .sort((a, b) => a.start - b.start);
}

/**
 * Occurrences of cron jobs run more often than allowed. An occurrence runs once; it may run again only
 * as a re-run (attempt ≥ 2) after every earlier run of it ended without finishing: its lock was lost
 * (the run aborted), or its process was killed before its outcome was recorded (before its release).
 * A re-run after a run that finished and whose node lived on is a duplicate: the README re-runs an
 * occurrence only when its node dies.
 */
export function findDuplicates(runs: readonly Run[]): { duplicates: Duplicate[]; recoveries: Run[] } {
  const byOccurrence = new Map<string, Run[]>();
  for (const run of runs) {
    if (run.occurrence === undefined) continue;
    const key = `${run.job}@${run.occurrence}`;
    byOccurrence.set(key, [...(byOccurrence.get(key) ?? []), run]);
  }
  const duplicates: Duplicate[] = [];
  const recoveries: Run[] = [];
  for (const group of byOccurrence.values()) {
    let why: string | undefined;
    for (const [index, run] of group.entries()) {
      if (index === 0) continue;
      const finished = group.slice(0, index).find((earlier) => !leftUnfinished(earlier, run.start));
      if (!run.locked || (run.attempt ?? 1) < 2) {
        why ??= `${run.run} ran it again as a first attempt`;
      } else if (finished) {
        const how = describeEnd(finished, run.start);
        why ??= `${run.run} re-ran it (attempt ${run.attempt}) after ${finished.run} had finished it (${how})`;
      } else {
        recoveries.push(run);
      }
    }
    if (why) duplicates.push({ job: group[0].job, occurrence: group[0].occurrence!, runs: group, why });
  }
  return { duplicates, recoveries };
}

/**
 * Whether `run` had been left unfinished by the time `rerunAt`: it stopped on losing its lock, its
 * process was killed (or died) mid-run, or it finished but its process ended before its release
 * recorded the outcome (the node died holding the occurrence).
 */
function leftUnfinished(run: Run, rerunAt: number): boolean {
  if (run.outcome === 'aborted' || run.outcome === 'killed' || run.outcome === 'died') return true;
  return !run.released && run.exitedAt !== undefined && run.exitedAt < rerunAt;
}

function describeEnd(run: Run, rerunAt: number): string {
  const alive = run.exitedAt === undefined || run.exitedAt >= rerunAt;
  return `${run.outcome}, ${run.released ? 'released' : 'not released'}${alive ? ', its node alive' : ''}`;
}

/** Runs of one lock that overlap on the monotonic clock, each run paired with the earlier run it overlaps. */
export function findOverlaps(runs: readonly Run[]): Overlap[] {
  const overlaps: Overlap[] = [];
  for (const group of groupBy(runs, (run) => run.lock).values()) {
    let longest: Run | undefined; // the earlier run that ends last
    for (const run of group) {
      if (longest && run.start < longest.end) {
        overlaps.push({
          lock: run.lock,
          first: longest,
          second: run,
          overlapMs: Math.min(longest.end, run.end) - run.start,
        });
      }
      if (!longest || run.end > longest.end) longest = run;
    }
  }
  return overlaps;
}

/** Per lock, in order of start, every fencing token must be above all earlier ones. */
export function findFencingViolations(runs: readonly Run[]): FencingViolation[] {
  const violations: FencingViolation[] = [];
  for (const group of groupBy(runs, (run) => run.lock).values()) {
    let highest = -Infinity;
    for (const run of group) {
      if (run.fencingToken === undefined) continue;
      if (run.fencingToken <= highest) violations.push({ lock: run.lock, run, highestBefore: highest });
      highest = Math.max(highest, run.fencingToken);
    }
  }
  return violations;
}

/**
 * The seconds of the 1 s cron (`tick`) that no app ran. An app with skew `s` fires occurrence `O` when
 * the real time is `O - s` (within half a gap, the README's timer assumption), so `O` is due in the
 * window from the most ahead app's fire time to the most behind one's. A second is checked when that
 * window lies inside the soak, and a miss is excused when the window meets a fault window extended by
 * the soak's `missMarginMs`, or when an app reported an event-loop delay over half a gap meanwhile
 * (its timer could not fire in time: load, not the library). Any other miss is a violation.
 */
export function findMisses(
  lines: readonly RunLogLine[],
  runs: readonly Run[],
  soak: Line<'soak'>,
  soakEnd: number,
  excused: ReadonlyArray<readonly [number, number]>,
): CronMisses {
  const gap = CHAOS_JOBS.tick.cronGapMs;
  const skews = soak.apps.map((app) => app.skewMs);
  const [mostAhead, mostBehind] = [Math.max(...skews), Math.min(...skews)];
  const toMono = (wall: number) => wall - soak.wallMinusMono;
  const ran = new Set(runs.filter((run) => run.job === 'tick').map((run) => run.occurrence));
  const delays = lines.filter((line): line is Line<'loop-delay'> => line.type === 'loop-delay');
  const cpu = lines.filter((line): line is Line<'cpu'> => line.type === 'cpu');

  let checkedSeconds = 0;
  let missesInFaults = 0;
  const missesUnderLoad: Miss[] = [];
  const quietMisses: Miss[] = [];
  const first = Math.ceil((soak.mono + soak.wallMinusMono + mostAhead + gap / 2) / gap) * gap;
  for (let occurrence = first; ; occurrence += gap) {
    const window = [toMono(occurrence - mostAhead) - gap / 2, toMono(occurrence - mostBehind) + gap / 2] as const;
    if (window[1] > soakEnd) break;
    checkedSeconds++;
    if (ran.has(occurrence)) continue;
    if (excused.some(([from, to]) => from <= window[1] && window[0] <= to)) {
      missesInFaults++;
      continue;
    }
    // A delay line covers the second before it.
    const during = delays.filter((line) => line.mono >= window[0] && line.mono - 1_000 <= window[1]);
    const busy = cpu.filter((line) => line.mono >= window[0] && line.mono - 1_000 <= window[1]);
    const miss: Miss = {
      occurrence,
      window,
      maxLoopDelayMs: Math.max(0, ...during.map((line) => line.maxMs)),
      cpuBusyPercent: busy.length ? Math.max(...busy.map((line) => line.busyPercent)) : undefined,
    };
    (miss.maxLoopDelayMs > gap / 2 ? missesUnderLoad : quietMisses).push(miss);
  }
  return { checkedSeconds, missesInFaults, missesUnderLoad, quietMisses };
}

/** An app whose event loop lagged more than this just before an error was under load (see {@link findQuietErrors}). */
export const ERROR_LOAD_DELAY_MS = 1_000;

/**
 * Errors outside every fault window (extended by the margin): a skip for a store error, a lost lock, a
 * failed release, an error log. With Redis reachable and answering, none of them has a reason, unless
 * the app's own event loop lagged over {@link ERROR_LOAD_DELAY_MS} in the 3 s before (its acquire and
 * renewal timeouts ran on a starved process: load, reported apart).
 */
export function findQuietErrors(
  lines: readonly RunLogLine[],
  excused: ReadonlyArray<readonly [number, number]>,
): QuietErrors {
  const delays = lines.filter((line): line is Line<'loop-delay'> => line.type === 'loop-delay');
  const quietErrors: AppLine[] = [];
  const errorsUnderLoad: AppLine[] = [];
  for (const line of lines) {
    const isError =
      (line.type === 'log' && line.level === 'error') ||
      (line.type === 'lock-event' &&
        (line.event === 'lost' ||
          line.event === 'release-failed' ||
          (line.event === 'skipped' && line.reason === 'provider-error')));
    if (!isError || excused.some(([from, to]) => line.mono >= from && line.mono <= to)) continue;
    // Its own timers ran a second late shortly before: an acquire or renewal timeout says nothing about Redis.
    const lagged = delays.some(
      (delay) =>
        delay.pid === line.pid &&
        delay.maxMs > ERROR_LOAD_DELAY_MS &&
        delay.mono >= line.mono - 3_000 &&
        delay.mono - 1_000 <= line.mono,
    );
    (lagged ? errorsUnderLoad : quietErrors).push(line);
  }
  return { quietErrors, errorsUnderLoad };
}

/**
 * Each app start's clock against its configured skew: libfaketime must move the wall clock only. The
 * soak's own clock is read when it starts the app, so a slewing NTP client cannot pile up an error.
 */
export function checkSkews(lines: readonly RunLogLine[], soak: Line<'soak'>): SkewCheck[] {
  const started = new Map(
    lines.filter((line): line is Line<'app-started'> => line.type === 'app-started').map((line) => [line.pid, line]),
  );
  return lines
    .filter((line): line is Line<'ready'> => line.type === 'ready')
    .map((ready) => {
      const configuredMs = soak.apps.find((app) => app.node === ready.node)?.skewMs ?? NaN;
      const start = started.get(ready.pid);
      const measuredMs = Math.round(ready.wall - ready.mono - (start?.wallMinusMono ?? soak.wallMinusMono));
      const monotonicShared = start !== undefined && ready.mono >= start.mono && ready.mono - start.mono < 60_000;
      const ok = monotonicShared && Math.abs(measuredMs - configuredMs) <= SKEW_TOLERANCE_MS;
      return { node: ready.node, pid: ready.pid, configuredMs, measuredMs, monotonicShared, ok };
    });
}

function tokenKey(pid: number, lock: string, fencingToken: number | undefined): string {
  return `${pid}|${lock}|${fencingToken}`;
}

function monoOf(line: RunLogLine): number {
  return 'mono' in line ? line.mono : line.type === 'fault' ? line.end : -Infinity;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function countBy<K extends string, T>(keys: readonly K[], items: readonly T[], key: (item: T) => K): Record<K, number> {
  const counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}
