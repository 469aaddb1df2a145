import { config } from '../config.js';

/** What a job prints each time it runs: one JSON line on stdout, which the cluster demo collects. */
export interface TickLine {
  instance: string;
  job: string;
  /** The wall-clock second the run started in, e.g. `2025-01-31T12:00:05Z`. */
  tick: string;
}

/** Prints this instance's {@link TickLine} for a run of `job` starting now. */
export function logTick(job: string): void {
  const line: TickLine = { instance: config.instanceId, job, tick: `${new Date().toISOString().slice(0, 19)}Z` };
  console.log(JSON.stringify(line));
}
