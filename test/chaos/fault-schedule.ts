import { FAULT_KINDS, type FaultKind } from './journal.js';
import { seededRandom } from '../../lib/provider-tests/seeded-random.js';

/** A fault to inject: `atMs` after the soak began (all apps ready), for `durationMs`. */
export interface PlannedFault {
  readonly atMs: number;
  readonly kind: FaultKind;
  /** The store (`redis`, `postgres`), the app the fault hits, or `leader`: the app that leads when it comes. */
  readonly target: string;
  /**
   * How long the fault lasts: an app's or the store's time down before its restart, a pause, a partition.
   * At most 5 s: longer than the report job's 3 s lease (leases do run out), shorter than lease +
   * `recoveryGrace` (3 + 5 s), past which the README allows an occurrence to run twice.
   */
  readonly durationMs: number;
}

/** What a plan is made for. */
export interface FaultPlanOptions {
  readonly seed: number;
  readonly soakMs: number;
  /** The apps a fault may hit. */
  readonly nodes: readonly string[];
  /** The store's name, the target of `store-kill` and `store-pause`. */
  readonly store: string;
}

/** The plan, and the quiet gaps it was made with. */
export interface FaultPlan {
  readonly faults: readonly PlannedFault[];
  readonly quietMs: readonly [number, number];
}

const DURATION_MS: Record<FaultKind, readonly [number, number]> = {
  'app-kill': [2_000, 5_000],
  'leader-kill': [2_000, 5_000],
  'store-kill': [1_000, 3_000],
  // Longer than the PostgreSQL app's statement deadline (1 s statement_timeout + 1 s): claims are given up.
  'store-pause': [2_500, 4_500],
  stall: [1_500, 5_000],
  'black-hole': [1_500, 5_000],
  reset: [1_500, 5_000],
};

/**
 * What a fault's window takes beyond its duration: a killed app boots again, a killed store recovers (Redis
 * loads its AOF, PostgreSQL replays its WAL). A restart that takes longer pushes the next faults back.
 */
export const RESTART_ALLOWANCE_MS: Record<FaultKind, number> = {
  'app-kill': 4_000,
  'leader-kill': 4_000,
  'store-kill': 1_000,
  'store-pause': 0,
  stall: 0,
  'black-hole': 0,
  reset: 0,
};

/** No fault in the first seconds, while the apps settle, nor in the last ones, so the end is observed whole. */
export const WARMUP_MS = 5_000;
export const TAIL_MS = 8_000;

/** Quiet gaps between faults, longest first: a short soak takes the first that still fits every kind. */
const QUIET_RANGES_MS: ReadonlyArray<readonly [number, number]> = [
  [8_000, 16_000],
  [6_000, 12_000],
  [4_000, 8_000],
  [3_000, 6_000],
];

/**
 * The faults of a soak, from its seed alone: the same seed, length and apps give the same plan. Faults
 * come one at a time with a quiet gap between them; the first seven are one of each kind in a seeded
 * order, the rest are drawn at random. Throws when the soak is too short to hold every kind.
 */
export function planFaults(options: FaultPlanOptions): FaultPlan {
  for (const quietMs of QUIET_RANGES_MS) {
    const faults = planWithQuiet(options, quietMs);
    if (FAULT_KINDS.every((kind) => faults.some((fault) => fault.kind === kind))) return { faults, quietMs };
  }
  const shortest = QUIET_RANGES_MS.at(-1)!;
  const needed = FAULT_KINDS.reduce(
    (sum, kind) => sum + DURATION_MS[kind][1] + RESTART_ALLOWANCE_MS[kind] + shortest[1],
    WARMUP_MS + TAIL_MS,
  );
  throw new Error(
    `A ${options.soakMs / 1000} s soak cannot hold one fault of each kind; ` +
      `give it at least ${Math.ceil(needed / 1000)} s`,
  );
}

function planWithQuiet(options: FaultPlanOptions, [quietMin, quietMax]: readonly [number, number]): PlannedFault[] {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const between = (min: number, max: number): number => Math.round(min + random() * (max - min));
  const firstRound = shuffled(FAULT_KINDS, random);

  const faults: PlannedFault[] = [];
  let at = WARMUP_MS;
  for (;;) {
    const kind = faults.length < firstRound.length ? firstRound[faults.length] : pick(FAULT_KINDS);
    const durationMs = between(...DURATION_MS[kind]);
    const target = kind.startsWith('store-') ? options.store : kind === 'leader-kill' ? 'leader' : pick(options.nodes);
    if (at + durationMs + RESTART_ALLOWANCE_MS[kind] > options.soakMs - TAIL_MS) return faults;
    faults.push({ atMs: at, kind, target, durationMs });
    at += durationMs + RESTART_ALLOWANCE_MS[kind] + between(quietMin, quietMax);
  }
}

/** A Fisher–Yates shuffle with `random`. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

export { seededRandom };
