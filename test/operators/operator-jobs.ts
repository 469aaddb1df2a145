import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { currentLock, SchedulerLock } from '../../lib/index.js';
import { deferred } from '../support/wait-until.js';

/** The operator specs' jobs, every `everyMs`: `report`, `failing` (throws), and `leap-day`, run only by a trigger. */
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

    /**
     * At midnight on 29 February: only a trigger runs it during a test. (An hourly job ran by itself in a CI run
     * that crossed 09:00, and the test that found it never run failed.)
     */
    @SchedulerLock()
    @Cron('0 0 0 29 2 *', { name: 'leap-day' })
    leapDay() {}
  }
  return Jobs;
}

/** One run that goes on until its lock is lost, with a renewing lease. */
@Injectable()
export class LongRun {
  readonly started = deferred();
  readonly lost = deferred<unknown>();

  @SchedulerLock({ keepAlive: { lease: '3s' }, lockAtMostFor: '1m' })
  @Timeout('long-run', 10)
  async run() {
    const { signal } = currentLock()!;
    this.started.resolve();
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    this.lost.resolve(signal.reason);
  }
}
