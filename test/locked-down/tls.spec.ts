import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { currentLock, SchedulerLock, type LockEvent } from '../../lib/index.js';
import { events } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { createTestCertificates, type TestCertificates } from '../support/tls-certificates.js';
import { LOCK_USER, setLockUser } from './lock-user.js';
import { expectStartupRefused, expectTicksSkippedWithOneLine, IntervalJob, refusedStartup } from './skipped-ticks.js';

const ADMIN_PASSWORD = 'admin-secret';
const JOB = 'EverySecond.tick';
/** Occurrences to watch across the two apps. */
const OCCURRENCES = 3;

let certificates: TestCertificates;
/** Another CA, which never signed the server's certificate. */
let strangerCertificates: TestCertificates;
let keyPrefix: string;
const clients: Redis[] = [];

beforeAll(async () => {
  [certificates, strangerCertificates] = await Promise.all([createTestCertificates(), createTestCertificates()]);
});
// Declared after the hook that makes the certificates, so it starts the server with them.
const redis = usePrivateRedisServer(() => ({ tls: certificates, requirepass: ADMIN_PASSWORD }));
afterAll(() => Promise.all([certificates.remove(), strangerCertificates.remove()]));
beforeEach(async () => {
  keyPrefix = uniquePrefix('tls');
  await setLockUser(redis.admin, keyPrefix);
});
afterEach(async () => {
  await closeSchedulerApps();
  clients.splice(0).forEach((client) => client.disconnect());
});

@Injectable()
class EverySecond {
  readonly occurrences: number[] = [];

  @SchedulerLock()
  @Cron('* * * * * *')
  tick() {
    this.occurrences.push(currentLock()!.occurrence!.getTime());
  }
}

/** The lock user's connection, as ioredis options: TLS, trusting `ca`. */
function lockUserOptions(ca: Buffer) {
  return {
    host: '127.0.0.1',
    port: redis.server.port,
    username: LOCK_USER.name,
    password: LOCK_USER.password,
    tls: { ca },
  };
}

/** A tick of the job that ran or was skipped. */
function settled(event: LockEvent): boolean {
  return event.jobName === JOB && (event.type === 'released' || event.type === 'skipped');
}

/** The ticks of `app` skipped because the other app had taken the occurrence. */
function takenElsewhere(app: SchedulerApp): number {
  return app.recorded.filter(
    (event) => event.type === 'skipped' && (event.reason === 'locked' || event.reason === 'already-ran'),
  ).length;
}

describe('a Redis that serves TLS only', () => {
  it('has no plain port', async () => {
    expect(await redis.admin.config('GET', 'port')).toEqual(['port', '0']);
  });

  it('runs each occurrence once across two apps: one with TLS options, one with its own client from a rediss:// URL', async () => {
    const url = `rediss://${LOCK_USER.name}:${LOCK_USER.password}@127.0.0.1:${redis.server.port}`;
    const ownClient = new Redis(url, { tls: { ca: certificates.ca } });
    clients.push(ownClient);
    const lock = { keyPrefix, defaultLockAtMostFor: '5s' } as const;

    const apps = await Promise.all([
      startSchedulerApp({ lock: { ...lock, redis: lockUserOptions(certificates.ca) }, providers: [EverySecond] }),
      startSchedulerApp({ lock: { ...lock, redis: ownClient }, providers: [EverySecond] }),
    ]);
    await Promise.all(apps.map((app) => events(app.history$, settled, OCCURRENCES)));
    await Promise.all(apps.map((app) => app.close()));

    const occurrences = apps.flatMap((app) => app.get(EverySecond).occurrences);
    expect(occurrences.length).toBeGreaterThanOrEqual(OCCURRENCES);
    expect(new Set(occurrences).size).toBe(occurrences.length);
    // Each app settled OCCURRENCES ticks, at most a second apart: they met on at least all but one.
    expect(takenElsewhere(apps[0]) + takenElsewhere(apps[1])).toBeGreaterThanOrEqual(OCCURRENCES - 1);
    for (const app of apps) expect(app.logs.texts('error')).toEqual([]);
  });

  it('a client that does not trust the server’s certificate fails the startup with one error naming the endpoint and the TLS failure', async () => {
    await expectStartupRefused(
      () =>
        startSchedulerApp({
          lock: { redis: lockUserOptions(strangerCertificates.ca), keyPrefix, defaultLockAtMostFor: '5s' },
          providers: [IntervalJob],
        }),
      refusedStartup(`127.0.0.1:${redis.server.port}`, 'TLS certificate not trusted: [^,]+, [A-Z_]+'),
    );
  });

  it("with startupCheck 'warn', a client that does not trust the certificate starts: one error line for the outage, and no run", async () => {
    const line = new RegExp(
      `^Redis 127\\.0\\.0\\.1:${redis.server.port} is unreachable \\(TLS certificate not trusted: [^,]+, [A-Z_]+\\): ` +
        'locked ticks are skipped until it is back; 1 locked job affected$',
    );
    const lock = { redis: lockUserOptions(strangerCertificates.ca), keyPrefix, defaultLockAtMostFor: '5s' } as const;

    const app = await expectTicksSkippedWithOneLine(
      () => startSchedulerApp({ lock: { ...lock, startupCheck: 'warn' }, providers: [IntervalJob] }),
      line,
    );

    expect(app.logs.texts('warn')).toEqual([expect.stringContaining('TLS certificate not trusted')]);
  });
});
