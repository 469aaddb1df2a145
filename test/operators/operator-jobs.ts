import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { currentLock, SchedulerLock } from '../../lib/index.js';
import { deferred } from '../support/wait-until.js';

/** The operator specs' jobs, every `everyMs`: `report`, `failing` (throws), and `hourly`, run only by a trigger. */
export function operatorJobs(everyMs: number) {
  @Injectable()
  class Jobs {
    @SchedulerLock()
    @Interval('report', everyMs)
    report() {}

    @SchedulerLock()
    @Interval('failing', everyMs)
    failing() {
      throw new Error('boom: the ledger is locked');
    }

    /** Hourly: only a trigger runs it during a test. */
    @SchedulerLock()
    @Cron('0 0 * * * *', { name: 'hourly' })
    hourly() {}
  }
  return Jobs;
}

/** One run that goes on until its lock is lost, with a renewing lease. */
@Injectable()
export class LongRun {
  readonly started = deferred();
  readonly lost = deferred<unknown>();

  @SchedulerLock({ keepAlive: { lease: '300ms' }, lockAtMostFor: '1m' })
  @Timeout('long-run', 10)
  async run() {
    const { signal } = currentLock()!;
    this.started.resolve();
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    this.lost.resolve(signal.reason);
  }
}
