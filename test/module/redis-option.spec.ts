import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Interval, Timeout } from '@nestjs/schedule';
import type { Redis, RedisOptions } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { openRedis } from '../support/redis-client-choice.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import {
  closeSchedulerApps,
  startSchedulerApp,
  type SchedulerApp,
  type SchedulerAppSetup,
} from '../support/scheduler-app.js';
import { SHARED_REDIS_URL } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { RunRecorder } from './support/run-recorder.js';

/**
 * The module's `redis` option: the client it opens (and closes) or the one it is given (and leaves open).
 * Redis connections are the subject, so these run against the shared Redis; the rest of the module's
 * options are checked on the in-memory store (module-options.spec).
 */
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

/** The Redis key of lock `name` under `keyPrefix`, as `RedisLockProvider` names it. */
function lockKey(keyPrefix: string, name: string): string {
  return `${keyPrefix}:{${name}}`;
}

/** Clients a test created itself, closed after it (the module must not have closed them). */
const ownClients: Redis[] = [];
const shared = useSharedRedisPrefix('module-options', async () => {
  await closeSchedulerApps();
  await Promise.all(ownClients.splice(0).map((client) => client.quit()));
});
let recorder: RunRecorder;
beforeEach(() => {
  recorder = new RunRecorder(async (name) => (await shared.client.exists(lockKey(shared.prefix, name))) === 1);
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
  expect(run?.lockHeld).toBe(true);
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
    // The run's client (REDIS_CLIENT): the CI's client matrix runs this app end to end on each.
    const client = openRedis(SHARED_REDIS_URL, { connectionName: name });
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
