import { Inject, Injectable } from '@nestjs/common';
import { LockEvents, type OperatorAction } from '../core/task/lock-events.js';
import { ClusterAdmin, type TriggerOutcome } from '../operators/cluster-admin.js';
import type { ClusterNode, HistoryEntry, OperatorNote } from '../operators/cluster-records.js';
import type { ClusterJobHealth } from '../operators/job-health.js';
import type { JobOverview } from '../operators/job-overview.js';
import { ElectionAdmin, type ElectionOverview, type StepDownOutcome } from '../operators/election-admin.js';
import type { OperatorProvider } from '../operators/operator-provider.js';
import { SCHEDULER_LOCK_OPERATOR_PROVIDER, SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * The cluster's locked jobs for operators, from any node (also one that does not run the job): jobs, nodes,
 * run history, and pause / resume / trigger / unlock. Each operator action is recorded in the job's history
 * and emitted on this node as an `operator` event. Needs a provider with an operator store (the Redis and the
 * in-memory providers have one: `OperatorLockProvider`). An operator note is checked before the store is asked:
 * an `InvalidOperatorNoteError` for an actor over 100 or a reason over 500 characters, or a control character.
 */
@Injectable()
export class SchedulerLockAdmin {
  private readonly admin: ClusterAdmin | undefined;
  private readonly elections: ElectionAdmin | undefined;
  private readonly node: string;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) settings: SchedulerLockSettings,
    @Inject(SCHEDULER_LOCK_OPERATOR_PROVIDER) store: OperatorProvider | undefined,
    private readonly events: LockEvents,
  ) {
    this.node = settings.node;
    this.admin = store && new ClusterAdmin(store, settings.heartbeatInterval, settings.health);
    this.elections = store && this.admin && new ElectionAdmin(store, this.admin);
  }

  /** Every locked job a live node runs. */
  listJobs(): Promise<JobOverview[]> {
    return this.cluster().listJobs();
  }

  /** One job; rejects with `UnknownJobError` when no live node runs it. */
  getJob(name: string): Promise<JobOverview> {
    return this.cluster().getJob(name);
  }

  /** The job's last `limit` runs and operator actions, newest first. */
  history(name: string, limit?: number): Promise<HistoryEntry[]> {
    return this.cluster().history(name, limit);
  }

  /**
   * The health of every job the nodes published, by name, also of a job whose nodes are all gone: its state,
   * its last success, the occurrences no node ran since then.
   */
  listHealth(): Promise<ClusterJobHealth[]> {
    return this.cluster().listHealth();
  }

  /** One job's health; rejects with `UnknownJobError` when no node ever published it. */
  getHealth(name: string): Promise<ClusterJobHealth> {
    return this.cluster().getHealth(name);
  }

  /** The nodes whose heartbeat is recent. */
  listNodes(): Promise<ClusterNode[]> {
    return this.cluster().listNodes();
  }

  /** Every node skips the job's ticks (`paused`) until {@link resume}; a run in progress goes on. */
  async pause(name: string, note: OperatorNote): Promise<boolean> {
    return this.steered('pause', name, note, await this.cluster().pause(name, note));
  }

  async resume(name: string, note: OperatorNote): Promise<boolean> {
    return this.steered('resume', name, note, await this.cluster().resume(name, note));
  }

  /** Runs the job once soon on one node that has it; refused (`running`) while a run holds its lock. */
  async trigger(name: string, note: OperatorNote): Promise<TriggerOutcome> {
    return this.steered('trigger', name, note, await this.cluster().trigger(name, note));
  }

  /**
   * Force-releases the job's lock; the holder's run sees it lost (`not-owner`) at its next renewal or release.
   * `formerNode: null`: the lock was free, so nothing was released and nothing written to the job's history.
   */
  async unlock(name: string, note: OperatorNote): Promise<{ formerNode: string | null }> {
    return this.steered('unlock', name, note, await this.cluster().unlock(name, note));
  }

  /** Every election a live node takes part in (from the nodes' heartbeats), by name: leader, term and since when. */
  listElections(): Promise<ElectionOverview[]> {
    return this.electionAdmin().listElections();
  }

  /** The election's leader, term and since when, read from the store. */
  election(election: string): Promise<ElectionOverview> {
    return this.electionAdmin().election(election);
  }

  /** The election's last `limit` operator actions (step-downs, as triggers of its lock), newest first. */
  electionHistory(election: string, limit = 50): Promise<HistoryEntry[]> {
    return this.electionAdmin().history(election, limit);
  }

  /**
   * Makes the election's leader step down, wherever it runs: its term ends (`stepped-down`) and its lease is released,
   * so another node leads. Recorded in the history of the election's lock with `note`.
   */
  stepDown(election: string, note: OperatorNote): Promise<StepDownOutcome> {
    return this.electionAdmin().stepDown(election, note);
  }

  private electionAdmin(): ElectionAdmin {
    this.cluster(); // the same error without an operator store
    return this.elections!;
  }

  private async steered<T>(action: OperatorAction, jobName: string, note: OperatorNote, result: T): Promise<T> {
    const { lockName } = await this.cluster().catalogued(jobName);
    const { actor, reason } = note;
    this.events.emit({
      type: 'operator',
      action,
      lockName,
      jobName,
      actor,
      reason: reason ?? null,
      node: this.node,
      at: new Date(),
      fencingToken: null,
    });
    return result;
  }

  private cluster(): ClusterAdmin {
    if (!this.admin) {
      throw new Error(
        'SchedulerLockAdmin needs a provider with an operator store (an OperatorLockProvider, such as the Redis ' +
          'or the in-memory provider)',
      );
    }
    return this.admin;
  }
}
