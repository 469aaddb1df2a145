import { Inject, Injectable } from '@nestjs/common';
import {
  LeaderElection,
  LeadershipEndedError,
  type LeaderLease,
  type OnLeadershipAcquired,
  type OnLeadershipLost,
} from 'nest-scheduler-lock/leader';
import { CHAOS_ELECTION } from '../journal.js';
import { AppJournal, describe } from './app-journal.js';

/**
 * Each app's part in the soak's election: it journals when its terms begin and end, so that the analysis can
 * tell whether two apps ever led at once, and how long a killed leader took to be replaced.
 */
@Injectable()
@LeaderElection(CHAOS_ELECTION.name, { lease: CHAOS_ELECTION.leaseMs })
export class ChaosLeader implements OnLeadershipAcquired, OnLeadershipLost {
  constructor(@Inject(AppJournal) private readonly journal: AppJournal) {}

  onLeadershipAcquired({ fencingToken }: LeaderLease): void {
    this.journal.write({ type: 'lead-start', fencingToken });
  }

  onLeadershipLost({ signal }: LeaderLease): void {
    const reason = signal.reason instanceof LeadershipEndedError ? signal.reason.reason : describe(signal.reason);
    this.journal.write({ type: 'lead-end', reason });
  }
}
