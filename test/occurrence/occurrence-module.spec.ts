import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { InMemoryLockProvider, SchedulerLock, SchedulerLockConfigurationError } from '../../lib/index.js';
import { type LockProvider } from '../../lib/provider/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

describe('once-per-occurrence configuration errors at startup', () => {
  afterEach(() => closeSchedulerApps());

  async function startupError(
    providers: unknown[],
    provider: LockProvider = new InMemoryLockProvider(),
  ): Promise<SchedulerLockConfigurationError> {
    const started = startSchedulerApp({
      lock: { provider, defaultLockAtMostFor: '1m' },
      providers: providers as never[],
    });
    await expect(started).rejects.toBeInstanceOf(SchedulerLockConfigurationError);
    return started.catch((error: SchedulerLockConfigurationError) => error) as Promise<SchedulerLockConfigurationError>;
  }

  it('rejects a maxClockSkew the cron period cannot support, naming job, value and gap', async () => {
    @Injectable()
    class TooSkewed {
      @SchedulerLock({ maxClockSkew: '6s' })
      @Cron('*/10 * * * * *')
      tick() {}
    }
    const error = await startupError([TooSkewed]);
    expect(error.message).toContain('TooSkewed.tick');
    expect(error.message).toContain('maxClockSkew 6s');
    expect(error.message).toContain('10s');
  });

  it('rejects occurrence options on an interval job', async () => {
    @Injectable()
    class IntervalWithCatchUp {
      @SchedulerLock({ catchUp: true, onCrash: 'rerun' })
      @Interval(1_000)
      tick() {}
    }
    const error = await startupError([IntervalWithCatchUp]);
    expect(error.message).toMatch(/IntervalWithCatchUp\.tick: onCrash, catchUp apply to cron jobs only/);
  });

  it('rejects a provider that cannot claim occurrences unless the job opts out', async () => {
    const plain: LockProvider = { lock: (configuration) => new InMemoryLockProvider().lock(configuration) };
    @Injectable()
    class CronOnPlainProvider {
      @SchedulerLock()
      @Cron('* * * * * *')
      tick() {}
    }
    const error = await startupError([CronOnPlainProvider], plain);
    expect(error.message).toMatch(/CronOnPlainProvider\.tick: .*lockOccurrence\(\).*set occurrence: false/);
  });

  it.each([
    [{ onCrash: 'later' }, /onCrash must be 'skip' or 'rerun' \(got "later"\)/],
    [{ maxRecoveries: 0 }, /maxRecoveries must be a whole number of at least 1 \(got 0\)/],
    [{ catchUp: { window: 'soon' } }, /catchUp\.window: Invalid duration "soon"/],
    [{ onCrash: 'rerun', recoveryGrace: 'a while' }, /recoveryGrace: Invalid duration "a while"/],
  ])('rejects %p', async (options, message) => {
    @Injectable()
    class BadOption {
      @SchedulerLock(options as never)
      @Cron('* * * * * *')
      tick() {}
    }
    expect((await startupError([BadOption])).message).toMatch(message);
  });
});
