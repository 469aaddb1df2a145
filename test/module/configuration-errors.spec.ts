import { Injectable, type Type } from '@nestjs/common';
import { Interval, Timeout } from '@nestjs/schedule';
import {
  InMemoryLockProvider,
  LockedJobRegistry,
  SchedulerLock,
  SchedulerLockConfigurationError,
  SchedulerLockModule,
  type SchedulerLockModuleOptions,
  type SchedulerLockOptions,
} from '../../lib/index.js';
import { createSchedulerLockSettings } from '../../lib/nest/scheduler-lock.settings.js';
import { closeSchedulerApps, startSchedulerApp, startupError } from '../support/scheduler-app.js';

afterEach(closeSchedulerApps);

/** Module options that work, for cases about a job. */
const VALID_OPTIONS: SchedulerLockModuleOptions = { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '1m' };

/** Why an app with `options` (default: valid ones) and `jobs` does not start. */
function configurationError(setup: { options?: SchedulerLockModuleOptions; jobs?: Type[] }): Promise<Error> {
  return startupError({ lock: setup.options ?? VALID_OPTIONS, providers: setup.jobs ?? [] });
}

/** A provider with one `@Interval` job locked with `options`, as `BadJob.run`. */
function jobLockedWith(options: SchedulerLockOptions): Type {
  @Injectable()
  class BadJob {
    @SchedulerLock(options)
    @Interval(60_000)
    run() {}
  }
  return BadJob;
}

