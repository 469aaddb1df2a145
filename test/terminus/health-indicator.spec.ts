import { Controller, Get, Injectable } from '@nestjs/common';
import { Cron, Timeout } from '@nestjs/schedule';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { SchedulerLock } from '../../lib/index.js';
import { SchedulerLockHealthIndicator } from '../../lib/terminus/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { deferred, waitUntil } from '../support/wait-until.js';

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

const redis = usePrivateRedisServer({ requirepass: PASSWORD });

afterEach(async () => {
  release.report.resolve();
  release.lease.resolve();
  await closeSchedulerApps();
  Object.assign(release, { report: deferred(), lease: deferred() });
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

/** GET /health: the HTTP status and the body Terminus sent. */
async function getHealth(app: SchedulerApp): Promise<{ status: number; text: string; body: HealthBody }> {
  const response = await fetch(`${app.url}/health`);
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as HealthBody };
}

interface HealthBody {
  status: 'ok' | 'error';
  details: { locks: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('SchedulerLockHealthIndicator over HTTP (TerminusModule)', () => {
  it('is up with details per job: failed last run, a held occurrence, a run that outlived its lock; no secret', async () => {
    const app = await startHealthApp([HealthJobs]);
    await Promise.all([
      nextEvent(app.history$, (event) => jobEvent('finished', 'failing')(event) && 'error' in event),
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
      lastRun: { outcome: 'failed', at: expect.any(String) },
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

  it('is down (503) while the store does not answer within the timeout, and up again once it does', async () => {
    const app = await startHealthApp([]);
    expect((await getHealth(app)).status).toBe(200);

    await redis.admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const paused = await getHealth(app);

    expect(paused.status).toBe(503);
    expect(paused.body.details.locks).toMatchObject({
      status: 'down',
      store: { status: 'down', reason: 'no answer within 300ms' },
    });
    await waitUntil(async () => (await getHealth(app)).status === 200, 'the health check is up again');
  });

  it('is down (503) while lease renewals fail, though the store answers reads, and up once one succeeds', async () => {
    const app = await startHealthApp([LeaseJob]);
    await nextEvent(app.history$, jobEvent('extended', 'lease'), 5_000);

    // The app's user may no longer run scripts, and may still read: the renewal due 2 s after the last one is
    // refused, and the next is tried an interval later.
    await redis.admin.call('ACL', 'SETUSER', 'default', '-evalsha', '-eval');
    let late: Awaited<ReturnType<typeof getHealth>> | undefined;
    try {
      await waitUntil(async () => (late = await getHealth(app)).status === 503, 'the health check is down', {
        timeoutMs: 4_000,
        intervalMs: 100,
      });
    } finally {
      await redis.admin.call('ACL', 'SETUSER', 'default', '+evalsha', '+eval');
    }

    expect(late!.body.details.locks).toMatchObject({
      status: 'down',
      store: { status: 'up' },
      renewal: { status: 'behind', leases: 1, overdueMs: expect.any(Number) },
      jobs: { lease: { running: true, outlivedLock: false } },
    });
    expect(late!.body.details.locks.renewal.overdueMs).toBeGreaterThan(1_000);
    await nextEvent(app.events$, jobEvent('extended', 'lease'), 5_000);
    expect((await getHealth(app)).status).toBe(200);
  });
});
