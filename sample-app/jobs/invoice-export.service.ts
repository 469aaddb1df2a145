import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SchedulerLock } from 'nest-scheduler-lock';
import { logTick } from './tick-line.js';

@Injectable()
export class InvoiceExportService {
  /**
   * Fires every 2 s but takes 3 s: a tick that comes while a run is still going finds the lock held
   * and is skipped on every instance, the running one included, so runs never overlap. If the
   * instance running it dies, the lock frees itself after `lockAtMostFor`.
   */
  @Cron('*/2 * * * * *', { name: 'invoice-export' })
  @SchedulerLock({ lockAtMostFor: '10s' })
  async exportInvoices(): Promise<void> {
    logTick('invoice-export');
    await sleep(3_000);
  }
}
