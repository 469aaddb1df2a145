import { SetMetadata } from '@nestjs/common';
import type { DurationInput } from '../core/provider/duration.js';
import {
  DEFAULT_LEASE,
  MAX_TIMER_MS,
  assertKnownOptions,
  positiveDurationOption,
  SchedulerLockConfigurationError,
} from '../core/provider/lock-configuration.js';
import { quoted } from '../core/provider/message-text.js';

/** Options of {@link LeaderElection}; another key throws naming it. */
export interface LeaderElectionOptions {
  /**
   * How long the leader's lease lasts unrenewed, as `'15s'`, an ISO-8601 duration or ms: a dead leader is replaced
   * within the lease plus a third of it. The leader renews it every third. Default 30 s.
   */
  lease?: DurationInput;
}

/** @internal What `@LeaderElection()` records on its class. */
export interface LeaderElectionDefinition {
  readonly election: string;
  /** ms */
  readonly lease: number;
}

/** @internal Metadata key of `@LeaderElection()` on a class. */
export const LEADER_ELECTION = 'nest-scheduler-lock:leader-election';

/**
 * Makes a provider take part in the election `election`: one node of the cluster at a time leads, and its
 * provider's `onLeadershipAcquired(lease)` and `onLeadershipLost(lease)` hooks are called as its terms begin
 * and end (see `OnLeadershipAcquired`, `OnLeadershipLost`). Needs a provider with `renewLeases()`.
 *
 * @throws SchedulerLockConfigurationError naming the option and the value, for a bad name or option.
 */
export function LeaderElection(election: string, options: LeaderElectionOptions = {}): ClassDecorator {
  const subject = `@LeaderElection(${quoted(election)})`;
  if (typeof election !== 'string' || election.trim() === '') {
    throw new SchedulerLockConfigurationError(`${subject}: the election name must be a non-empty string`);
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SchedulerLockConfigurationError(`${subject}: options must be an object (got ${quoted(options)})`);
  }
  assertKnownOptions(options, ['lease'], subject);
  const lease = positiveDurationOption(options.lease, DEFAULT_LEASE, 'lease', subject, MAX_TIMER_MS);
  const definition: LeaderElectionDefinition = { election, lease };
  return SetMetadata(LEADER_ELECTION, definition);
}
