/**
 * The chaos soak's run log: one JSON object per line, written by the app processes (their journals, on
 * stdout) and by the soak itself (faults, exits, CPU). Every `mono` is the machine's monotonic clock in
 * ms (see mono-clock.ts), the only clock the analysis compares; `wall` is a process's own, possibly
 * skewed, `Date.now()`.
 */

/** The jobs every app runs, the same on each; a job's lock has the job's name. */
export const CHAOS_JOBS = {
  /** `@Cron('* * * * * *')`: the job whose missed seconds are counted. */
  tick: { cronGapMs: 1_000 },
  /** `@Cron('*\/10 * * * * *')` with `keepAlive` (3 s lease) and `onCrash: 'rerun'`. */
  report: { cronGapMs: 10_000 },
  /** `@Interval(700)` with `lockAtLeastFor` and a 60 s `lockAtMostFor`. */
  sweep: {},
  /** A loop of `executeWithLock` calls. */
  ledger: {},
  /** `@Cron('*\/2 * * * * *')` with `leader`: its ticks run on the leader of {@link CHAOS_ELECTION} only. */
  beacon: { cronGapMs: 2_000 },
} as const satisfies Record<string, { cronGapMs?: number }>;

export type ChaosJob = keyof typeof CHAOS_JOBS;

/**
 * The election every app takes part in (`@LeaderElection()`), and its lease: short, so that faults cost terms
 * and a dead leader's successor is due within the soak's quiet gaps.
 */
export const CHAOS_ELECTION = { name: 'chaos-leader', leaseMs: 3_000 } as const;

/** The stores a soak runs against (`--store`). */
export type ChaosStoreKind = 'redis' | 'postgres';

/**
 * The kinds of fault the soak injects: `store-kill` and `store-pause` hit the store's server (Redis or
 * PostgreSQL), the others one app; `leader-kill` is an `app-kill` of the app that leads {@link CHAOS_ELECTION}.
 */
export type FaultKind = 'app-kill' | 'leader-kill' | 'store-kill' | 'store-pause' | 'stall' | 'black-hole' | 'reset';

export const FAULT_KINDS: readonly FaultKind[] = [
  'app-kill',
  'leader-kill',
  'store-kill',
  'store-pause',
  'stall',
  'black-hole',
  'reset',
];

/** What every line of an app's journal carries. */
interface AppLineBase {
  /** The app's name (`app-1` …), also its `node`; it keeps its name across restarts. */
  readonly node: string;
  readonly pid: number;
  readonly mono: number;
}

/** A run of a job, as its handler saw it. */
interface RunFields {
  /** Unique per run: `<node>:<pid>:<n>`. */
  readonly run: string;
  readonly job: ChaosJob;
  readonly lock: string;
}

export type AppLine =
  /** The app's jobs are scheduled. `wall` and `mono` are read back to back: their difference shows the skew. */
  | (AppLineBase & { readonly type: 'ready'; readonly wall: number })
  | (AppLineBase &
      RunFields & {
        readonly type: 'start';
        /** Whether `currentLock()` was set: a locked job's handler must never run without it. */
        readonly locked: boolean;
        readonly wall: number;
        readonly fencingToken?: number;
        /** Cron jobs: `currentLock().occurrence` (epoch ms). */
        readonly occurrence?: number;
        /** Cron jobs: 1, or `currentLock().recovery.attempt` for a re-run after a crash. */
        readonly attempt?: number;
        readonly previousNode?: string;
      })
  /** A term of this app as {@link CHAOS_ELECTION}'s leader began: `onLeadershipAcquired` was called. */
  | (AppLineBase & { readonly type: 'lead-start'; readonly fencingToken: number | null })
  /** That term ended: `onLeadershipLost` was called, its signal aborted with this `LeadershipEndedError` reason. */
  | (AppLineBase & { readonly type: 'lead-end'; readonly reason: string })
  /** The run's `signal` aborted; `reason` is the `LockLostError`'s. The run stops at once. */
  | (AppLineBase & RunFields & { readonly type: 'abort'; readonly reason: string })
  | (AppLineBase & RunFields & { readonly type: 'end'; readonly outcome: RunOutcome; readonly error?: string })
  /** The lock events that explain a run's fate (`released`: its outcome is recorded, the lock given back). */
  | (AppLineBase & {
      readonly type: 'lock-event';
      readonly event: 'skipped' | 'lost' | 'release-failed' | 'released';
      readonly lock: string;
      readonly reason?: string;
      readonly fencingToken?: number;
      readonly error?: string;
    })
  | (AppLineBase & {
      readonly type: 'unhandled';
      readonly kind: 'unhandledRejection' | 'uncaughtException';
      readonly error: string;
    })
  /** A warning or error the app logged (Nest's logger, or `console.warn` / `console.error`, as cron uses). */
  | (AppLineBase & {
      readonly type: 'log';
      readonly level: 'warn' | 'error';
      readonly context: string;
      readonly message: string;
    })
  /** The longest event-loop delay of the last second: how late a timer (a cron tick) could fire. */
  | (AppLineBase & { readonly type: 'loop-delay'; readonly maxMs: number });

/** How a run ended: its work done, stopped because its signal aborted, or its handler threw. */
export type RunOutcome = 'completed' | 'aborted' | 'failed';

/** What the soak itself records. */
export type SoakLine =
  | {
      readonly type: 'soak';
      readonly seed: number;
      readonly seconds: number;
      /** Absent in the logs of soaks before `--store`, which all ran on Redis. */
      readonly store?: ChaosStoreKind;
      readonly apps: ReadonlyArray<{ readonly node: string; readonly skewMs: number }>;
      /** The soak's own (unskewed) `Date.now()` minus `mono`: maps a fire time to the monotonic clock. */
      readonly wallMinusMono: number;
      /** How long after a fault its effects may still excuse a missed second (see analysis.ts). */
      readonly missMarginMs: number;
      /** When all apps were first ready: missed seconds are counted from then. */
      readonly mono: number;
    }
  /** A fault window on the monotonic clock, from its injection until the system was whole again. */
  | {
      readonly type: 'fault';
      readonly kind: FaultKind;
      readonly target: string;
      readonly start: number;
      readonly end: number;
    }
  /** An app process was spawned; `wallMinusMono` is the soak's own clock then, to check the app's skew against. */
  | {
      readonly type: 'app-started';
      readonly node: string;
      readonly pid: number;
      readonly mono: number;
      readonly wallMinusMono: number;
    }
  /** An app process ended: `expected` when the soak killed it (then `mono` is when the kill was sent). */
  | {
      readonly type: 'app-exit';
      readonly node: string;
      readonly pid: number;
      readonly mono: number;
      readonly expected: boolean;
      readonly description?: string;
    }
  /** The store's server ended: `expected` when the soak killed it. */
  | {
      readonly type: 'store-exit';
      readonly store: ChaosStoreKind;
      readonly pid: number;
      readonly mono: number;
      readonly expected: boolean;
    }
  /** The machine's CPU use over the last second (all cores), to tell load from faults. */
  | { readonly type: 'cpu'; readonly mono: number; readonly busyPercent: number }
  | { readonly type: 'soak-end'; readonly mono: number };

export type RunLogLine = AppLine | SoakLine;