describe('startup fails with a SchedulerLockConfigurationError naming the job and the value', () => {
  it.each<[string, SchedulerLockOptions, RegExp[]]>([
    ['an unparsable duration', { lockAtMostFor: 'ten minutes' as never }, [/lockAtMostFor/, /"ten minutes"/]],
    ['a negative duration', { lockAtLeastFor: '-5s' }, [/lockAtLeastFor/, /"-5s"/, /negative/]],
    ['a negative number of milliseconds', { lockAtMostFor: -1000 }, [/lockAtMostFor/, /-1000/, /negative/]],
    ['a zero lockAtMostFor', { lockAtMostFor: 0 }, [/lockAtMostFor/, /greater than 0/, /got 0/]],
    [
      'lockAtLeastFor > lockAtMostFor',
      { lockAtMostFor: '1s', lockAtLeastFor: '2s' },
      [/lockAtLeastFor \(2000 ms\)/, /lockAtMostFor \(1000 ms\)/],
    ],
    [
      'lockAtLeastFor > the default lockAtMostFor',
      { lockAtLeastFor: '2m' },
      [/lockAtLeastFor \(120000 ms\)/, /lockAtMostFor \(60000 ms\)/],
    ],
    ['an empty name', { name: '' }, [/name/, /""/]],
    ['a blank name', { name: '  ' }, [/name/, /" {2}"/]],
    ['an unparsable keepAlive lease', { keepAlive: { lease: 'a while' as never } }, [/keepAlive.lease/, /"a while"/]],
    ['a zero keepAlive lease', { keepAlive: { lease: 0 } }, [/keepAlive.lease/, /greater than 0/]],
  ])('for %s on a job', async (_, options, expected) => {
    const { message } = await configurationError({ jobs: [jobLockedWith(options)] });

    expect(message).toContain('BadJob.run');
    for (const pattern of expected) expect(message).toMatch(pattern);
  });

  it.each<[string, Partial<SchedulerLockModuleOptions>, RegExp[]]>([
    [
      'an unparsable defaultLockAtMostFor',
      { defaultLockAtMostFor: 'forever' as never },
      [/defaultLockAtMostFor: .*"forever"/],
    ],
    ['a negative defaultLockAtLeastFor', { defaultLockAtLeastFor: -1 }, [/defaultLockAtLeastFor/, /-1/, /negative/]],
    [
      'defaultLockAtLeastFor > defaultLockAtMostFor',
      { defaultLockAtMostFor: '10s', defaultLockAtLeastFor: '1m' },
      [/defaultLockAtLeastFor \(60000 ms\)/, /defaultLockAtMostFor \(10000 ms\)/],
    ],
    ['a missing defaultLockAtMostFor', { defaultLockAtMostFor: undefined }, [/defaultLockAtMostFor/, /required/]],
    ['both redis and provider', { redis: 'redis://127.0.0.1:1' }, [/"redis"/, /"provider"/, /both/]],
    ['neither redis nor provider', { provider: undefined }, [/"redis"/, /"provider"/, /neither/]],
    ['a keepAlive that is not true, false or { lease }', { keepAlive: 'yes' as never }, [/keepAlive/, /"yes"/]],
    ['an unparsable shutdownTimeout', { shutdownTimeout: 'later' as never }, [/shutdownTimeout/, /"later"/]],
    ['an unparsable acquireTimeout', { acquireTimeout: '2 seconds' as never }, [/acquireTimeout/, /"2 seconds"/]],
    ['a zero acquireTimeout', { acquireTimeout: 0 }, [/acquireTimeout must be greater than 0 \(got 0\)/]],
    [
      'a minReplicasToAck of 0',
      { minReplicasToAck: 0 },
      [/minReplicasToAck must be a whole number from 1 to 2147483647 \(got 0\)/],
    ],
    ['minReplicasToAck with a provider', { minReplicasToAck: 1 }, [/minReplicasToAck goes with "redis"/]],
    ['keyPrefix with a provider', { keyPrefix: 'app' }, [/keyPrefix goes with "redis" \(got "app"\)/]],
    ['historyLimit with a provider', { historyLimit: 10 }, [/historyLimit goes with "redis" \(got 10\)/]],
    ['replicaAckTimeout without minReplicasToAck', { replicaAckTimeout: '100ms' }, [/needs minReplicasToAck/]],
    [
      'a replicaAckTimeout not shorter than acquireTimeout',
      { provider: undefined, redis: 'redis://127.0.0.1:1', minReplicasToAck: 1, replicaAckTimeout: '2s' },
      [/replicaAckTimeout 2s must be shorter than acquireTimeout 2s/],
    ],
    [
      'an instrumentation without around()',
      { instrumentation: {} as never },
      [/instrumentation must have an around\(run, task\) method/],
    ],
    [
      'a logSkips that is not a boolean',
      { logSkips: 'yes' as never },
      [/logSkips must be true or false \(got "yes"\)/],
    ],
    ['a logSkips of 1', { logSkips: 1 as never }, [/logSkips must be true or false \(got 1\)/]],
    [
      'an unknown startupCheck',
      { startupCheck: 'off' as never },
      [/startupCheck must be 'fail' or 'warn' \(got "off"\)/],
    ],
    [
      'a startupCheck of false',
      { startupCheck: false as never },
      [/startupCheck must be 'fail' or 'warn' \(got false\)/],
    ],
    ['an empty keyPrefix', { keyPrefix: '' }, [/keyPrefix must be a non-empty string \(got ""\)/]],
    ['a node that is not a string', { node: 42 as never }, [/node must be a non-empty string \(got 42\)/]],
    [
      'an option in the wrong case',
      { keepalive: true } as never,
      [/unknown option "keepalive"; did you mean "keepAlive"/],
    ],
    [
      'a truncated option',
      { defaultLockAtMost: '1m' } as never,
      [/unknown option "defaultLockAtMost"; did you mean "defaultLockAtMostFor"\?/],
    ],
    [
      'an option with two letters swapped',
      { histroyLimit: 10 } as never,
      [/unknown option "histroyLimit"; did you mean "historyLimit"\?/],
    ],
    [
      'a health option with a typo',
      { health: { grase: '1s' } } as never,
      [/SchedulerLockModule options health: unknown option "grase"; did you mean "grace"\?/],
    ],
    [
      'a health failingAfter of 0',
      { health: { failingAfter: 0 } },
      [/SchedulerLockModule options health: failingAfter must be a whole number from 1 .* \(got 0\)/],
    ],
    ['a negative health grace', { health: { grace: -1 } }, [/SchedulerLockModule options health: .*grace/]],
    [
      'a fractional health pauseAfter',
      { health: { pauseAfter: 1.5 } },
      [/SchedulerLockModule options health: pauseAfter must be a whole number from 1 .* \(got 1.5\)/],
    ],
    [
      'a fractional historyLimit',
      { historyLimit: 2.5 },
      [/historyLimit must be a whole number from 1 to 2147483647 \(got 2.5\)/],
    ],
    [
      'a historyLimit past 2^31-1',
      { historyLimit: 1e12 },
      [/historyLimit must be a whole number .* \(got 1000000000000\)/],
    ],
    ['a historyLimit of NaN', { historyLimit: NaN }, [/historyLimit must be a whole number .* \(got NaN\)/]],
    // Node.js fires a timer longer than 2^31-1 ms after 1 ms: a heartbeat every millisecond.
    [
      'a heartbeatInterval past the longest timer',
      { heartbeatInterval: 1e12 },
      [/heartbeatInterval must be at most 24d20h31m23s647ms \(got 1000000000000\)/],
    ],
    [
      'an acquireTimeout past the longest timer',
      { acquireTimeout: '30d' },
      [/acquireTimeout must be at most .* \(got "30d"\)/],
    ],
    [
      'a shutdownTimeout past the longest timer',
      { shutdownTimeout: 'P25D' },
      [/shutdownTimeout must be at most .* \(got "P25D"\)/],
    ],
    [
      'a keepAlive lease past the longest timer',
      { keepAlive: { lease: '25d' } },
      [/keepAlive.lease must be at most .* \(got "25d"\)/],
    ],
  ])('for %s in the module options', async (_, override, expected) => {
    const { message } = await configurationError({
      options: { ...VALID_OPTIONS, ...override } as SchedulerLockModuleOptions,
    });

    expect(message).toContain('SchedulerLockModule options');
    for (const pattern of expected) expect(message).toMatch(pattern);
  });

  it.each<[string, Partial<SchedulerLockModuleOptions>, string]>([
    [
      'redis',
      { redis: undefined },
      'set exactly one of "redis" and "provider" (got neither); "redis" was given as undefined (an unset environment variable?)',
    ],
    [
      'provider',
      { provider: undefined },
      'set exactly one of "redis" and "provider" (got neither); "provider" was given as undefined (an unset environment variable?)',
    ],
    [
      'defaultLockAtMostFor',
      { redis: 'redis://127.0.0.1:1', defaultLockAtMostFor: undefined },
      'defaultLockAtMostFor is required (for example \'10m\'); "defaultLockAtMostFor" was given as undefined (an unset environment variable?)',
    ],
  ])(
    'for %s given as undefined (process.env.REDIS_URL unset): says so and names the option',
    async (_, options, problem) => {
      const { message } = await configurationError({
        options: { defaultLockAtMostFor: '1m', ...options } as SchedulerLockModuleOptions,
      });

      expect(message).toBe(`SchedulerLockModule options: ${problem}`);
    },
  );

  it.each<[string, unknown, string]>([
    ['a port number', 6379, '6379'],
    ['a URL of another scheme, without its password', 'http://app:s3cret@cache:6379', '"http://app:***@cache:6379/"'],
    ['a URL with a quote in its password', 'tcp://app:s3"cret@cache:6379', '"tcp://app:***@cache:6379"'],
    ['a URL with a ?password= parameter', 'tcp://cache:6379?password=s3cret', '"tcp://cache:6379?password=***"'],
    ['an empty string', '', '""'],
    ['a client of another library', new (class NodeRedisClient {})(), 'an instance of NodeRedisClient'],
  ])('for a redis option that is %s', async (_, redis, got) => {
    const { message } = await configurationError({ options: { redis: redis as never, defaultLockAtMostFor: '1m' } });

    expect(message).toBe(
      'SchedulerLockModule options: redis must be an ioredis Redis or Cluster, ioredis options, or a redis:// URL ' +
        `(got ${got})`,
    );
    expect(message).not.toContain('s3cret');
  });

  it.each<[string, object, string]>([
    ['a misspelt option', { keyprefix: 'orders' }, 'unknown option "keyprefix"; did you mean "keyPrefix"?'],
    [
      'isGlobal, which is no lock option',
      { isGlobal: false },
      'unknown option "isGlobal"; isGlobal goes beside the options in forRoot(), or beside useFactory / useClass / ' +
        'useExisting in forRootAsync()',
    ],
  ])('for %s in the options forRootAsync() got from its factory', async (_, extra, problem) => {
    const error = await startupError({
      lock: SchedulerLockModule.forRootAsync({
        useFactory: () => ({ ...VALID_OPTIONS, ...extra }) as SchedulerLockModuleOptions,
      }),
    });

    expect(error.message).toBe(`SchedulerLockModule options: ${problem}`);
  });

  it.each<[string, object, string]>([
    ['a misspelt key', { useFactroy: () => VALID_OPTIONS }, 'unknown option "useFactroy"; did you mean "useFactory"?'],
    ['no factory', { inject: [] }, 'set one of useFactory, useClass and useExisting (got none)'],
    [
      'two factories',
      { useFactory: () => VALID_OPTIONS, useClass: class {} },
      'set one of useFactory, useClass and useExisting (got useFactory and useClass)',
    ],
  ])('for %s in the argument of forRootAsync(), at once', (_, options, problem) => {
    expect(() => SchedulerLockModule.forRootAsync(options as never)).toThrow(
      new SchedulerLockConfigurationError(`SchedulerLockModule.forRootAsync(): ${problem}`),
    );
  });

  it('for two jobs with the same lock name, naming both', async () => {
    @Injectable()
    class ReportJobs {
      @SchedulerLock({ name: 'report' })
      @Interval(60_000)
      daily() {}

      @SchedulerLock({ name: 'report' })
      @Timeout(60_000)
      weekly() {}
    }
    const { message } = await configurationError({ jobs: [ReportJobs] });

    expect(message).toMatch(/Duplicate lock name "report"/);
    expect(message).toContain('ReportJobs.daily');
    expect(message).toContain('ReportJobs.weekly');
  });

  it("for a lock name equal to another job's default lock name", async () => {
    @Injectable()
    class CacheJobs {
      @SchedulerLock()
      @Interval('cache', 60_000)
      refresh() {}

      @SchedulerLock({ name: 'cache' })
      @Interval(60_000)
      evict() {}
    }
    const { message } = await configurationError({ jobs: [CacheJobs] });

    expect(message).toMatch(/"cache"/);
    expect(message).toContain('CacheJobs.refresh');
    expect(message).toContain('CacheJobs.evict');
  });

  it('for keepAlive on a job whose provider cannot renew leases', async () => {
    const providerWithoutRenewal = { lock: async () => undefined };
    const { message } = await configurationError({
      options: { provider: providerWithoutRenewal, defaultLockAtMostFor: '1m' },
      jobs: [jobLockedWith({ keepAlive: true })],
    });

    expect(message).toContain('BadJob.run');
    expect(message).toMatch(/keepAlive needs a provider with renewLeases\(\)/);
  });

  it('for @SchedulerLock on a method that has no @Cron, @Interval or @Timeout', async () => {
    @Injectable()
    class NotAJob {
      @SchedulerLock()
      compute() {}
    }
    const { message } = await configurationError({ jobs: [NotAJob] });

    expect(message).toContain('NotAJob.compute');
    expect(message).toMatch(/no @Cron, @Interval or @Timeout/);
  });
});

