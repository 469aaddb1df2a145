import type { LockLostReason } from '../core/provider/errors.js';

/**
 * Why a node stopped leading: its lease was lost (a {@link LockLostReason}; `shutdown` for a clean shutdown), an
 * operator made it step down (`stepped-down`), or its `onLeadershipAcquired` hook threw (`hook-failed`).
 */
export type LeadershipEndReason = LockLostReason | 'stepped-down' | 'hook-failed';

/** The reason an aborted {@link LeaderLease.signal} carries. */
export class LeadershipEndedError extends Error {
  override readonly name = 'LeadershipEndedError';
  constructor(
    /** The election whose term ended. */
    readonly election: string,
    /** Why it ended. */
    readonly reason: LeadershipEndReason,
  ) {
    super(`Leadership of "${election}" ended (${reason})`);
  }
}

/** One term of a node as the leader of an election: what the leadership hooks receive. */
export interface LeaderLease {
  /** The election's name. */
  readonly election: string;
  /** The node that leads: its `node`. */
  readonly node: string;
  /**
   * Greater than the token of every earlier term of this election, or `null` when the store has no fencing tokens.
   * Pass it to the systems the leader writes to, so that they refuse a former leader.
   */
  readonly fencingToken: number | null;
  /** When this term began, on this node's clock. */
  readonly since: Date;
  /** Aborts when the term ends, before the lease expires in the store; its reason is a {@link LeadershipEndedError}. */
  readonly signal: AbortSignal;
}
