import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const MONTHLY = '0 0 0 1 * *'; // no regular tick comes during a test
const CATCH_UP = { window: '40d' } as const; // always covers the latest monthly fire time

/** Its catch-up run shows when the app's catch-ups have been attempted. */
@Injectable()
class EnabledReport {
  runs = 0;
  @SchedulerLock({ name: 'enabled-report', catchUp: CATCH_UP })
  @Cron(MONTHLY, { name: 'enabled-report' })
  run(): void {
    this.runs++;
  }
}

/** Switched off with `@nestjs/schedule`'s `disabled` option: it must not run at all. */
@Injectable()
class DisabledReport {
  runs = 0;
  @SchedulerLock({ name: 'disabled-report', catchUp: CATCH_UP })
  @Cron(MONTHLY, { name: 'disabled-report', disabled: true })
  run(): void {
    this.runs++;
  }
}

/**
 * `catchUp` runs the latest fire time no node ran, at start-up. A job registered but not started (the
 * `disabled` option of `@Cron`, or a runtime job added and not started) has no fire times to miss.
 */
describe('catchUp of a cron job that is registered but not started', () => {
  const shared = useSharedRedisPrefix('catch-up-disabled', closeSchedulerApps);

  beforeEach(async () => {
    // Both jobs ran once long ago: every later fire time counts as missed.
    const provider = new RedisLockProvider(shared.client, { keyPrefix: shared.prefix, node: 'previous-deploy' });
    for (const name of ['enabled-report', 'disabled-report']) {
      const claim = await provider.lockOccurrence(
        { name, lockAtMostFor: 1_000, lockAtLeastFor: 0 },
        new Date('2000-01-01T00:00:00Z'),
      );
      if ('lock' in claim) await claim.lock.finish!('succeeded');
    }
  });

  it('does not run the catch-up of a disabled job', async () => {
    const app = await startSchedulerApp({
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '1m' },
      providers: [EnabledReport, DisabledReport],
    });
    // Both catch-ups start on the same tick and read their records on the same connection; by the time
    // the enabled job's catch-up has been released, the disabled one's attempt, if any, was emitted.
    await nextEvent(app.history$, jobEvent('released', 'enabled-report'));

    expect(app.get(EnabledReport).runs).toBe(1);
    expect(app.registry.getCronJob('disabled-report').isActive).toBe(false);
    expect(app.recorded.filter((event) => event.jobName === 'disabled-report').map((event) => event.type)).toEqual([]);
    expect(app.get(DisabledReport).runs).toBe(0);
  });
});
