import { leaderLockName } from '../leader/leader-campaign.js';
import type { ClusterAdmin } from './cluster-admin.js';
import type { HistoryEntry, OperatorNote } from './cluster-records.js';
import type { OperatorProvider } from './operator-provider.js';
import { checkedOperatorNote } from './operator-note.js';

/** An election as operators see it, read from the store: who leads, in which term, since when. */
export interface ElectionOverview {
  /** The election's name. */
  readonly election: string;
  /** The leader's `node`; `null` while no node leads. */
  readonly leader: string | null;
  /** The leader's fencing token, which grows with every term; `null` while no node leads, or without fencing. */
  readonly term: number | null;
  /** When the current term began, on the leader's clock; `null` while no node leads. */
  readonly since: Date | null;
}

/** What an operator's step-down did: the leader stepped down, or why not. */
export type StepDownOutcome =
  | { readonly steppedDown: true; readonly formerLeader: string }
  | { readonly steppedDown: false; readonly reason: 'no-leader' | 'pending' | 'not-taken' | 'not-leader' };

/**
 * The elections of the cluster for operators, from any node. A step-down is queued in the store as a trigger of
 * the election's lock, which its leader takes within a second: it is recorded in that lock's history.
 */
export class ElectionAdmin {
  constructor(
    private readonly store: OperatorProvider,
    private readonly cluster: ClusterAdmin,
  ) {}

  /** Every election a live node takes part in, by name: each one's leader, term and since when. */
  async listElections(): Promise<ElectionOverview[]> {
    const names = new Set((await this.cluster.listNodes()).flatMap((node) => node.elections));
    return Promise.all([...names].sort().map((name) => this.election(name)));
  }

  async election(election: string): Promise<ElectionOverview> {
    const { holder, fencingToken } = await this.store.lockState(leaderLockName(election));
    if (!holder) return { election, leader: null, term: null, since: null };
    return { election, leader: holder.node, term: fencingToken ?? null, since: holder.since };
  }

  /** The election's last `limit` operator actions, newest first. */
  history(election: string, limit: number): Promise<HistoryEntry[]> {
    return this.store.history(leaderLockName(election), limit);
  }

  /**
   * Asks the leader to step down (`stepped-down`): its signal aborts, its hook runs, its lease is released. Waits up
   * to `waitMs` for the leader to take the request; one not taken by then is withdrawn (`not-taken`).
   */
  async stepDown(election: string, note: OperatorNote, waitMs = 5_000): Promise<StepDownOutcome> {
    const checked = checkedOperatorNote(note);
    const lockName = leaderLockName(election);
    if (!(await this.store.lockState(lockName)).holder) return { steppedDown: false, reason: 'no-leader' };
    const { request, queued } = await this.store.requestTrigger(lockName, lockName, checked);
    if (!queued) return { steppedDown: false, reason: 'pending' };
    let result = await this.cluster.triggerResult(request.id, waitMs);
    if (!result && (await this.store.withdrawTrigger(lockName, request.id))) {
      return { steppedDown: false, reason: 'not-taken' };
    }
    result ??= await this.cluster.triggerResult(request.id, waitMs); // taken just now: its answer follows
    if (result?.state === 'started') return { steppedDown: true, formerLeader: result.node };
    return { steppedDown: false, reason: result ? 'not-leader' : 'not-taken' };
  }
}
