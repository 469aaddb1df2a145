/**
 * `nest-scheduler-lock/leader`: one leader per election across the cluster, with hooks on a Nest provider. The
 * module (`SchedulerLockModule`, from the main entry) runs the elections; jobs on the leader need no import.
 *
 * @module nest-scheduler-lock/leader
 */

export { LeaderElection, type LeaderElectionOptions } from '../nest/leader-election.decorator.js';
export { LeaderElections } from '../nest/leader-elections.js';
export type { OnLeadershipAcquired, OnLeadershipLost } from './leadership-hooks.js';
export { LeadershipEndedError, type LeaderLease, type LeadershipEndReason } from './leader-lease.js';
export type { ElectionOverview, StepDownOutcome } from '../operators/election-admin.js';
