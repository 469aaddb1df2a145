import type { RunMessage, StartMessage } from './fixtures/worker-protocol.js';

/** A run as a half-open time span [startedAt, endedAt); `endedAt` is Infinity while it still runs. */
export interface RunSpan {
  runId: string;
  instance: string;
  startedAt: number;
  endedAt: number;
}

/** The runs grouped by the wall-clock second they started in (their nominal cron second). */
export function runsBySecond(starts: StartMessage[]): Map<number, StartMessage[]> {
  const bySecond = new Map<number, StartMessage[]>();
  for (const start of starts) {
    const second = Math.floor(start.startedAt / 1000);
    bySecond.set(second, [...(bySecond.get(second) ?? []), start]);
  }
  return bySecond;
}

/** Every run that started, with its end if it was reported; sorted by start. */
export function runSpans(starts: StartMessage[], runs: RunMessage[]): RunSpan[] {
  const endById = new Map(runs.map((run) => [run.runId, run.endedAt]));
  return starts
    .map(({ runId, instance, startedAt }) => ({ runId, instance, startedAt, endedAt: endById.get(runId) ?? Infinity }))
    .sort((a, b) => a.startedAt - b.startedAt);
}

/** The pairs of runs that overlap in time. `spans` must be sorted by start, as {@link runSpans} returns them. */
export function overlappingPairs(spans: RunSpan[]): Array<[RunSpan, RunSpan]> {
  // Sorted by start, any overlap shows up between neighbours: if a overlaps c, a overlaps whatever starts between them.
  const pairs: Array<[RunSpan, RunSpan]> = [];
  for (let i = 1; i < spans.length; i++) {
    if (spans[i].startedAt < spans[i - 1].endedAt) pairs.push([spans[i - 1], spans[i]]);
  }
  return pairs;
}
