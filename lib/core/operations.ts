/*
 * What operators see of a cluster's locked jobs and how they steer them: the catalogue nodes publish, the run
 * history written with each release, and the steering actions. Stores implement `OperatorStore`
 * (provider-abilities.ts); the Redis one is `RedisOperatorStore`.
 */

/** A locked job as the nodes that run it publish it. */
export interface CatalogueJob {
  readonly jobName: string;
  readonly lockName: string;
  readonly kind: 'cron' | 'interval' | 'timeout';
  /** The cron expression, or the period / delay in ms of an interval / timeout job. */
  readonly schedule: string;
  readonly timeZone?: string;
  readonly lockAtMostFor: number;
  readonly lockAtLeastFor: number;
  /** The keepAlive lease (ms), when the job renews its lock. */
  readonly lease?: number;
  /** Whether each cron occurrence runs once cluster-wide. */
  readonly occurrence: boolean;
}

/** A node of the cluster, from its last heartbeat. */
export interface ClusterNode {
  readonly lockedBy: string;
  /** The package version the node runs. */
  readonly version: string;
  readonly startedAt: number;
  readonly lastSeen: number;
  /** The names of the locked jobs it runs. */
  readonly jobs: readonly string[];
}

/** How a run ended, in the history. `crashed`: its node died; `lost`: its lock was gone before it ended. */
export type HistoryOutcome = 'succeeded' | 'failed' | 'crashed' | 'lost';

/** One run of a job, as its release recorded it (a crashed one, as the node that took over found it). */
export interface RunHistoryEntry {
  readonly type: 'run';
  /** The cron occurrence (epoch ms), for once-per-occurrence jobs. */
  readonly occurrence?: number;
  readonly node: string;
  readonly startedAt: number;
  readonly finishedAt?: number;
  readonly durationMs?: number;
  readonly outcome: HistoryOutcome;
  /** The error's message, cut to 500 characters, when the run failed. */
  readonly error?: string;
  readonly fencingToken?: number;
  readonly attempt: number;
  /** For a run an operator asked for (`trigger`): who. */
  readonly manual?: { readonly actor: string; readonly triggerId: string };
}

/** An operator's action on a job, recorded in its history. */
export interface SteeringEntry {
  readonly type: SteeringAction;
  readonly actor: string;
  readonly reason?: string;
  readonly at: number;
  /** For `unlock`: who held the lock. */
  readonly formerHolder?: string;
}

export type HistoryEntry = RunHistoryEntry | SteeringEntry;

/** What an operator can do to a job, cluster-wide. */
export type SteeringAction = 'pause' | 'resume' | 'trigger' | 'unlock';

/** Who does a steering action, and why. */
export interface SteeringNote {
  /** Who: a user name, a service account, `cli:<user>`. */
  readonly actor: string;
  /** Why: at most {@link REASON_MAX_LENGTH} characters from the status page and the CLI. */
  readonly reason?: string;
}

/** The longest `reason` the status page and the CLI take: it is kept in the history and shown on every poll. */
export const REASON_MAX_LENGTH = 500;

/** A job's pause, while it lasts. */
export interface PauseState {
  readonly actor: string;
  readonly reason?: string;
  readonly at: number;
}

/** What a node reports on an operator's `trigger`. */
export interface TriggerResult {
  readonly node: string;
  /** `started`: the run began (its outcome goes to the history); `skipped`: it could not take the lock. */
  readonly state: 'started' | 'skipped';
  readonly reason?: string;
}

/** What a run's release adds to the history, beyond what the store knows itself. */
export interface RunReport {
  readonly occurrence?: number;
  /** Epoch ms, this node's clock. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly error?: string;
  readonly attempt: number;
  readonly manual?: { readonly actor: string; readonly triggerId: string };
}

/** A job as an operator sees it, cluster-wide (`jobs` / `job NAME` of the CLI and the admin service). */
export interface JobOverview {
  readonly name: string;
  readonly lockName: string;
  readonly kind: CatalogueJob['kind'];
  /** The cron expression, or `every <ms> ms` / `once after <ms> ms`. */
  readonly schedule: string;
  readonly timeZone?: string;
  readonly paused: boolean;
  readonly pause?: PauseState;
  /** Who holds the lock now (its `lockedBy`), or `null`. */
  readonly holder: string | null;
  /** Since when the holder has it (epoch ms, the holder's clock), when held. */
  readonly lockedSince?: number;
  /** Until when the lock is held at most as Redis has it now (epoch ms), when held. */
  readonly lockedUntil: number | null;
  /** The holder's fencing token, when held. */
  readonly fencingToken?: number;
  /**
   * When a cron job fires next (epoch ms), from its expression and time zone with `cron`'s `CronTime` (without a
   * time zone, in the zone of the process that asks). `null` for interval and timeout jobs, and where the `cron`
   * package (`@nestjs/schedule`'s dependency) cannot be loaded.
   */
  readonly nextFireAt: number | null;
  /** The newest run in the history, or `null`. */
  readonly lastRun: LastRun | null;
  /** Skips by reason since the counts began. */
  readonly skips: Readonly<Record<string, number>>;
  /** The live nodes that run the job. */
  readonly nodes: readonly string[];
}

/** The newest run of a job, as `lastRun` of a {@link JobOverview}. */
export interface LastRun {
  readonly occurrence: number | null;
  readonly state: HistoryOutcome;
  readonly node: string;
  readonly startedAt: number;
  readonly finishedAt: number | null;
  readonly durationMs: number | null;
  readonly error?: string;
  readonly fencingToken?: number;
  readonly attempt: number;
  readonly manual?: RunHistoryEntry['manual'];
}
