import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import type pg from 'pg';
import { LockProviderUnavailableError, SchedulerLock } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { postgresPool } from '../support/shared-postgres.js';
import { waitUntil } from '../support/wait-until.js';

const PASSWORD = 'never-printed-pw';
const JOB = 'Ticking.tick';
/**
 * What an outage is first learnt from: the pool's idle connections, closed by a shutdown (57P01) or cut by
 * a crash, or the next connection, refused.
 */
const CAUSES =
  'server shutting down, 57P01|connection lost|connection reset, ECONNRESET|connection refused, ECONNREFUSED';

@Injectable()
class Ticking {
  runs = 0;
  @Interval(200)
  @SchedulerLock({ name: 'ticking' })
  tick() {
    this.runs += 1;
  }
}

describe('PostgreSQL outages through the module (a private server, stopped and paused by PID)', () => {
  let server: PrivatePostgres;
  let pool: pg.Pool;
  let app: SchedulerApp;
  let endpoint: string;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    endpoint = `127.0.0.1:${server.port}/postgres`;
  });
  beforeEach(async () => {
    // The password is wrong for nothing (trust auth): it shows that no message prints it.
    pool = postgresPool({ port: server.port, database: 'postgres', password: PASSWORD, connectionTimeoutMillis: 500 });
    const provider = new PostgresLockProvider(pool, { node: 'node-a', statementTimeout: 1_000 });
    await provider.createTables();
    app = await startSchedulerApp({
      lock: { provider, defaultLockAtMostFor: '10s', acquireTimeout: '1s' },
      providers: [Ticking],
    });
    await nextEvent(app.history$, jobEvent('released', JOB));
  });
  afterEach(async () => {
    await server.resume();
    await closeSchedulerApps();
    await pool.end();
  });
  afterAll(() => server?.remove());

  /** Waits until the app logged a line at `level` that contains `text`. */
  const logged = (level: 'error' | 'log', text: string) =>
    waitUntil(() => app.logs.texts(level).some((line) => line.includes(text)), `a ${level} line "${text}"`, {
      timeoutMs: 15_000,
    });

  it.each(['SIGINT', 'SIGKILL'] as const)(
    'logs one line when the server stops (%s) and one when it is back, and runs the job again: restart',
    async (signal) => {
      await server.stop(signal);
      await logged('error', 'is unreachable');
      const runsDuringOutage = app.get(Ticking).runs;
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // five ticks skipped
      await server.start();
      await logged('log', 'is reachable again');
      await nextEvent(app.events$, jobEvent('released', JOB));

      const errors = app.logs.texts('error');
      expect(errors).toEqual([
        expect.stringMatching(
          new RegExp(
            `^PostgreSQL ${endpoint} is unreachable \\((${CAUSES})\\): ` +
              'locked ticks are skipped until it is back; 1 locked job affected$',
          ),
        ),
      ]);
      expect(app.logs.texts('log').filter((line) => line.startsWith('PostgreSQL'))).toEqual([
        expect.stringMatching(new RegExp(`^PostgreSQL ${endpoint} is reachable again after \\d+\\.\\ds; locked ticks`)),
      ]);
      expect(app.get(Ticking).runs).toBeGreaterThan(runsDuringOutage);
      expect(JSON.stringify(app.logs.entries)).not.toContain(PASSWORD);
    },
  );

  it('logs one line while the server is paused (SIGSTOP), and runs the job again once it resumes', async () => {
    await server.pause();
    await logged('error', 'is unreachable');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await server.resume();
    await logged('log', 'is reachable again');
    await nextEvent(app.events$, jobEvent('released', JOB));

    const errors = app.logs.texts('error');
    expect(errors).toEqual([expect.stringContaining(`PostgreSQL ${endpoint} is unreachable (`)]);
    expect(errors[0]).toMatch(/\((no answer within 1s|connect timeout)\)/);
    expect(JSON.stringify(app.logs.entries)).not.toContain(PASSWORD);
  });
});

describe('PostgreSQL frozen (SIGSTOP) under a release (a private server of its own)', () => {
  it('gives up a release on a paused server a second after statement_timeout: it fails as a store error, never hangs', async () => {
    const server = await startPrivatePostgres();
    const pool = postgresPool({ port: server.port, database: 'postgres', connectionTimeoutMillis: 500 });
    const provider = new PostgresLockProvider(pool, { node: 'node-b', statementTimeout: 1_000 });
    let failure: unknown;
    try {
      const lock = await provider.lock({ name: 'paused-release', lockAtMostFor: 60_000, lockAtLeastFor: 0 });
      await server.pause();
      // The frozen server never enforces its statement_timeout: the client's own deadline ends the wait.
      failure = await lock!.unlock().then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      await server.resume();
      await pool.end();
      await server.remove();
    }
    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    expect((failure as LockProviderUnavailableError).reason).toMatch(
      /^no answer, not even at statement_timeout|connect timeout/,
    );
  });
});
