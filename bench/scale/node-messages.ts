/**
 * What a node of the scale bench (scale-node.ts) tells the bench (scale-fleet.ts): JSON lines on its
 * stdout. A node reports twice: `ready` once its jobs are started, and `report` when the bench sends it
 * SIGUSR2 at the end of a phase. Everything in between stays in the node's memory, so that recording a
 * run costs a few array writes, not a line of output.
 */

/** How a node runs its jobs: locked, on the leader of one election only (locked too), or without the lock. */
export type NodeMode = 'locked' | 'leader' | 'unlocked';

/** Node process memory, in bytes. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
}

/** Running totals a node reads at half past each wall-clock second. */
export interface SecondSample {
  /** When it was read (epoch ms): half past the second, or later if the event loop was busy. */
  readonly at: number;
  /** This process's CPU time so far (user + system), µs. */
  readonly cpuMicros: number;
  /** Round trips the node's client sent so far (0 for an unlocked node, which has no client). */
  readonly roundTrips: number;
  /** Commands (Redis) or statements (PostgreSQL) the node's client sent so far. */
  readonly commands: number;
  /**
   * The tick path's lock calls among them (claims, releases, lease renewals): Lua script calls (`EVALSHA`,
   * `EVAL`) on Redis, the provider's batch statements (`WITH input AS (… unnest(…))`) on PostgreSQL.
   */
  readonly scriptCalls: number;
}

export interface ReadyMessage {
  readonly type: 'ready';
  /** After the app booted, before any job was added (after a full GC). */
  readonly emptyMemory: MemorySample;
}

/** Warnings and errors the node saw, by where they came from, with the first few texts. */
export interface NodeWarnings {
  readonly count: number;
  readonly first: readonly string[];
}

export interface ReportMessage {
  readonly type: 'report';
  /** When the report was asked for, after the phase's jobs ran (after a full GC). */
  readonly memory: MemorySample;
  /**
   * Per occurrence second (epoch s): how many times each job's handler ran for it on this node, one
   * byte per job (saturating at 255), base64.
   */
  readonly runs: Readonly<Record<string, string>>;
  /**
   * Per occurrence second: the delays of its runs from their tick's fire time to the handler's start,
   * as [delay ms, runs] pairs.
   */
  readonly delays: Readonly<Record<string, readonly (readonly [number, number])[]>>;
  /** Per wall-clock second (epoch s): the totals read at half past it (none for a second the event loop missed). */
  readonly samples: Readonly<Record<string, SecondSample>>;
  /** Runs of a locked job whose handler saw no lock (must be 0). */
  readonly runsWithoutLock: number;
  /**
   * Ticks cron fired at once because its timer was due in the past when it set it ("Missed execution
   * deadline … Executing immediately"): late on a busy machine, but neither missed nor repeated.
   */
  readonly lateTicks: number;
  /**
   * Per occurrence second: locked runs that claimed it from an earlier tick. A tick more than half a
   * second late claims the nearest fire time, the next one, and runs it before it is due (none when clean).
   */
  readonly earlyClaims: Readonly<Record<string, number>>;
  /** Warnings and errors logged by Nest (the lock module's included) and by cron. */
  readonly warnings: NodeWarnings;
  /** Per wall-clock second (epoch s) of the lock module's `skipped` events: their count by reason. */
  readonly skips: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export type NodeMessage = ReadyMessage | ReportMessage;

/** The environment the bench gives each node. */
export interface ScaleNodeEnv {
  readonly BENCH_NODE: string;
  readonly BENCH_MODE: NodeMode;
  readonly BENCH_JOBS: string;
  /** `redis` or `postgres`. */
  readonly BENCH_STORE: string;
  readonly BENCH_STORE_URL: string;
  readonly BENCH_KEY_PREFIX: string;
  /** The jobs' cron expression; every second when unset. */
  readonly BENCH_CRON?: string;
  /** How late a tick may be and still run (cron's `threshold`, ms); cron's 250 when unset. */
  readonly BENCH_CRON_THRESHOLD?: string;
}
