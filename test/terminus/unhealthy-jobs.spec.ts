import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { Test, type TestingModule } from '@nestjs/testing';
import { SchedulerLock, SchedulerLockModule } from '../../lib/index.js';
import { SchedulerLockHealthIndicator } from '../../lib/terminus/index.js';
import { SchedulerLockTest, TestLockProvider } from '../../lib/testing/index.js';
import { CapturedLogger } from '../support/captured-logger.js';

const T0 = Date.parse('2027-01-01T00:00:00Z');
const store = new TestLockProvider();
let app: TestingModule | undefined;

@Injectable()
class Jobs {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('*/2 * * * * *', { name: 'every-2s' })
  every2s() {}
}

afterEach(async () => {
  await app?.close();
  jest.useRealTimers();
  store.reset();
});

describe('the Terminus indicator with unhealthyJobs: down', () => {
  it('is down while a job missed occurrences, up again once it runs, and ignores them by default', async () => {
    jest.useFakeTimers({ now: T0 - 100 });
    app = await SchedulerLockTest.override(
      Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          TerminusModule,
          SchedulerLockModule.forRoot({
            redis: 'redis://none.invalid',
            defaultLockAtMostFor: '1m',
            health: { grace: 500 },
          }),
        ],
        providers: [Jobs, SchedulerLockHealthIndicator],
      }).setLogger(new CapturedLogger()),
      { store, node: 'node-1' },
    ).compile();
    const node = await SchedulerLockTest.node(app);
    const indicator = app.get(SchedulerLockHealthIndicator);
    const check = () => indicator.isHealthy('locks', { unhealthyJobs: 'down' });

    jest.setSystemTime(T0 + 10);
    await node.tick('every-2s');
    expect((await check()).locks).toMatchObject({ status: 'up', health: { status: 'up', unhealthy: {} } });

    jest.setSystemTime(T0 + 6_100);
    expect((await check()).locks).toMatchObject({ status: 'down', health: { unhealthy: { 'every-2s': 'missed' } } });
    expect((await indicator.isHealthy('locks')).locks.status).toBe('up');

    await node.tick('every-2s');
    expect((await check()).locks).toMatchObject({ status: 'up', health: { status: 'up' } });
  });
});
