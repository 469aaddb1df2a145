import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { SchedulerLock } from 'nest-scheduler-lock';
import { logTick } from './tick-line.js';

@Injectable()
export class ReportService {
  /**
   * Every instance's cron fires at the top of each second; the first to take the lock runs it, the
   * others skip. `lockAtLeastFor` keeps the lock half a second even though the run is instant, so an
   * instance whose tick comes a few milliseconds late still finds it held. The lock's name is
   * `ReportService.sendReport`, the same on every instance.
   */
  @Cron(CronExpression.EVERY_SECOND)
  @SchedulerLock({ lockAtLeastFor: '500ms' })
  sendReport(): void {
    logTick('report');
  }
}
