import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { InMemoryLockProvider, SchedulerLock, SchedulerLockConfigurationError } from '../../lib/index.js';
import { type LockProvider, type OccurrenceLockProvider } from '../../lib/provider/index.js';
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

  it('rejects retry on an interval job, and on a provider that cannot retry, naming the method', async () => {
    @Injectable()
    class IntervalWithRetry {
      @SchedulerLock({ retry: { retries: 2 } })
      @Interval(1_000)
      tick() {}
    }
    const error = await startupError([IntervalWithRetry]);
    expect(error.message).toMatch(/IntervalWithRetry\.tick: retry apply to cron jobs only/);

    const inMemory = new InMemoryLockProvider();
    const noRetries: OccurrenceLockProvider = {
      lock: (configuration) => inMemory.lock(configuration),
      lockOccurrence: (configuration, occurrence) => inMemory.lockOccurrence(configuration, occurrence),
    };
    @Injectable()
    class RetriedOnPlainProvider {
      @SchedulerLock({ retry: { retries: 2, backoff: '100ms' } })
      @Cron('* * * * * *')
      tick() {}
    }
    const missing = await startupError([RetriedOnPlainProvider], noRetries);
    expect(missing.message).toMatch(/RetriedOnPlainProvider\.tick: .*retryOccurrence\(\).*; remove retry$/);
  });

  it('rejects a bad module retry, naming the option', async () => {
    const started = startSchedulerApp({
      lock: { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '1m', retry: { retries: 'two' } as never },
      providers: [],
    });
    await expect(started).rejects.toThrow(/retry\.retries must be a whole number from 1 to \d+ \(got "two"\)/);
  });

  it.each([
    [{ onCrash: 'later' }, /onCrash must be 'skip' or 'rerun' \(got "later"\)/],
    [{ maxRecoveries: 0 }, /maxRecoveries must be a whole number of at least 1 \(got 0\)/],
    [{ catchUp: { window: 'soon' } }, /catchUp\.window: Invalid duration "soon"/],
    [{ onCrash: 'rerun', recoveryGrace: 'a while' }, /recoveryGrace: Invalid duration "a while"/],
    [{ retry: { retries: 0 } }, /BadOption\.tick: retry\.retries must be a whole number from 1 to \d+ \(got 0\)/],
    [{ retry: { backoff: '1s' } }, /retry\.retries is required/],
    [{ retry: { retries: 2, backoff: 'soon' } }, /retry\.backoff: Invalid duration "soon"/],
    [{ retry: { retries: 2, tries: 2 } }, /BadOption\.tick retry: .*"tries"/],
    [
      { retry: { retries: 2, backoff: '750ms' } },
      /retry\.backoff 750ms leaves no time for a retry: .*'\* \* \* \* \* \*'.*\(750ms\)/,
    ],
    [{ occurrence: false, retry: { retries: 2 } }, /retry needs once-per-occurrence locking/],
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
