import { Controller, Get, Injectable } from '@nestjs/common';
import { Cron, Timeout } from '@nestjs/schedule';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { SchedulerLock } from '../../lib/index.js';
import { SchedulerLockHealthIndicator } from '../../lib/terminus/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { getHealth } from './health-http.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { deferred } from '../support/wait-until.js';
import { ISO_TIME } from '../support/wire-times.js';

const PASSWORD = 'health-check-secret';
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
const release = { report: deferred() };

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

const redis = usePrivateRedisServer({ requirepass: PASSWORD });

afterEach(async () => {
  release.report.resolve();
  await closeSchedulerApps();
  Object.assign(release, { report: deferred() });
});

function startHealthApp(jobs: Parameters<typeof startSchedulerApp>[0]['providers']): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: {
      redis: `redis://:${PASSWORD}@127.0.0.1:${redis.server.port}`,
      keyPrefix: uniquePrefix('health'),
      defaultLockAtMostFor: '10s',
      acquireTimeout: '500ms',
    },
    imports: [TerminusModule],
    controllers: [HealthController],
    providers: [SchedulerLockHealthIndicator, ...(jobs ?? [])],
  });
}

/**
 * The indicator on a password-protected Redis, as an app deploys it: its body names no secret. The indicator's
 * logic (down on a slow store, on late renewals) is checked on the in-memory store (health-indicator.spec).
 */
describe('SchedulerLockHealthIndicator over HTTP (TerminusModule) on Redis', () => {
  it('is up with details per job: failed last run, a held occurrence, a run that outlived its lock; no secret', async () => {
    const app = await startHealthApp([HealthJobs]);
    await Promise.all([
      nextEvent(app.history$, (event) => jobEvent('finished', 'failing')(event) && event.outcome === 'failed'),
      nextEvent(app.history$, jobEvent('started', 'report')),
      nextEvent(app.history$, jobEvent('lost', 'overrun')),
    ]);

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
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(FAILURE);
  });
});
