import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis, type RedisOptions } from 'ioredis';
import { currentLock, SchedulerLock, type LockEvent, type RedisClient } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';

const JOB = 'OutageJob.tick';
/** Enough 100 ms ticks to show that errors are not logged once per tick. */
const TICKS_DURING_OUTAGE = 8;

@Injectable()
class OutageJob {
  readonly runs: (string | undefined)[] = [];

  @SchedulerLock()
  @Interval(100)
  tick() {
    this.runs.push(currentLock()?.name);
  }
}

let server: PrivateRedisServer;
const userClients: Redis[] = [];

beforeEach(async () => {
  server = await startPrivateRedisServer();
});
afterEach(async () => {
  await closeSchedulerApps();
  userClients.splice(0).forEach((client) => client.disconnect());
  await server.kill();
});

function startOutageJob(redis: string | RedisClient): Promise<SchedulerApp> {
  return startSchedulerApp({
    // A client that queues commands while disconnected skips a tick only when acquireTimeout (default 2 s) ends it.
    lock: { redis, keyPrefix: uniquePrefix('module-faults'), defaultLockAtMostFor: '5s', acquireTimeout: '300ms' },
    providers: [OutageJob],
  });
}

/** A client the app creates and hands to the module, its connection errors silenced as an app would handle them. */
async function userClient(options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(server.url, { ...options, lazyConnect: true });
  client.on('error', () => undefined);
  userClients.push(client);
  await client.connect();
  return client;
}

function isStoreErrorSkip(event: LockEvent): boolean {
  return event.type === 'skipped' && event.reason === 'store-error';
}

/**
 * Watches {@link TICKS_DURING_OUTAGE} ticks of a Redis outage and checks each was skipped for the
 * store error, the handler stayed idle, and the failures were logged once rather than per tick.
 */
async function expectTicksSkippedWhileDown(app: SchedulerApp): Promise<void> {
  const job = app.get(OutageJob);
  const errorLinesBefore = app.logs.lines('error').length;
  let runsAtFirstSkip: number | undefined;
  const watching = app.events$.subscribe((event) => {
    if (runsAtFirstSkip === undefined && isStoreErrorSkip(event)) runsAtFirstSkip = job.runs.length;
  });
  const skipped = await events(app.events$, jobEvent('skipped', JOB), TICKS_DURING_OUTAGE);
  watching.unsubscribe();

  expect(skipped.map((event) => event.type === 'skipped' && event.reason)).toEqual(Array(TICKS_DURING_OUTAGE).fill('store-error'));
  // From the first failed tick on (a tick that took its lock just before the crash may still run).
  expect(job.runs).toHaveLength(runsAtFirstSkip!);
  expect(app.logs.texts('error', 'SchedulerLock').filter((text) => text.includes(`"${JOB}"`))).toHaveLength(1);
  expect(app.logs.lines('error').length - errorLinesBefore).toBeLessThanOrEqual(2);
}

/** Restarts Redis and waits for the job to run under its lock again. */
async function expectRunsAgainOnceRedisIsBack(app: SchedulerApp): Promise<void> {
  const runsBefore = app.get(OutageJob).runs.length;
  await server.start();
  await nextEvent(app.events$, jobEvent('released', JOB));
  expect(app.get(OutageJob).runs.slice(runsBefore)).toContain(JOB);
}

// "No unhandled rejection" needs no assertion of its own: jest fails the test during which one happens.
describe('Redis outages', () => {
  it('boots with its Redis down, skips ticks for the store error without crashing, and runs again once Redis is back', async () => {
    await server.kill();

    const app = await startOutageJob(server.url);

    await expectTicksSkippedWhileDown(app);
    expect(app.get(OutageJob).runs).toEqual([]);
    await expectRunsAgainOnceRedisIsBack(app);
  });

  it.each<[string, RedisOptions]>([
    ['configured to fail fast (no offline queue)', { enableOfflineQueue: false, maxRetriesPerRequest: 1 }],
    ['with ioredis defaults', {}],
  ])(
    'skips ticks while the Redis of a user-supplied ioredis instance %s is down, and runs again once it is back',
    async (_, options) => {
      const app = await startOutageJob(await userClient(options));
      await nextEvent(app.history$, jobEvent('released', JOB));

      await server.kill();

      await expectTicksSkippedWhileDown(app);
      await expectRunsAgainOnceRedisIsBack(app);
      },
  );
});
