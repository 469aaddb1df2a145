import { median } from './stats.js';

/** One contender in one case: a slice of work that reports operations per second. */
export interface Entrant {
  readonly label: string;
  measure(): Promise<number>;
}

/** A case: contenders measured against each other, the first being the baseline of every ratio. */
export interface PairedCase {
  readonly label: string;
  readonly entrants: readonly Entrant[];
}

/** What one entrant of one case achieved over the rounds. */
export interface PairedResult {
  readonly caseLabel: string;
  readonly label: string;
  /** Operations per second, one sample per measured round. */
  readonly samples: readonly number[];
  /** Per round: this entrant's ops/s divided by the baseline's ops/s of the same round. */
  readonly ratios: readonly number[];
  readonly medianOpsPerSecond: number;
  readonly medianRatio: number;
}

/**
 * Measures every entrant of every case once per round, cases and entrants interleaved, so that a slow
 * spell of the machine (other processes share the two cores and the Redis) hits every contender
 * alike; a ratio is only ever taken between slices of the same round. The entrants' order follows a
 * Williams design: over a block of rounds each entrant runs in every position and right after every
 * other entrant equally often. That matters: a slice runs measurably faster after a mostly idle one
 * (redis-semaphore's failed attempts sleep 1 ms each), and a plain rotation would always give that
 * advantage to the same entrant. The first `warmupRounds` rounds are run and discarded (JIT,
 * connection pools, script caches). With `more`, the run goes on past `rounds` until its `until` holds.
 */
export async function runPairedRounds(
  cases: readonly PairedCase[],
  rounds: number,
  warmupRounds: number,
  onRound: (round: number) => void = () => undefined,
  more?: MoreRounds,
): Promise<PairedResult[]> {
  const samples = cases.map((c) => c.entrants.map((): number[] => []));
  let planned = warmupRounds + rounds;
  for (let round = 0; round < planned; round++) {
    for (const [caseIndex, { entrants }] of cases.entries()) {
      for (const entrantIndex of williamsOrder(entrants.length, round)) {
        const opsPerSecond = await entrants[entrantIndex].measure();
        if (round >= warmupRounds) samples[caseIndex][entrantIndex].push(opsPerSecond);
      }
    }
    onRound(round - warmupRounds);
    const room = more !== undefined && round + 1 - warmupRounds + more.block <= more.maxRounds;
    if (room && round + 1 === planned && !more.until(pairedResults(cases, samples))) planned += more.block;
  }
  return pairedResults(cases, samples);
}

/** Rounds beyond the first ones, a whole block at a time, until `until` holds or `maxRounds` are measured. */
export interface MoreRounds {
  readonly block: number;
  readonly maxRounds: number;
  until(results: readonly PairedResult[]): boolean;
}

function pairedResults(cases: readonly PairedCase[], samples: readonly (readonly number[][])[]): PairedResult[] {
  return cases.flatMap((c, caseIndex) => {
    const baseline = samples[caseIndex][0];
    return c.entrants.map((entrant, entrantIndex) => {
      const own = samples[caseIndex][entrantIndex];
      const ratios = pairedRatios(own, baseline);
      return {
        caseLabel: c.label,
        label: entrant.label,
        samples: own,
        ratios,
        medianOpsPerSecond: median(own),
        medianRatio: median(ratios),
      };
    });
  });
}

/** Per round: `own`'s sample over `other`'s sample of the same round. */
export function pairedRatios(own: readonly number[], other: readonly number[]): number[] {
  return own.map((value, round) => value / other[round]);
}

/**
 * Row `round` of a Williams design for `n` treatments: a Latin square (every treatment once in every
 * position per block) in which every treatment directly follows every other equally often; a block is
 * `n` rows for even `n`, `2n` for odd `n` (each row then also taken reversed).
 */
export function williamsOrder(n: number, round: number): number[] {
  // Base row 0, 1, n-1, 2, n-2, …; the other rows shift it by the row number.
  const base = Array.from({ length: n }, (_, i) => (i === 0 ? 0 : i % 2 === 1 ? (i + 1) / 2 : n - i / 2));
  const row = base.map((treatment) => (treatment + round) % n);
  return n % 2 === 1 && Math.floor(round / n) % 2 === 1 ? row.reverse() : row;
}

/** How many rounds make a whole block of {@link williamsOrder} for `n` entrants. */
export function williamsBlockLength(n: number): number {
  return n % 2 === 1 ? 2 * n : n;
}
