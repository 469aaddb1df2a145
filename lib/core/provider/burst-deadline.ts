/** Each this many calls of a burst add half a deadline of one call to the burst's. */
const CALLS_PER_STEP = 250;
/** The longest a burst's deadline grows: this many times the deadline of one call. */
export const MAX_BURST_FACTOR = 4;

/**
 * The deadline (ms) of a call sent in a burst of `calls`, when one call's is `base`: a burst's calls queue
 * behind each other and behind other nodes' bursts on the same locks, so the deadline grows by half of `base`
 * for each 250 calls, up to {@link MAX_BURST_FACTOR} times `base` (1,500 calls). In steps, so that bursts of
 * under 250 calls all get `base` exactly (PostgreSQL's `statement_timeout` of a connection then stays as set).
 */
export function burstDeadline(base: number, calls: number): number {
  return base * Math.min(MAX_BURST_FACTOR, 1 + Math.floor(calls / CALLS_PER_STEP) / 2);
}
