import type { SkipCounts } from '../core/task/task-result.js';
import type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  PauseState,
  OperatorNote,
  TriggerRequest,
  TriggerResult,
} from './cluster-records.js';

/** How many runs (and operator actions) a job's history keeps unless told otherwise. */
export const DEFAULT_HISTORY_LIMIT = 50;

/** How long a trigger's result is kept for the operator who asked (ms). */
export const TRIGGER_RESULT_TTL = 300_000;

/** How long the claim of a health report is kept (ms): 30 days. */
export const HEALTH_REPORT_TTL = 2_592_000_000;

/**
 * What a health report tells, once for the cluster: `missed`, an occurrence no node ran (at its time); `failing`,
 * a job whose runs keep failing (at the start of the first failed run of the streak).
 */
export type HealthReportKind = 'missed' | 'failing';

/** The `kind` report at `at` of the job that locks `lockName`, for {@link OperatorProvider.claimHealthReports}. */
export interface HealthReportClaim {
  readonly lockName: string;
  readonly kind: HealthReportKind;
  readonly at: Date;
}

/**
 * The operator console's port (nestjs/throttler's storage idea): what a store keeps so that operators see the
 * cluster's locked jobs and steer them from any process. A provider offers one through
 * {@link OperatorLockProvider}; the nodes write to it (heartbeat, catalogue, skips, triggers), and the
 * admin service, the CLI and the status page read and steer through it (`ClusterAdmin`). No call is on a
 * tick's path. Rejections are store errors, said in the store's terms.
 */
export interface OperatorProvider {
  // Written by the nodes.

  /**
   * Publishes a node's heartbeat and the catalogue entries of its jobs that changed since the last one, adds the
   * skips it counted since then to the skip counts, and bids for the health turn, in one round trip: resolves to
   * the turn when this node holds it now, else to `null`.
   */
  publish(
    node: ClusterNode,
    jobs: readonly CatalogueJob[],
    skips: SkipCounts,
    bid: HealthTurnBid,
  ): Promise<HealthTurn | null>;
  /** Takes the pending triggers of `jobNames`: each one is taken by exactly one node, and none once withdrawn. */
  takeTriggers(jobNames: ReadonlySet<string>): Promise<TriggerRequest[]>;
  /** Records what became of a trigger, for the operator waiting for it (kept for a few minutes). */
  reportTrigger(id: string, result: TriggerResult): Promise<void>;
  /** Forgets the nodes last seen before `cutoff`, so the list stays bounded; resolves to how many. */
  forgetNodes(cutoff: Date): Promise<number>;
  /**
   * Claims health reports of any jobs in one round trip (on a Redis Cluster, one per job): resolves to those
   * this caller claimed, in order. Each is claimed once cluster-wide, for {@link HEALTH_REPORT_TTL}.
   */
  claimHealthReports(claims: readonly HealthReportClaim[]): Promise<HealthReportClaim[]>;

  // Read by operators.

  /** Every node that ever sent a heartbeat and is not forgotten yet. */
  nodes(): Promise<ClusterNode[]>;
  /** Every job of the catalogue. */
  jobs(): Promise<CatalogueJob[]>;
  job(jobName: string): Promise<CatalogueJob | undefined>;
  /** The last `limit` entries of a lock's history, newest first. */
  history(lockName: string, limit: number): Promise<HistoryEntry[]>;
  /** Who holds the lock now, its fencing token, and the job's pause. */
  lockState(lockName: string): Promise<LockState>;
  /**
   * What the health watch reads every interval, in one round trip (on a Redis Cluster, two, then one per job):
   * the nodes, and the jobs they run, each with its lock and last `limit` history entries.
   */
  clusterReading(limit: number): Promise<ClusterReading>;
  /** Skip counts of every lock: lock name → reason → count. */
  skips(): Promise<Map<string, Record<string, number>>>;

  // Operator actions, each recorded in the job's history.