describe('LockedJobRegistry.declare', () => {
  it.each<[string, string, SchedulerLockOptions, RegExp[]]>([
    ['an unparsable duration', 'sync', { lockAtMostFor: 'soon' as never }, [/lockAtMostFor/, /"soon"/]],
    ['a negative duration', 'sync', { lockAtLeastFor: -5 }, [/lockAtLeastFor/, /-5/, /negative/]],
    [
      'lockAtLeastFor > lockAtMostFor',
      'sync',
      { lockAtMostFor: '1s', lockAtLeastFor: '5s' },
      [/lockAtLeastFor \(5000 ms\)/, /lockAtMostFor \(1000 ms\)/],
    ],
    ['an empty lock name', 'sync', { name: '' }, [/name/, /""/]],
    ['an empty job name', '', {}, [/name/, /""/]],
  ])('throws for %s, naming the runtime job', async (_, jobName, options, expected) => {
    const app = await startSchedulerApp({ lock: VALID_OPTIONS });

    const declare = () => app.get(LockedJobRegistry).declare(jobName, options);

    expect(declare).toThrow(SchedulerLockConfigurationError);
    const { message } = captureError(declare);
    expect(message).toContain(`runtime job "${jobName}"`);
    for (const pattern of expected) expect(message).toMatch(pattern);
  });

  it('throws for a lock name a decorated job already uses, naming both', async () => {
    @Injectable()
    class SyncJob {
      @SchedulerLock()
      @Interval('sync', 60_000)
      run() {}
    }
    const app = await startSchedulerApp({ lock: VALID_OPTIONS, providers: [SyncJob] });

    const { message } = captureError(() => app.get(LockedJobRegistry).declare('sync-later', { name: 'sync' }));

    expect(message).toMatch(/Duplicate lock name "sync"/);
    expect(message).toContain('SyncJob.run');
    expect(message).toContain('runtime job "sync-later"');
  });
});

describe("a provider's node name", () => {
  it("is the module's node when the module sets none", async () => {
    const settings = await createSchedulerLockSettings({
      provider: new InMemoryLockProvider({ node: 'web-7' }),
      defaultLockAtMostFor: '1m',
    });

    expect(settings.node).toBe('web-7');
  });
});

function captureError(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, none was thrown');
}
