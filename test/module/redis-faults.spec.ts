import { Injectable, type Type } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import { Redis, type RedisOptions } from 'ioredis';
import { currentLock, LockProviderUnavailableError, SchedulerLock, type LockEvent } from '../../lib/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import {
  ephemeralServerArgs,
  spawnRedisProcessInTempDir,
  type RedisProcessInTempDir,
} from '../support/redis-process.js';
import { freePort, startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { type RedisClient } from '../../lib/providers/redis/index.js';

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

/** An app with one locked job (by default {@link OutageJob}) whose attempts give up after 300 ms. */
function startOutageJob(redis: string | RedisClient, job: Type = OutageJob): Promise<SchedulerApp> {
  return startSchedulerApp({
    // A client that queues commands while disconnected skips a tick only when acquireTimeout (default 2 s) ends it.
    lock: { redis, keyPrefix: uniquePrefix('module-faults'), defaultLockAtMostFor: '5s', acquireTimeout: '300ms' },
    providers: [job],
  });
}

/** A client the app creates and hands to the module. */
async function userClient(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(url, { ...options, lazyConnect: true });
  userClients.push(client);
  await client.connect();
  return client;
}

function isStoreErrorSkip(event: LockEvent): boolean {
  return event.type === 'skipped' && event.reason === 'provider-error';
}

/** The line logged when the outage is found, for the one locked job of these apps. */
function outageLine(port: number, cause: string): string {
  return (
    `Redis 127.0.0.1:${port} is unreachable (${cause}): locked ticks are skipped until it is back; ` +
    '1 locked job affected'
  );
}

/** What the module logged about Redis being back. */
function backLines(app: SchedulerApp): string[] {
  return app.logs.texts('log', 'SchedulerLock').filter((text) => text.startsWith('Redis '));
}

/**
 * Watches {@link TICKS_DURING_OUTAGE} ticks of a Redis outage and checks each was skipped for the
 * store error with a LockProviderUnavailableError, the handler stayed idle, and the only error line
 * is `line`: one for the outage, none per lock or per tick.
 */
async function expectTicksSkippedWhileDown(app: SchedulerApp, line: string): Promise<void> {
  const job = app.get(OutageJob);
  let runsAtFirstSkip: number | undefined;
  const watching = app.events$.subscribe((event) => {
    if (runsAtFirstSkip === undefined && isStoreErrorSkip(event)) runsAtFirstSkip = job.runs.length;
  });
  const skips = await events(app.events$, jobEvent('skipped', JOB), TICKS_DURING_OUTAGE);
  const skipped = skips as LockEventOf<'skipped'>[];
  watching.unsubscribe();

  expect(skipped.map((event) => event.reason)).toEqual(Array(TICKS_DURING_OUTAGE).fill('provider-error'));
  for (const { error } of skipped) {
    expect(error).toBeInstanceOf(LockProviderUnavailableError);
    expect((error as Error).message).not.toMatch(/Stream isn't writeable|enableOfflineQueue/);
  }
  expect(job.runs).toHaveLength(runsAtFirstSkip!);
  // A Redis that stopped answering is reported once an attempt sent after the first unanswered one fails too.
  await app.logs.nextText('error', / is unreachable \(/);
  expect(app.logs.texts('error')).toEqual([line]);
}

/** Restarts Redis (`restart`), waits for the job to run under its lock again, and checks the line saying so. */
async function expectRunsAgainOnceRedisIsBack(
  app: SchedulerApp,
  port: number,
  restart: () => Promise<void>,
): Promise<void> {
  const runsBefore = app.get(OutageJob).runs.length;
  await restart();
  await nextEvent(app.events$, jobEvent('released', JOB));
  expect(app.get(OutageJob).runs.slice(runsBefore)).toContain(JOB);
  const endpoint = `127\\.0\\.0\\.1:${port}`;
  const back = new RegExp(`^Redis ${endpoint} is reachable again after \\d+\\.\\ds; locked ticks run again$`);
  expect(backLines(app)).toEqual([expect.stringMatching(back)]);
}

/** Kills Redis right after a run released its lock, so no run is cut off holding it. */
async function killBetweenRuns(app: SchedulerApp): Promise<void> {
  await nextEvent(app.events$, jobEvent('released', JOB));
  await server.kill();
}

// "No unhandled rejection" needs no assertion of its own: jest fails the test during which one happens.
describe('Redis outages: one error line per outage, one line when Redis is back', () => {
  it('boots with its Redis down, reports the refused connection once, and runs again once Redis is back', async () => {
    await server.kill();

    const app = await startOutageJob(server.url);

    await expectTicksSkippedWhileDown(app, outageLine(server.port, 'connection refused, ECONNREFUSED'));
    expect(app.get(OutageJob).runs).toEqual([]);
    await expectRunsAgainOnceRedisIsBack(app, server.port, () => server.start());
  });

  it.each<[string, RedisOptions]>([
    ['configured to fail fast (no offline queue)', { enableOfflineQueue: false, maxRetriesPerRequest: 1 }],
    ['with ioredis defaults (commands queue while disconnected)', {}],
  ])('reports the outage of the Redis of an app-supplied ioredis client %s once, and its end', async (_, options) => {
    const app = await startOutageJob(await userClient(server.url, options));

    await killBetweenRuns(app);

    await expectTicksSkippedWhileDown(app, outageLine(server.port, 'connection refused, ECONNREFUSED'));
    await expectRunsAgainOnceRedisIsBack(app, server.port, () => server.start());
  });

  it('leaves the listeners it added on a user-supplied client off again on app.close()', async () => {
    const client = await userClient(server.url);
    const listening = () => ['ready', 'close', 'error'].map((event) => client.listenerCount(event));
    const before = listening();
    const app = await startOutageJob(client);

    await app.close();

    expect(listening()).toEqual(before);
  });

  it('reports a password rotated under a running app as the cause, without the password, and when it is back', async () => {
    const admin = await userClient(server.url);
    await admin.config('SET', 'requirepass', 'current-secret');
    const app = await startOutageJob(`redis://:current-secret@127.0.0.1:${server.port}`);
    await nextEvent(app.history$, jobEvent('released', JOB));

    // After startup a refused password is an outage: the app keeps going, its ticks skipped.
    await admin.config('SET', 'requirepass', 'rotated-secret');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');

    await expectTicksSkippedWhileDown(app, outageLine(server.port, 'authentication failed: WRONGPASS'));
    await expectRunsAgainOnceRedisIsBack(app, server.port, async () => {
      await admin.config('SET', 'requirepass', 'current-secret');
    });
    const logged = app.logs.entries.map(({ message }) => String(message));
    const everything = [...logged, ...app.recorded.map((event) => JSON.stringify(event))];
    expect(everything.filter((text) => text.includes('secret'))).toEqual([]);
  });
});

/** A job whose ticks are far enough apart that a short freeze of Redis leaves exactly one attempt unanswered. */
@Injectable()
class EveryTwoSeconds {
  @SchedulerLock()
  @Interval('every-two-seconds', 2_000)
  tick() {}
}

describe('a Redis that stops answering', () => {
  let paused: RedisProcessInTempDir | undefined;

  afterEach(async () => {
    if (paused) process.kill(paused.pid, 'SIGCONT');
    await paused?.kill();
    paused = undefined;
  });

  it('is reported once with the attempt timeout as the cause, and when it answers again', async () => {
    const port = await freePort();
    paused = await spawnRedisProcessInTempDir(port, (dir) => ephemeralServerArgs(port, dir));
    const app = await startOutageJob(`redis://127.0.0.1:${port}`);

    await nextEvent(app.history$, jobEvent('released', JOB));
    process.kill(paused.pid, 'SIGSTOP');

    await expectTicksSkippedWhileDown(app, outageLine(port, 'no answer within 300ms'));
    await expectRunsAgainOnceRedisIsBack(app, port, async () => {
      process.kill(paused!.pid, 'SIGCONT');
    });
  });

  it('for one attempt only is no outage: one warning once it answers again, no error line', async () => {
    const port = await freePort();
    paused = await spawnRedisProcessInTempDir(port, (dir) => ephemeralServerArgs(port, dir));
    const app = await startOutageJob(`redis://127.0.0.1:${port}`, EveryTwoSeconds);
    await nextEvent(app.history$, jobEvent('released', 'every-two-seconds'));

    // The next tick, 2 s on, goes unanswered; Redis answers again long before the one after it.
    process.kill(paused.pid, 'SIGSTOP');
    const skipped = await nextEvent(app.events$, jobEvent('skipped', 'every-two-seconds'));
    process.kill(paused.pid, 'SIGCONT');
    const warning = await app.logs.nextText('warn', / now back;/);
    await nextEvent(app.history$, jobEvent('released', 'every-two-seconds'));

    expect(skipped).toMatchObject({ reason: 'provider-error', error: { unanswered: true } });
    expect(warning).toMatch(
      new RegExp(
        `^Redis 127\\.0\\.0\\.1:${port}: unreachable for \\d+\\.\\ds, now back; 1 call to it failed meanwhile \\(skipped\\)$`,
      ),
    );
    expect(app.logs.texts('error')).toEqual([]);
  });
});

/** Jobs whose runs are under way when Redis goes: they end, and release, during the outage. */
@Injectable()
class StraddlingJobs {
  /** Each run waits for it, so the test decides when the runs end. */
  gate = new Gate();

  @SchedulerLock()
  @Interval('first', 100)
  async first() {
    await this.run();
  }

  @SchedulerLock()
  @Interval('second', 100)
  async second() {
    await this.run();
  }

  @SchedulerLock()
  @Cron(CronExpression.EVERY_SECOND, { name: 'every-second' })
  async everySecond() {
    await this.run();
  }

  private async run() {
    await this.gate.opened;
  }
}

/** A promise the test resolves. */
class Gate {
  open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
}

describe('runs that end while Redis is out', () => {
  it('add no line of their own: the outage line tells their failed releases, and outcomes recorded later', async () => {
    const admin = await userClient(server.url);
    await admin.config('SET', 'requirepass', 'current-secret');
    const app = await startSchedulerApp({
      lock: {
        redis: `redis://:current-secret@127.0.0.1:${server.port}`,
        keyPrefix: uniquePrefix('straddle'),
        defaultLockAtMostFor: '1m',
      },
      providers: [StraddlingJobs],
    });
    const jobs = app.get(StraddlingJobs);
    const names = ['first', 'second', 'every-second'];
    await events(app.history$, (event) => event.type === 'acquired' && names.includes(event.jobName!), 3);

    // Redis goes while all three run: its clients are cut off and cannot come back.
    await admin.config('SET', 'requirepass', 'rotated-secret');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    const failedReleases = events(
      app.events$,
      (event) => event.type === 'release-failed' && names.includes(event.jobName!),
      3,
    );
    jobs.gate.open();
    const failed = (await failedReleases) as LockEventOf<'release-failed'>[];

    expect(failed.map((event) => event.reason)).toEqual(['provider-error', 'provider-error', 'provider-error']);
    const outage = new RegExp(
      `^Redis 127\\.0\\.0\\.1:${server.port} is unreachable \\(authentication failed: WRONGPASS\\): locked ticks ` +
        'are skipped until it is back; 3 locked jobs affected$',
    );
    await app.logs.nextText('error', outage);
    expect(app.logs.texts('error')).toEqual([expect.stringMatching(outage)]);

    // Back: the cron run's outcome is recorded now, which the line saying that Redis is back tells.
    jobs.gate = new Gate();
    const recorded = nextEvent(app.events$, jobEvent('released', 'every-second'));
    await admin.config('SET', 'requirepass', 'current-secret');
    await recorded;
    jobs.gate.open();
    await app.logs.nextText('log', /is reachable again after/);

    expect(app.logs.texts('error')).toHaveLength(1);
    expect(app.logs.texts('warn')).toEqual([]);
    expect(app.logs.texts('log', 'SchedulerLock').filter((text) => !text.startsWith('Locked '))).toEqual([
      expect.stringMatching(/^Redis 127\.0\.0\.1:\d+ is reachable again after \d+\.\ds; locked ticks run again$/),
    ]);
  });
});
