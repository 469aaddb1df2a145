import type { TickLine } from '../jobs/tick-line.js';

/** The runs of each job in each second: `runs.get(tick).get(job)` lists the instances that ran it. */
type RunsByTick = Map<string, Map<string, string[]>>;

const NONE = '-';

/** Every (tick, job) run beyond the first: 0 when each job ran at most once per second. */
export function countDuplicates(ticks: TickLine[]): number {
  let duplicates = 0;
  for (const byJob of groupRuns(ticks).values()) {
    for (const instances of byJob.values()) duplicates += instances.length - 1;
  }
  return duplicates;
}

/**
 * One row per second, one column per job, each cell naming the instance that ran the job in that
 * second (`-`: nobody; several names: a duplicate, flagged `!!`).
 */
export function renderTickTable(ticks: TickLine[]): string {
  const jobs = [...new Set(ticks.map((tick) => tick.job))];
  const rows = [...groupRuns(ticks)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tick, byJob]) => [timeOfDay(tick), ...jobs.map((job) => cell(byJob.get(job)))]);
  return formatColumns([['second (UTC)', ...jobs], ...rows]);
}

/** Runs per instance, e.g. `instance-1: 12, instance-2: 9`. */
export function summarizeInstances(ticks: TickLine[]): string {
  const counts = new Map<string, number>();
  for (const { instance } of ticks) counts.set(instance, (counts.get(instance) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([instance, count]) => `${instance}: ${count}`)
    .join(', ');
}

function groupRuns(ticks: TickLine[]): RunsByTick {
  const runs: RunsByTick = new Map();
  for (const { tick, job, instance } of ticks) {
    const byJob = runs.get(tick) ?? new Map<string, string[]>();
    byJob.set(job, [...(byJob.get(job) ?? []), instance]);
    runs.set(tick, byJob);
  }
  return runs;
}

function cell(instances: string[] | undefined): string {
  if (!instances) return NONE;
  return instances.length === 1 ? instances[0] : `${instances.join('+')} !!`;
}

/** `2025-01-31T12:00:05Z` → `12:00:05`. */
function timeOfDay(tick: string): string {
  return tick.slice(11, 19);
}

function formatColumns(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((text, column) => text.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
