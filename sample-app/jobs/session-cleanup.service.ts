import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SchedulerLock } from 'nest-scheduler-lock';
import { logTick } from './tick-line.js';

@Injectable()
export class SessionCleanupService {
  /**
   * An interval starts when its instance starts, so the instances' timers fire at different moments.
   * Without `lockAtLeastFor` the cluster would run the job once per timer, several times per 2 s;
   * holding the lock 1.5 s after each run keeps the cluster's runs at least that far apart.
   */
  @Interval('session-cleanup', 2_000)
  @SchedulerLock({ lockAtLeastFor: '1500ms' })
  purgeExpiredSessions(): void {
    logTick('session-cleanup');
  }
}
