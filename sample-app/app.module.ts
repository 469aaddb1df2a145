import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { config } from './config.js';
import { InvoiceExportService } from './jobs/invoice-export.service.js';
import { ReportService } from './jobs/report.service.js';
import { SessionCleanupService } from './jobs/session-cleanup.service.js';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    SchedulerLockModule.forRoot({
      redis: config.redisUrl,
      keyPrefix: config.keyPrefix,
      node: config.instanceId,
      // How long a lock outlives an instance that died while running its job, unless the job says otherwise.
      defaultLockAtMostFor: '30s',
    }),
  ],
  providers: [ReportService, SessionCleanupService, InvoiceExportService],
})
export class AppModule {}
