import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { InvoiceExportService } from './jobs/invoice-export.service.js';
import { ReportService } from './jobs/report.service.js';
import { SessionCleanupService } from './jobs/session-cleanup.service.js';
import { LockPoolCloser, lockStore } from './lock-store.js';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    SchedulerLockModule.forRoot({
      ...lockStore,
      // How long a lock outlives an instance that died while running its job, unless the job says otherwise.
      defaultLockAtMostFor: '30s',
    }),
  ],
  providers: [ReportService, SessionCleanupService, InvoiceExportService, LockPoolCloser],
})
export class AppModule {}
