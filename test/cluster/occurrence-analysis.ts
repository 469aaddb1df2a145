import type { TaskResult } from 'nest-scheduler-lock';
import type { StartMessage } from './fixtures/worker-protocol.js';
import type { WorkerCluster } from './worker-cluster.js';

/**
 * Helpers for schedules that fire on every multiple of `gapMs` (`*\/10 * * * * *` is 10 000), whose
 * ticks each worker reports in its own, possibly shifted, clock.
 */

/** The fire time nearest to `at`: the occurrence a tick at `at` (a worker's clock) belongs to. */
export function nearestFireTime(at: number, gapMs: number): number {
  return Math.round(at / gapMs) * gapMs;
}

/** The first fire time strictly after `at`. */
export function nextFireTime(at: number, gapMs: number): number {
  return Math.floor(at / gapMs) * gapMs + gapMs;
}

/** `count` consecutive fire times from `first`. */
export function fireTimes(first: number, count: number, gapMs: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i * gapMs);
}

/** What one worker's tick of a job came to: a run, or a skip and why. */
export interface TickOutcome {
  instance: string;
  /** The occurrence the tick belongs to (see {@link tickOutcomes}). */
  occurrence: number;
  outcome: 'ran' | Extract<TaskResult<unknown>, { executed: false }>['reason'];
  /** When, on the worker's clock. */
  at: number;
}

/**
 * Every tick of `job` on every worker that ended in a run or a skip so far, sorted by `at` (so each
 * worker's ticks are in order). A run belongs to the occurrence its lock claimed
 * (`currentLock().occurrence`), or, for a job without occurrences, to the fire time nearest its
 * start; a skip belongs to the fire time nearest to when it happened.
 */
export function tickOutcomes(cluster: WorkerCluster, job: string, gapMs: number): TickOutcome[] {
  const runs = cluster.starts(job).map(({ instance, occurrence, startedAt }) => ({
    instance,
    occurrence: occurrence ?? nearestFireTime(startedAt, gapMs),
    outcome: 'ran' as const,
    at: startedAt,
  }));
  const skips = cluster
    .lockEvents(job)
    .flatMap(({ instance, event }) =>
      event.type === 'skipped'
        ? [{ instance, occurrence: nearestFireTime(event.at, gapMs), outcome: event.reason, at: event.at }]
        : [],
    );
  return [...runs, ...skips].sort((a, b) => a.at - b.at);
}

/** The outcomes of each occurrence of `occurrences`, sorted, keyed by its ISO time (readable in a failed `toEqual`). */
export function outcomesByOccurrence(outcomes: TickOutcome[], occurrences: number[]): Record<string, string[]> {
  return Object.fromEntries(
    occurrences.map((time) => [
      iso(time),
      outcomes
        .filter((tick) => tick.occurrence === time)
        .map((tick) => tick.outcome)
        .sort(),
    ]),
  );
}

/** How many runs each of `occurrences` had, keyed by its ISO time; `occurrenceOf` says which one a run belongs to. */
export function runsPerOccurrence(
  starts: StartMessage[],
  occurrences: number[],
  occurrenceOf: (start: StartMessage) => number | undefined = (start) => start.occurrence,
): Record<string, number> {
  return Object.fromEntries(
    occurrences.map((time) => [iso(time), starts.filter((start) => occurrenceOf(start) === time).length]),
  );
}

/** `value` for each of `occurrences`, keyed by its ISO time: the expectation to compare the two above with. */
export function forEachOccurrence<T>(occurrences: number[], value: T): Record<string, T> {
  return Object.fromEntries(occurrences.map((time) => [iso(time), value]));
}

/** An epoch-ms time as ISO-8601, for messages. */
export function iso(time: number): string {
  return new Date(time).toISOString();
}
