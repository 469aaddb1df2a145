import { jest } from '@jest/globals';
import { Controller, Get, Injectable } from '@nestjs/common';
import { Cron, Timeout } from '@nestjs/schedule';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { InMemoryLockProvider, SchedulerLock } from '../../lib/index.js';
import { SchedulerLockHealthIndicator } from '../../lib/terminus/index.js';
import { runClockUntil } from '../support/fake-clock.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { getHealth } from './health-http.js';
import { deferred } from '../support/wait-until.js';
import { ISO_TIME } from '../support/wire-times.js';

const FAILURE = 'failure text with a customer id';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: SchedulerLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: '300ms' })]);
  }
}

/** Runs that end when the test says so. */
const release = { report: deferred(), lease: deferred() };

@Injectable()
class HealthJobs {
  // Runs once: an interval's next run could be in flight when the check reads `running`.
  @Timeout('failing', 10)
  @SchedulerLock()
  fail() {
    throw new Error(FAILURE);
  }

  @Cron('* * * * * *', { name: 'report' })
  @SchedulerLock({ lockAtMostFor: '1m', keepAlive: { lease: '6s' } })
  report() {
    return release.report.promise;
  }

  @Timeout('overrun', 10)
  @SchedulerLock({ lockAtMostFor: '300ms' })
  async overrun() {
    await release.report.promise; // ignores its signal: runs on past its lock
  }
}

@Injectable()
class LeaseJob {
  @Timeout('lease', 10)
  @SchedulerLock({ lockAtMostFor: '1m', keepAlive: { lease: '6s' } })
  hold() {
    return release.lease.promise;
  }
}

/** The app's store: the in-memory one, whose reads and renewals a test may hold up or refuse. */
let provider: InMemoryLockProvider;

// On fake time: the indicator's timeout, the jobs and the lease keeper; the HTTP request is real.
beforeEach(() => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  provider = new InMemoryLockProvider();
});

afterEach(async () => {
  release.report.resolve();
  release.lease.resolve();
  await closeSchedulerApps();
  jest.useRealTimers();
  Object.assign(release, { report: deferred(), lease: deferred() });
});

function startHealthApp(jobs: Parameters<typeof startSchedulerApp>[0]['providers']): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: { provider, defaultLockAtMostFor: '10s', acquireTimeout: '500ms' },
    imports: [TerminusModule],
    controllers: [HealthController],
    providers: [SchedulerLockHealthIndicator, ...(jobs ?? [])],
  });
}

describe('SchedulerLockHealthIndicator over HTTP (TerminusModule)', () => {
  it("is up with details per job: failed last run, a held occurrence, a run that outlived its lock; no job's error text", async () => {
    const app = await startHealthApp([HealthJobs]);
    await runClockUntil(
      Promise.all([
        nextEvent(app.history$, (event) => jobEvent('finished', 'failing')(event) && event.outcome === 'failed'),
        nextEvent(app.history$, jobEvent('started', 'report')),
        nextEvent(app.history$, jobEvent('lost', 'overrun')),
      ]),
    );

    const { status, text, body } = await getHealth(app);

    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    const locks = body.details.locks;
    expect(locks.status).toBe('up');
    expect(locks.store).toEqual({ status: 'up', responseTimeMs: expect.any(Number) });
    expect(locks.renewal).toEqual({ status: 'on-schedule', leases: 1 });
    expect(locks.jobs.failing).toEqual({
      lockName: 'failing',
      running: false,
      runningForMs: null,
      outlivedLock: false,
      lastRun: { outcome: 'failed', at: expect.stringMatching(ISO_TIME) },
      lastOccurrence: null,
    });
    expect(locks.jobs.report).toMatchObject({
      running: true,
      outlivedLock: false,
      lastOccurrence: { state: 'running', held: true, node: expect.any(String) },
    });
    expect(locks.jobs.overrun).toMatchObject({ running: true, outlivedLock: true });
    expect(text).not.toContain(FAILURE);
  });

  it('is down (503) while the store does not answer within the timeout, and up again once it does', async () => {
    const app = await startHealthApp([]);
    expect((await getHealth(app)).status).toBe(200);

    // The store holds its reads until the test lets them through, as a paused server does.
    const answer = deferred();
    const readJobRecord = provider.readJobRecord.bind(provider);
    provider.readJobRecord = async (name) => {
      await answer.promise;
      return readJobRecord(name);
    };
    const paused = await runClockUntil(getHealth(app));

    expect(paused.status).toBe(503);
    expect(paused.body.details.locks).toMatchObject({
      status: 'down',
      store: { status: 'down', reason: 'no answer within 300ms' },
    });
    answer.resolve();
    expect((await getHealth(app)).status).toBe(200);
  });

  it('is down (503) while lease renewals fail, though the store answers reads, and up once one succeeds', async () => {
    const app = await startHealthApp([LeaseJob]);
    await runClockUntil(nextEvent(app.history$, jobEvent('extended', 'lease'), 5_000));

    // The store refuses renewals and still answers reads: the renewal due 2 s after the last one fails, and the
    // next is tried an interval later.
    const renewLeases = provider.renewLeases.bind(provider);
    provider.renewLeases = () => Promise.reject(new Error('NOPERM this user has no permissions to run evalsha'));
    let late = await getHealth(app);
    for (let waited = 0; late.status !== 503 && waited < 4_000; waited += 100) {
      await jest.advanceTimersByTimeAsync(100);
      late = await getHealth(app);
    }
    provider.renewLeases = renewLeases;

    expect(late.body.details.locks).toMatchObject({
      status: 'down',
      store: { status: 'up' },
      renewal: { status: 'behind', leases: 1, overdueMs: expect.any(Number) },
      jobs: { lease: { running: true, outlivedLock: false } },
    });
    expect(late.body.details.locks.renewal.overdueMs).toBeGreaterThan(1_000);
    await runClockUntil(nextEvent(app.events$, jobEvent('extended', 'lease'), 5_000));
    expect((await getHealth(app)).status).toBe(200);
  });
});
