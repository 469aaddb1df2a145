import type { Run } from './analysis.js';
import { CHAOS_JOBS, type SoakLine } from './journal.js';

type Fault = Extract<SoakLine, { type: 'fault' }>;

/** One renewal interval: the `report` job's 3 s lease is renewed every third of it. */
export const RENEWAL_INTERVAL_MS = 1_000;
/** The jobs checked try their lock at least this often (tick, sweep, the ledger loop). */
const TRY_EVERY_MS = 1_000;

/** Whether `run`'s job tries its lock at least every second. */
const triesEverySecond = (run: Run) =>
  ((CHAOS_JOBS[run.job] as { cronGapMs?: number }).cronGapMs ?? TRY_EVERY_MS) <= TRY_EVERY_MS;

/**
 * A lock that stayed held unused after a store pause for longer than the pause plus one renewal interval:
 * a claim sent during the pause and given up on took it when the store thawed, and its node never released
 * it. `next` is the run that took the lock again (none: none did before the soak's end).
 */
export interface HeldUnused {
  readonly lock: string;
  readonly pause: Fault;
  readonly lastTokenBefore: number;
  readonly next: Run | undefined;
  /** From the pause's end until the lock was taken again (or the soak ended). */
  readonly heldMs: number;
}

/**
 * After each store pause, the first run of each lock whose job tries at least every second (the `report`
 * job's next try may be 10 s on, which says nothing of its lock): when its fencing token skips one (a claim
 * nobody ran took the lock), it must start within the pause plus one renewal interval of the pause's end. A
 * lock not run again before the soak's end counts as held too, unless its last run's release failed.
 */
export function findLocksHeldUnused(runs: readonly Run[], faults: readonly Fault[], soakEnd: number): HeldUnused[] {
  const found: HeldUnused[] = [];
  const fenced = [...runs].filter((run) => run.fencingToken !== undefined).sort((a, b) => a.start - b.start);
  for (const pause of faults.filter((fault) => fault.kind === 'store-pause')) {
    const allowedMs = pause.end - pause.start + RENEWAL_INTERVAL_MS;
    for (const lock of new Set(fenced.filter(triesEverySecond).map((run) => run.lock))) {
      const ofLock = fenced.filter((run) => run.lock === lock);
      const before = ofLock.filter((run) => run.start < pause.end);
      if (before.length === 0) continue;
      const last = before.reduce((a, b) => (b.fencingToken! > a.fencingToken! ? b : a));
      // A run whose release failed (a store fault) holds its lock until its lockAtMostFor: no given-up claim.
      if (!last.released) continue;
      const lastTokenBefore = last.fencingToken!;
      const next = ofLock.find((run) => run.start >= pause.end);
      if (next && next.fencingToken! <= lastTokenBefore + 1) continue;
      const heldMs = (next?.start ?? soakEnd) - pause.end;
      if (heldMs > allowedMs + (next ? 0 : TRY_EVERY_MS)) found.push({ lock, pause, lastTokenBefore, next, heldMs });
    }
  }
  return found;
}
