import { jest } from '@jest/globals';
import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import {
  InMemoryLockProvider,
  LockingTaskExecutor,
  SCHEDULER_LOCK_PROVIDER,
  SchedulerLock,
  SchedulerLockModule,
  type SchedulerLockModuleAsyncOptions,
  type SchedulerLockModuleOptions,
  type SchedulerLockOptionsFactory,
} from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { runClockUntil } from '../support/fake-clock.js';
import { RunRecorder } from './support/run-recorder.js';

const JOB = 'TickJob.tick';

// On fake time, the job's interval too: the module's options are the subject, on the in-memory store.
beforeEach(() => jest.useFakeTimers());
afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
});

@Injectable()
class TickJob {
  constructor(private readonly recorder: RunRecorder) {}

  @SchedulerLock()
  @Interval(100)
  tick() {
    return this.recorder.record(JOB);
  }
}

describe('SchedulerLockModule.forRoot({ provider })', () => {
  it('locks with the given provider, without Redis', async () => {
    const provider = new InMemoryLockProvider();
    const held = await provider.lock({ name: JOB, lockAtMostFor: 10_000, lockAtLeastFor: 0 });

    const app = await startSchedulerApp({
      lock: { provider, defaultLockAtMostFor: '5s' },
      providers: [TickJob, { provide: RunRecorder, useValue: new RunRecorder() }],
    });

    expect(app.get(SCHEDULER_LOCK_PROVIDER)).toBe(provider);
    // The lock taken from the provider above blocks the job: the module locks through that very provider.
    const skipped = await runClockUntil(nextEvent(app.history$, jobEvent('skipped', JOB)));
    expect(skipped.reason).toBe('locked');
    await held!.unlock();
    const acquired = await runClockUntil(nextEvent(app.history$, jobEvent('acquired', JOB)));
    expect(acquired.lockName).toBe(JOB);
  });
});

/** Stands in for an app's configuration service (e.g. `@nestjs/config`). */
class LockConfig {
  constructor(readonly options: SchedulerLockModuleOptions) {}
}
const LOCK_CONFIG = 'LOCK_CONFIG';

@Module({})
class LockConfigModule {
  static with(options: SchedulerLockModuleOptions): DynamicModule {
    return {
      module: LockConfigModule,
      providers: [{ provide: LOCK_CONFIG, useValue: new LockConfig(options) }],
      exports: [LOCK_CONFIG],
    };
  }
}

@Injectable()
class LockOptionsFactory implements SchedulerLockOptionsFactory {
  constructor(@Inject(LOCK_CONFIG) private readonly config: LockConfig) {}

  createSchedulerLockOptions(): SchedulerLockModuleOptions {
    return this.config.options;
  }
}

@Module({})
class LockOptionsFactoryModule {
  static with(options: SchedulerLockModuleOptions): DynamicModule {
    return {
      module: LockOptionsFactoryModule,
      imports: [LockConfigModule.with(options)],
      providers: [LockOptionsFactory],
      exports: [LockOptionsFactory],
    };
  }
}

describe('SchedulerLockModule.forRootAsync()', () => {
  it.each<[string, (options: SchedulerLockModuleOptions) => DynamicModule]>([
    [
      'useFactory + inject',
      (options) =>
        SchedulerLockModule.forRootAsync({
          imports: [LockConfigModule.with(options)],
          inject: [LOCK_CONFIG],
          useFactory: (config: LockConfig) => config.options,
        }),
    ],
    [
      'useClass',
      (options) =>
        SchedulerLockModule.forRootAsync({ imports: [LockConfigModule.with(options)], useClass: LockOptionsFactory }),
    ],
    [
      'useExisting',
      (options) =>
        SchedulerLockModule.forRootAsync({
          imports: [LockOptionsFactoryModule.with(options)],
          useExisting: LockOptionsFactory,
        }),
    ],
  ])('takes its options from %s', async (_, lockModule) => {
    const store = new TestLockProvider();
    const provider = store.provider('async-node');
    const recorder = new RunRecorder((name) => isLocked(store.provider('probe'), name));
    const app = await startSchedulerApp({
      lock: lockModule({ provider, defaultLockAtMostFor: '5s' }),
      providers: [TickJob, { provide: RunRecorder, useValue: recorder }],
    });

    const acquired = await runClockUntil(nextEvent(app.history$, jobEvent('acquired', JOB)));
    await runClockUntil(nextEvent(app.history$, jobEvent('released', JOB)));
    expect(app.get(SCHEDULER_LOCK_PROVIDER)).toBe(provider);
    expect(acquired.node).toBe('async-node');
    expect(recorder.runsOf(JOB)[0]).toEqual({ job: JOB, lockName: JOB, lockHeld: true });
  });
});

