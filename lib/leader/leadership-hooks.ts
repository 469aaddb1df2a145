import type { LeaderLease } from './leader-lease.js';

/** Implemented by a `@LeaderElection()` provider: called when this node becomes the election's leader. */
export interface OnLeadershipAcquired {
  /**
   * Start the leader's work here, and stop it when `lease.signal` aborts. A hook that throws or rejects makes the
   * node step down.
   */
  onLeadershipAcquired(lease: LeaderLease): unknown;
}

/** Implemented by a `@LeaderElection()` provider: called once when a term of this node ends, for any reason. */
export interface OnLeadershipLost {
  /** `lease.signal` is aborted already; its reason says why the term ended. The lease is released after it settles. */
  onLeadershipLost(lease: LeaderLease): unknown;
}
