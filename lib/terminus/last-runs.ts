import type { Subscription } from 'rxjs';
import type { LockEvents } from '../core/task/lock-events.js';

/** How a job's last run on this node ended. */
export interface LastRun {
  readonly outcome: 'succeeded' | 'failed';
  /** When it ended. */
  readonly at: Date;
}

/**
 * The last run of each job on this node, from its `finished` events. Listening makes the executor build
 * its events (it builds none while nobody listens), a few objects per run.
 */
export class LastRuns {
  private readonly byJob = new Map<string, LastRun>();
  private readonly subscription: Subscription;

  constructor(events: LockEvents) {
    this.subscription = events.events$.subscribe((event) => {
      if (event.type !== 'finished' || event.jobName === null) return;
      this.byJob.set(event.jobName, { outcome: event.outcome, at: event.at });
    });
  }

  of(jobName: string): LastRun | undefined {
    return this.byJob.get(jobName);
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