describe('isGlobal', () => {
  @Injectable()
  class BillingService {
    constructor(readonly executor: LockingTaskExecutor) {}
  }
  /** A feature module that does not import SchedulerLockModule. */
  @Module({ providers: [BillingService] })
  class BillingModule {}

  const options = (): SchedulerLockModuleOptions => ({
    provider: new InMemoryLockProvider(),
    defaultLockAtMostFor: '5s',
  });

  it.each<[string, () => DynamicModule]>([
    ['forRoot()', () => SchedulerLockModule.forRoot(options())],
    ['forRootAsync()', () => SchedulerLockModule.forRootAsync({ useFactory: options })],
  ])('is true by default: %s lets a module that does not import it inject its providers', async (_, lockModule) => {
    const app = await startSchedulerApp({ lock: lockModule(), imports: [BillingModule] });

    expect(app.get(BillingService).executor).toBe(app.get(LockingTaskExecutor));
  });

  it.each<[string, () => DynamicModule]>([
    ['forRoot()', () => SchedulerLockModule.forRoot({ ...options(), isGlobal: false })],
    [
      'forRootAsync()',
      () => {
        const asyncOptions: SchedulerLockModuleAsyncOptions = { useFactory: options, isGlobal: false };
        return SchedulerLockModule.forRootAsync(asyncOptions);
      },
    ],
  ])('false: %s is visible only to the module that imports it', async (_, lockModule) => {
    expect(lockModule().global).toBe(false);
    await expect(startSchedulerApp({ lock: lockModule(), imports: [BillingModule] })).rejects.toThrow(
      /BillingService[\s\S]*LockingTaskExecutor[\s\S]*BillingModule/,
    );
    // The importing module itself still gets them, and its jobs are locked.
    const recording = { provide: RunRecorder, useValue: new RunRecorder() };
    const app = await startSchedulerApp({ lock: lockModule(), providers: [TickJob, recording] });
    await runClockUntil(nextEvent(app.history$, jobEvent('released', JOB)));
  });
});

describe('startup log', () => {
  it('logs one line per locked job, with its job name, lock name and durations', async () => {
    @Injectable()
    class StartupLogJobs {
      @SchedulerLock()
      @Cron('0 0 3 * * *', { name: 'nightly-report' })
      report() {}

      @SchedulerLock({ name: 'cache-lock', lockAtMostFor: '1m30s', lockAtLeastFor: '5s' })
      @Interval(60_000)
      refreshCache() {}

      @SchedulerLock({ lockAtMostFor: 'PT2M' })
      @Timeout('warm-up', 60_000)
      warmUp() {}

      @Interval(60_000)
      unlocked() {}
    }
    const app = await startSchedulerApp({
      lock: { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '30s' },
      providers: [StartupLogJobs],
    });

    const lines = app.logs.texts('log', 'SchedulerLock');
    expect(lines).toHaveLength(3);
    const lineOf = (job: string) => lines.find((line) => line.includes(`"${job}"`)) ?? `no line names "${job}"`;
    expect(lineOf('nightly-report')).toEqual(
      expect.stringMatching(/cron.*"nightly-report".*lock "nightly-report".*lockAtMostFor 30s.*lockAtLeastFor 0ms/),
    );
    expect(lineOf('StartupLogJobs.refreshCache')).toEqual(
      expect.stringMatching(
        /interval.*"StartupLogJobs.refreshCache".*lock "cache-lock".*lockAtMostFor 1m30s.*lockAtLeastFor 5s/,
      ),
    );
    expect(lineOf('warm-up')).toEqual(
      expect.stringMatching(
        /timeout.*"warm-up".*StartupLogJobs\.warmUp.*lock "warm-up".*lockAtMostFor 2m.*lockAtLeastFor 0ms/,
      ),
    );
  });
});
