import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { SchedulerLock } from 'nest-scheduler-lock';
import { logTick } from './tick-line.js';

@Injectable()
export class ReportService {
  /**
   * Every instance's cron fires at the top of each second; the first to take the lock runs it, the
   * others skip. Each tick claims its occurrence (the second it belongs to), so an instance whose tick
   * comes late, after the run already released the lock, finds that second already run and skips it
   * too: no `lockAtLeastFor` needed. The lock's name is `ReportService.sendReport`, the same on every
   * instance.
   */
  @Cron(CronExpression.EVERY_SECOND)
  @SchedulerLock()
  sendReport(): void {
    logTick('report');
  }
}
