import type { OperatorAction } from '../core/task/lock-events.js';

/*
 * What an operator store keeps of a cluster's locked jobs: the catalogue and heartbeats nodes publish, the run
 * history written with each release, pauses, triggers and the operator actions. Stores keep them behind the
 * `OperatorProvider` port (operator-provider.ts).
 */

/** A locked job as the nodes that run it publish it. */
export interface CatalogueJob {
  readonly jobName: string;
  readonly lockName: string;
  readonly kind: 'cron' | 'interval' | 'timeout';
  /** The cron expression, or the period / delay in ms of an interval / timeout job. */
  readonly schedule: string;
  readonly timeZone: string | null;
  readonly lockAtMostFor: number;
  readonly lockAtLeastFor: number;
  /** The keepAlive lease (ms), when the job renews its lock. */
  readonly lease: number | null;
  /** Whether each cron occurrence runs once cluster-wide. */
  readonly occurrence: boolean;
}

/** A node of the cluster, from its last heartbeat. */
export interface ClusterNode {
  readonly node: string;
  /** The package version the node runs. */
  readonly version: string;
  readonly startedAt: Date;
  /** Its last heartbeat. */
  readonly lastSeen: Date;
  /** The names of the locked jobs it runs. */
  readonly jobs: readonly string[];
  /** The names of the elections it takes part in. */
  readonly elections: readonly string[];
}

/** How a run ended, in the history. `crashed`: its node died; `lost`: its lock was gone before it ended. */
export type HistoryOutcome = 'succeeded' | 'failed' | 'crashed' | 'lost';

/** One run of a job, as its release recorded it (a crashed one, as the node that took over found it). */
export interface RunHistoryEntry {
  readonly type: 'run';
  /** The cron occurrence, for once-per-occurrence jobs. */
  readonly occurrence: Date | null;
  readonly node: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly durationMs: number | null;
  readonly outcome: HistoryOutcome;
  /** The error's message, cut to 500 characters, when the run failed. */
  readonly error: string | null;
  readonly fencingToken: number | null;
  readonly attempt: number;
  /** For a run an operator asked for (`trigger`): who. */
  readonly manual: { readonly actor: string; readonly triggerId: string } | null;
}

/** An operator's action on a job, recorded in its history. */
export interface OperatorEntry {
  readonly type: OperatorAction;
  readonly actor: string;
  readonly reason: string | null;
  readonly at: Date;
  /** For `unlock`: who held the lock. */
  readonly formerNode: string | null;
}

export type HistoryEntry = RunHistoryEntry | OperatorEntry;

/** Who does an operator action, and why. */
export interface OperatorNote {
  /** Who: a user name, a service account, `cli:<user>`; at most 100 characters (operator-note.ts). */
  readonly actor: string;
  /** Why: at most 500 characters. Neither holds a control character. */
  readonly reason?: string;
}

/** A job's pause, while it lasts. */
export interface PauseState {
  readonly actor: string;
  readonly reason: string | null;
  readonly at: Date;
}

/** A trigger an operator asked for, waiting for a node that runs the job. */
export interface TriggerRequest {
  readonly id: string;
  readonly jobName: string;
  readonly actor: string;
  readonly reason: string | null;
  readonly at: Date;
}

/** What a node reports on an operator's `trigger`. */
export interface TriggerResult {
  readonly node: string;
  /** `started`: the run began (its outcome goes to the history); `skipped`: it could not take the lock. */
  readonly state: 'started' | 'skipped';
  readonly reason: string | null;
}