  /** Pauses the job that locks `lockName`; `false` if it was paused already. */
  pause(lockName: string, note: OperatorNote): Promise<boolean>;
  /** Resumes a paused job; `false` if it was not paused. */
  resume(lockName: string, note: OperatorNote): Promise<boolean>;
  /**
   * Asks a node that runs `jobName` to run it once now: resolves to the request queued, or, while another is
   * pending for the job, to that one (this one is dropped and not recorded): one pending trigger per job.
   */
  requestTrigger(jobName: string, lockName: string, note: OperatorNote): Promise<TriggerQueueing>;
  /** Withdraws trigger `id` of `jobName` if no node has taken it yet; `false` when one has. */
  withdrawTrigger(jobName: string, id: string): Promise<boolean>;
  /** What became of a trigger, once a node has taken it. */
  triggerResult(id: string): Promise<TriggerResult | undefined>;
  /**
   * Force-releases the lock whoever holds it: its holder's next renewal or release finds it lost
   * (`not-owner`), while the job's next run may take it at once. Resolves to the former holder's `node`, or to
   * `undefined` when the lock was free, and then records nothing.
   */
  unlock(lockName: string, note: OperatorNote): Promise<string | undefined>;
}

/**
 * What {@link OperatorProvider.requestTrigger} did: queued `request`, or yielded to the pending one
 * (`queued: false`).
 */
export interface TriggerQueueing {
  readonly request: TriggerRequest;
  readonly queued: boolean;
}

/**
 * A heartbeat's bid for the health turn: one node at a time reads the cluster's health. The turn goes to the
 * bidder while it is free or already its own, for `lease` ms.
 */
export interface HealthTurnBid {
  /** How long the turn stays this node's without a further heartbeat (ms); 0 hands it back, as a node stops. */
  readonly lease: number;
  /** The jobs unhealthy at this node's last check, kept for the next holder while this node holds the turn. */
  readonly unhealthy: UnhealthyJobs;
}

/** Job name → state (a `JobHealthState`, kept as the store has it), of the jobs a health check found unhealthy. */
export type UnhealthyJobs = Readonly<Record<string, string>>;

/** The health turn a heartbeat holds. */
export interface HealthTurn {
  /** Whether this heartbeat took the turn (from another node, or after its own lapsed); `false`: it kept it. */
  readonly taken: boolean;
  /** The unhealthy jobs the turn keeps: when `taken`, those the former holder left. */
  readonly unhealthy: UnhealthyJobs;
}

/** What {@link OperatorProvider.clusterReading} reads. */
export interface ClusterReading {
  /** Every node not forgotten yet, as {@link OperatorProvider.nodes} reads them. */
  readonly nodes: ClusterNode[];
  /** The catalogue entries of the jobs some of these nodes run. */
  readonly jobs: CatalogueJob[];
  /** The lock and newest history entries of each of these jobs, by lock name. */
  readonly readings: Map<string, LockReading>;
}

/** The jobs of `catalogue` some of `nodes` run: those {@link OperatorProvider.clusterReading} reads. */
export function watchedJobs(nodes: readonly ClusterNode[], catalogue: readonly CatalogueJob[]): CatalogueJob[] {
  return catalogue.filter((job) => nodes.some((node) => node.jobs.includes(job.jobName)));
}

/** A lock's state and its newest history entries, as {@link OperatorProvider.clusterReading} reads them. */
export interface LockReading {
  /** As {@link OperatorProvider.lockState} reads it. */
  readonly lock: LockState;
  /** Newest first. */
  readonly recent: HistoryEntry[];
}

/** A lock as {@link OperatorProvider.lockState} reads it. */
export interface LockState {
  /** While the lock is held: who holds it, since when (the holder's clock), for how long still (ms). */
  readonly holder: { readonly node: string; readonly since: Date; readonly ttl: number } | null;
  /** The holder's fencing token, while held. */
  readonly fencingToken: number | null;
  /** The job's pause, while it lasts. */
  readonly paused: PauseState | null;
}
