import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { merge } from 'rxjs';
import { currentLock, SchedulerLock, type LockEvent } from '../../lib/index.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { deferred } from '../support/wait-until.js';

const LEASE = 500;

/** The runs of the job, by occurrence, and a gate that holds every run until the test opens it. */
const runs = new Map<number, string[]>();
let gate = deferred<void>();

@Injectable()
class Report {
  @SchedulerLock({ keepAlive: { lease: LEASE }, onCrash: 'rerun' })
  @Cron('*/10 * * * * *', { name: 'report' })
  async run() {
    const { occurrence, lockedBy } = currentLock()!;
    runs.set(occurrence!.getTime(), [...(runs.get(occurrence!.getTime()) ?? []), lockedBy]);
    await gate.promise;
  }
}

const of = (type: LockEvent['type'], lockedBy?: string) => (event: LockEvent) =>
  event.type === type && event.jobName === 'report' && (lockedBy === undefined || event.lockedBy === lockedBy);

/**
 * Issue seen in a soak: a keepAlive run with `onCrash: 'rerun'` ended 1 s after Redis was killed, so
 * its release (which records the outcome) failed; Redis came back from its AOF with the lease expired
 * and the record still saying running, and another node re-ran the finished occurrence. Now the run's
 * node records the outcome as soon as Redis answers, and the other node waits the recovery grace.
 */
describe('an occurrence whose run ended while Redis was down', () => {
  let server: PrivateRedisServer;
  let apps: SchedulerApp[];

  beforeEach(async () => {
    runs.clear();
    gate = deferred<void>();
    server = await startPrivateRedisServer({ persistent: true });
    apps = await Promise.all(
      ['node-a', 'node-b'].map((lockedBy) =>
        startSchedulerApp({ lock: { redis: server.url, defaultLockAtMostFor: '1m', lockedBy }, providers: [Report] }),
      ),
    );
  });

  afterEach(async () => {
    gate.resolve();
    await closeSchedulerApps();
    await server.stop();
  });

  it('is recorded by its node once Redis is back, and never re-run by the node watching it', async () => {
    const history$ = merge(...apps.map((app) => app.history$));
    const started = await nextEvent(history$, of('started'), 15_000);
    const runner = started.lockedBy;
    const watcher = runner === 'node-a' ? 'node-b' : 'node-a';
    await nextEvent(history$, of('skipped', watcher), 5_000); // already-ran, running: it watches the occurrence

    await server.kill();
    const releaseFailed = nextEvent(history$, of('release-failed', runner));
    gate.resolve(); // the run ends while Redis is down
    expect(await releaseFailed).toMatchObject({ reason: 'store-error' });

    // Back from its AOF once the lease ran out: the lock is gone, the record says running.
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE));
    const live$ = merge(...apps.map((app) => app.events$));
    const recorded = nextEvent(live$, of('release-failed', runner), 10_000);
    const watchEnds = nextEvent(
      live$,
      (event) =>
        of('started', watcher)(event) ||
        (of('skipped', watcher)(event) && 'reason' in event && event.reason === 'already-ran'),
      10_000,
    );
    await server.start();

    expect(await recorded).toMatchObject({ reason: 'expired' }); // the lock expired, the record is still its run's
    expect(await watchEnds).toMatchObject({ type: 'skipped', reason: 'already-ran' });
    expect([...runs.values()]).toEqual([[runner]]);
    const redis = new Redis(server.url);
    expect(await redis.hgetall('job-lock:{report}:record')).toMatchObject({
      state: 'succeeded',
      runBy: runner,
      attempt: '1',
    });
    redis.disconnect();
    // Nest's Logger override is process-wide: the line is in whichever app set it last.
    expect(apps.flatMap((app) => app.logs.texts('warn')).join('\n')).toMatch(
      /Lock "report" \(job "report"\) was gone \(expired\) when the store answered again; its run's outcome \(succeeded\) was recorded/,
    );
  }, 40_000);
});
