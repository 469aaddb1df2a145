import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { currentLock, InMemoryLockProvider, SchedulerLock, SchedulerLockConfigurationError } from '../../lib/index.js';
import { LockedJobStatus } from '../../lib/nest/locked-job.status.js';
import { type LockProvider } from '../../lib/provider/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerAppSetup } from '../support/scheduler-app.js';
import { HOUR_MS, hourStartWithRoom } from '../support/timing.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

@Injectable()
class EverySecond {
  runs = 0;
  @SchedulerLock({ name: 'every-second' })
  @Cron('* * * * * *')
  tick() {
    this.runs++;
  }
}

/** An hourly job: no regular tick comes during a test, so only a catch-up can run it. */
@Injectable()
class Hourly {
  readonly runs: { occurrence?: Date; catchUp: boolean }[] = [];
  @SchedulerLock({ name: 'hourly', catchUp: { window: '2h' } })
  @Cron('0 0 * * * *')
  tick() {
    const lock = currentLock()!;
    this.runs.push({ occurrence: lock.occurrence, catchUp: lock.catchUp });
  }
}

describe('once-per-occurrence cron jobs in an app', () => {
  const shared = useSharedRedisPrefix('occurrence-module', closeSchedulerApps);
  let provider: RedisLockProvider;

  beforeEach(() => {
    provider = new RedisLockProvider(shared.client, { keyPrefix: shared.prefix, node: 'operator' });
  });

  it('runs a tick under its occurrence and records it: getJobStatus shows occurrence, state and node', async () => {
    const app = await startSchedulerApp({
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '10s', node: 'node-a' },
      providers: [EverySecond],
    });
    await nextEvent(app.history$, jobEvent('released', 'EverySecond.tick'));
    const status = await app.get(LockedJobStatus).getJobStatus('EverySecond.tick');
    expect(status).toMatchObject({
      jobName: 'EverySecond.tick',
      lockName: 'every-second',
      state: 'succeeded',
      node: 'node-a',
      attempt: 1,
    });
    expect(status!.occurrence.getTime() % 1_000).toBe(0); // a nominal fire time, not when the timer fired
    expect(await app.get(LockedJobStatus).getJobStatus('no-such-job')).toBeUndefined();
  });

  it('skips a tick whose occurrence was already claimed, with reason already-ran, even though the lock is free', async () => {
    // Another node already claimed an occurrence an hour ahead: every earlier one counts as run.
    const claim = await provider.lockOccurrence(
      { name: 'every-second', lockAtMostFor: 1_000, lockAtLeastFor: 0 },
      Date.now() + HOUR_MS,
    );
    if ('lock' in claim) await claim.lock.finish!('succeeded');
    const app = await startSchedulerApp({
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '10s' },
      providers: [EverySecond],
    });

    const skipped = await nextEvent(app.history$, jobEvent('skipped', 'EverySecond.tick'));
    expect(skipped).toMatchObject({ reason: 'already-ran' });
    expect(app.get(EverySecond).runs).toBe(0);
  });

  it('catches up the latest missed occurrence once at start-up, cluster-wide, across two apps starting together', async () => {
    const lastHour = await hourStartWithRoom();
    // The job last ran the occurrence before: the cluster was down at lastHour.
    const before = await provider.lockOccurrence(
      { name: 'hourly', lockAtMostFor: 1_000, lockAtLeastFor: 0 },
      lastHour - HOUR_MS,
    );
    if ('lock' in before) await before.lock.finish!('succeeded');

    const setup: SchedulerAppSetup = {
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '10s' },
      providers: [Hourly],
    };
    const [first, second] = await Promise.all([startSchedulerApp(setup), startSchedulerApp(setup)]);
    await Promise.race([first, second].map((app) => nextEvent(app.history$, jobEvent('released', 'Hourly.tick'))));
    // The other app either claimed too and was skipped, or read the record after the catch-up ran and found
    // nothing to catch up, which no event announces: so the test waits a while for a second run that must not come.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const runs = [...first.get(Hourly).runs, ...second.get(Hourly).runs];
    expect(runs).toEqual([{ occurrence: new Date(lastHour), catchUp: true }]);
    expect(await first.get(LockedJobStatus).getJobStatus('Hourly.tick')).toMatchObject({
      occurrence: new Date(lastHour),
      state: 'succeeded',
    });
  });

  it('does not catch up a job that never ran (no record)', async () => {
    const app = await startSchedulerApp({
      lock: { redis: shared.client, keyPrefix: shared.prefix, defaultLockAtMostFor: '10s' },
      providers: [Hourly],
    });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.get(Hourly).runs).toEqual([]);
    expect(app.recorded.filter((event) => event.type === 'attempt')).toEqual([]);
  });
});

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
