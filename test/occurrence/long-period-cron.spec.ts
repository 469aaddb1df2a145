import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SchedulerLock } from '../../lib/index.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

@Injectable()
class NewYearJob {
  @SchedulerLock({ lockAtMostFor: '1h' })
  @Cron('0 0 0 1 1 *')
  greet(): void {}
}

@Injectable()
class HalfYearJob {
  @SchedulerLock({ lockAtMostFor: '1h' })
  @Cron('0 0 3 1 1,7 *')
  closeBooks(): void {}
}

/**
 * Once-per-occurrence locking is on by default for every locked `@Cron` job, whatever its period.
 * `@nestjs/schedule` (cron) schedules yearly and half-yearly expressions without complaint.
 */
describe('a locked cron job with a period of months', () => {
  const shared = useSharedRedisPrefix('long-period', closeSchedulerApps);

  it.each([
    ['yearly', NewYearJob, 'NewYearJob.greet'],
    ['half-yearly', HalfYearJob, 'HalfYearJob.closeBooks'],
  ])('starts and schedules a %s job', async (_, job, jobName) => {
    const app = await startSchedulerApp({
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '1m' },
      providers: [job],
    });

    expect(app.registry.getCronJob(jobName).isActive).toBe(true);
  });
});
