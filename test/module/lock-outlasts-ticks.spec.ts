import { jest } from '@jest/globals';
import { Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { Cron, Interval, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { InMemoryLockProvider, LockedJobRegistry, SchedulerLock } from '../../lib/index.js';
import { runClockUntil } from '../support/fake-clock.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';

// The startup check and the module's ticks are the subject, not a store: the in-memory one, on fake time.
afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
});

function startJobs(...providers: Type[]): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '1m' },
    providers,
  });
}

function warnings(app: SchedulerApp): string[] {
  return app.logs.texts('warn', 'SchedulerLock');
}

describe('a lockAtLeastFor at or above the period of a job: a startup warning with both values and the effect', () => {
  it("for a cron job (the README's '30s' on a 2 s cron)", async () => {
    @Injectable()
    class ReportJob {
      @Cron('*/2 * * * * *')
      @SchedulerLock({ lockAtMostFor: '1m', lockAtLeastFor: '30s' })
      send() {}
    }
    const app = await startJobs(ReportJob);

    expect(warnings(app)).toEqual([
      `Job "ReportJob.send": lockAtLeastFor 30s is not shorter than the shortest gap between its fire times (2s, ` +
        `'*/2 * * * * *'), so each run holds the lock past the next tick: the job runs at most once per 30s ` +
        'cluster-wide, and the ticks in between are skipped',
    ]);
  });

  it('for a cron job that is not once per occurrence, and for a lockAtLeastFor equal to the gap', async () => {
    @Injectable()
    class SyncJob {
      @Cron('0 */5 * * * *', { name: 'sync' })
      @SchedulerLock({ occurrence: false, lockAtLeastFor: '5m', lockAtMostFor: '10m' })
      sync() {}
    }
    const app = await startJobs(SyncJob);

    expect(warnings(app)).toEqual([
      `Job "sync": lockAtLeastFor 5m is not shorter than the shortest gap between its fire times ` +
        `(5m, '0 */5 * * * *'), so each run holds the lock past the next tick: the job runs at most once per 5m ` +
        'cluster-wide, and the ticks in between are skipped',
    ]);
  });

  it('for an interval job, whose next tick is then skipped as locked', async () => {
    @Injectable()
    class PollJob {
      @Interval(100)
      @SchedulerLock({ lockAtLeastFor: '500ms' })
      poll() {}
    }
    jest.useFakeTimers();
    const app = await startJobs(PollJob);
    await runClockUntil(nextEvent(app.history$, jobEvent('released', 'PollJob.poll')));
    const next = await runClockUntil(nextEvent(app.events$, jobEvent('skipped', 'PollJob.poll')));

    expect(warnings(app)).toEqual([
      'Job "PollJob.poll": lockAtLeastFor 500ms is not shorter than its interval (100ms), so each run holds the lock ' +
        'past the next tick: the job runs at most once per 500ms cluster-wide, and the ticks in between are skipped',
    ]);
    expect(next.reason).toBe('locked');
  });

  it('for an interval job added at runtime', async () => {
    @Injectable()
    class RuntimeJobs implements OnModuleInit {
      constructor(
        private readonly registry: SchedulerRegistry,
        private readonly lockedJobs: LockedJobRegistry,
      ) {}

      onModuleInit() {
        this.lockedJobs.declare('tenant-sync', { lockAtLeastFor: '1m' });
        this.registry.addInterval(
          'tenant-sync',
          setInterval(() => undefined, 30_000),
        );
      }
    }
    const app = await startJobs(RuntimeJobs);

    expect(warnings(app)).toEqual([
      'Job "tenant-sync": lockAtLeastFor 1m is not shorter than its interval (30s), so each run holds the lock past ' +
        'the next tick: the job runs at most once per 1m cluster-wide, and the ticks in between are skipped',
    ]);
  });

  it('and not for a lockAtLeastFor below the shortest gap, nor for a timeout job', async () => {
    @Injectable()
    class FineJobs {
      @Cron('*/2 * * * * *')
      @SchedulerLock({ lockAtLeastFor: '1500ms' })
      report() {}

      @Interval(1_000)
      @SchedulerLock({ lockAtLeastFor: '999ms' })
      poll() {}

      @Timeout(1_000)
      @SchedulerLock({ lockAtLeastFor: '1m' })
      warmUp() {}
    }
    const app = await startJobs(FineJobs);

    expect(warnings(app)).toEqual([]);
    expect(app.logs.texts('log', 'SchedulerLock')).toHaveLength(3);
  });
});
