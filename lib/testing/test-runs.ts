import { AssertionError } from 'node:assert';
import type { HistoryEntry, HistoryOutcome } from '../operators/cluster-records.js';

/** One run of a job as the store recorded it when it ended. */
export interface TestRun {
  /** The node that ran it (its `node`). */
  readonly node: string;
  /** For a once-per-occurrence cron job: the fire time the run belonged to. */
  readonly occurrence: Date | null;
  /** How it ended: `lost` when its lock was gone by then, `crashed` as a node taking over found it. */
  readonly outcome: HistoryOutcome;
  /** 1, or 2 and more for a re-run of an occurrence whose node died (`onCrash: 'rerun'`). */
  readonly attempt: number;
  readonly startedAt: Date;
  readonly fencingToken: number | null;
  /** For a run an operator asked for (`trigger`): who. */
  readonly manual: { readonly actor: string } | null;
}

/** The runs in a job's history (newest first), oldest first. */
export function runsOf(history: readonly HistoryEntry[]): TestRun[] {
  return history
    .flatMap((entry) => (entry.type === 'run' ? [entry] : []))
    .reverse()
    .map((entry) => ({
      node: entry.node,
      occurrence: entry.occurrence,
      outcome: entry.outcome,
      attempt: entry.attempt,
      startedAt: entry.startedAt,
      fencingToken: entry.fencingToken,
      manual: entry.manual && { actor: entry.manual.actor },
    }));
}

/** The one run of `runs` (of `occurrence`, when given); an {@link AssertionError} listing them otherwise. */
export function assertRanOnce(name: string, runs: readonly TestRun[], occurrence?: Date): TestRun {
  const at = occurrence?.getTime();
  const matching = at === undefined ? runs : runs.filter((run) => run.occurrence?.getTime() === at);
  if (matching.length === 1) return matching[0];
  const which = at === undefined ? '' : ` for occurrence ${new Date(at).toISOString()}`;
  const listed = matching.map(describeRun).join('; ') || 'no run recorded';
  throw new AssertionError({
    message: `Expected "${name}" to run once${which}, but it ran ${matching.length} times: ${listed}`,
    actual: matching.length,
    expected: 1,
    operator: 'ranOnce',
  });
}

function describeRun(run: TestRun): string {
  const occurrence = run.occurrence ? ` occurrence ${run.occurrence.toISOString()}` : '';
  return `on ${run.node}${occurrence} (attempt ${run.attempt}, ${run.outcome})`;
}
