import { jest } from '@jest/globals';
import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { Redis, type RedisOptions } from 'ioredis';
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
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import {
  closeSchedulerApps,
  startSchedulerApp,
  type SchedulerApp,
  type SchedulerAppSetup,
} from '../support/scheduler-app.js';
import { SHARED_REDIS_URL } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { lockKey, RunRecorder } from './support/run-recorder.js';

const JOB = 'TickJob.tick';

@Injectable()
class TickJob {
  constructor(private readonly recorder: RunRecorder) {}

  @SchedulerLock()
  @Interval(100)
  tick() {
    return this.recorder.record(JOB);
  }
}

/** Clients a test created itself, closed after it (the module must not have closed them). */
const ownClients: Redis[] = [];
const shared = useSharedRedisPrefix('module-options', async () => {
  await closeSchedulerApps();
  await Promise.all(ownClients.splice(0).map((client) => client.quit()));
});
let recorder: RunRecorder;
beforeEach(() => {
  recorder = new RunRecorder(shared.client, shared.prefix);
});

function startTickJob(
  lock: SchedulerAppSetup['lock'],
  imports: SchedulerAppSetup['imports'] = [],
): Promise<SchedulerApp> {
  return startSchedulerApp({ lock, imports, providers: [TickJob, { provide: RunRecorder, useValue: recorder }] });
}

/**
 * Waits for a locked run of {@link TickJob}, checks that its lock key existed in the shared Redis under
 * this test's prefix while it ran, and returns who took the lock.
 */
async function lockedRunInSharedRedis(app: SchedulerApp): Promise<string> {
  const acquired = await nextEvent(app.history$, jobEvent('acquired', JOB));
  await nextEvent(app.history$, jobEvent('released', JOB));
  const run = recorder.runsOf(JOB).find(({ lockName }) => lockName === JOB);
  expect(run?.heldLockKeys).toContain(lockKey(shared.prefix, JOB));
  return acquired.node;
}

/** A name to find this test's connections by in the shared Redis's CLIENT LIST. */
function connectionName(): string {
  return `${shared.prefix}-connection`;
}

async function isConnected(name: string): Promise<boolean> {
  const clients = (await shared.client.client('LIST')) as string;
  return clients.split('\n').some((line) => line.includes(` name=${name} `));
}

function sharedRedisUrl(query: Record<string, string>): string {
  const url = new URL(SHARED_REDIS_URL);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}

function sharedRedisOptions(extra: RedisOptions): RedisOptions {
  const { hostname, port } = new URL(SHARED_REDIS_URL);
  return { host: hostname, port: Number(port || 6379), ...extra };
}

describe('SchedulerLockModule.forRoot({ redis })', () => {
  it.each<[string, (name: string) => string | RedisOptions]>([
    ['a redis:// URL', (name) => sharedRedisUrl({ connectionName: name })],
    ['ioredis options', (name) => sharedRedisOptions({ connectionName: name })],
  ])(
    'given %s, locks in that Redis with a client of its own, which it closes on app.close()',
    async (_, redisOption) => {
      const name = connectionName();
      const app = await startTickJob({
        redis: redisOption(name),
        keyPrefix: shared.prefix,
        node: 'url-node',
        defaultLockAtMostFor: '5s',
      });

      expect(await lockedRunInSharedRedis(app)).toBe('url-node');
      expect(await isConnected(name)).toBe(true);

      await app.close();
      await waitUntil(async () => !(await isConnected(name)), `connection "${name}" is closed`, { timeoutMs: 5_000 });
    },
  );

  it('given a redis:// URL, runs a job that is due at startup instead of skipping it while its client connects', async () => {
    @Injectable()
    class StartupJob {
      @SchedulerLock()
      @Timeout(0)
      warmUp() {}
    }
    const app = await startSchedulerApp({
      lock: { redis: sharedRedisUrl({}), keyPrefix: shared.prefix, defaultLockAtMostFor: '5s' },
      providers: [StartupJob],
    });

    // The first outcome after the attempt: acquired, or skipped.
    await nextEvent(app.history$, (event) => event.jobName === 'StartupJob.warmUp' && event.type !== 'attempt');

    expect(app.recorded.filter(jobEvent('skipped', 'StartupJob.warmUp'))).toEqual([]);
    await nextEvent(app.history$, jobEvent('released', 'StartupJob.warmUp'));
    expect(app.logs.lines('error')).toEqual([]);
  });

  it('given an ioredis instance, locks through it and leaves it open on app.close()', async () => {
    const name = connectionName();
    const client = new Redis(SHARED_REDIS_URL, { connectionName: name });
    ownClients.push(client);
    await client.ping();
    const sent = jest.spyOn(client, 'sendCommand');

    const app = await startTickJob({
      redis: client,
      keyPrefix: shared.prefix,
      node: 'instance-node',
      defaultLockAtMostFor: '5s',
    });

    expect(await lockedRunInSharedRedis(app)).toBe('instance-node');
    const commandKeys = sent.mock.calls.flatMap(([command]) => command.args.map(String));
    expect(commandKeys).toContain(lockKey(shared.prefix, JOB));

    await app.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    expect(await isConnected(name)).toBe(true);
  });
});

describe('SchedulerLockModule.forRoot({ provider })', () => {
  it('locks with the given provider, without Redis', async () => {
    const provider = new InMemoryLockProvider();
    const held = await provider.lock({ name: JOB, lockAtMostFor: 10_000, lockAtLeastFor: 0 });

    const app = await startSchedulerApp({
      lock: { provider, defaultLockAtMostFor: '5s' },
      providers: [TickJob, { provide: RunRecorder, useValue: new RunRecorder(undefined, shared.prefix) }],
    });

    expect(app.get(SCHEDULER_LOCK_PROVIDER)).toBe(provider);
    // The lock taken from the provider above blocks the job: the module locks through that very provider.
    const skipped = await nextEvent(app.history$, jobEvent('skipped', JOB));
    expect(skipped.reason).toBe('locked');
    await held!.unlock();
    const acquired = await nextEvent(app.history$, jobEvent('acquired', JOB));
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
    const app = await startTickJob(
      lockModule({
        redis: shared.client,
        keyPrefix: shared.prefix,
        node: 'async-node',
        defaultLockAtMostFor: '5s',
      }),
    );

    expect(await lockedRunInSharedRedis(app)).toBe('async-node');
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
    const recording = { provide: RunRecorder, useValue: new RunRecorder(undefined, shared.prefix) };
    const app = await startSchedulerApp({ lock: lockModule(), providers: [TickJob, recording] });
    await nextEvent(app.history$, jobEvent('released', JOB));
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
