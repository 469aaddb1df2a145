import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LockProviderMisconfiguredError, SchedulerLock } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { freePort } from '../support/redis-server.js';
import { postgresPool, SHARED_POSTGRES } from '../support/shared-postgres.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';

@Injectable()
class Ticking {
  @Interval(1_000)
  @SchedulerLock({ name: 'ticking' })
  tick() {}
}

describe('the startup check of PostgresLockProvider', () => {
  let fixture: PostgresFixture;
  /** A role with LOGIN and nothing else, on the shared server (trust auth): the least privilege there is. */
  const role = `nsl_check_${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    fixture = await postgresFixture('startup-check');
    await fixture.connect().createTables();
    await fixture.admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA "${fixture.schema}" TO ${role}`);
  });
  afterEach(closeSchedulerApps);
  afterAll(async () => {
    await fixture.admin.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    await fixture.close();
  });

  /** Starts an app whose provider connects as `user`, and resolves to what its startup threw. */
  function startupFailure(user: string, password?: string, port?: number): Promise<unknown> {
    return startupFailureOn(postgresPool({ user, password, ...(port && { port }) }));
  }

  /** Starts an app whose provider uses `pool`, and resolves to what its startup threw; ends the pool. */
  async function startupFailureOn(pool: pg.Pool): Promise<unknown> {
    try {
      const provider = new PostgresLockProvider(pool, { schema: fixture.schema });
      const app = startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '10s' }, providers: [Ticking] });
      return await app.then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      await closeSchedulerApps();
      await pool.end();
    }
  }

  it('fails the startup for a user the server does not know, naming host:port/database and the user, never the password', async () => {
    const error = await startupFailure('nobody_at_all', 'a-secret-pw');
    expect(error).toBeInstanceOf(LockProviderMisconfiguredError);
    expect((error as Error).message).toMatch(
      /^PostgreSQL 127\.0\.0\.1:5432\/test refused the credentials for user "nobody_at_all": .* \(28000\)$/,
    );
    expect((error as Error).message).not.toContain('a-secret-pw');
  });

  it('names the user of the connection string, as node-postgres reads it, not the OS user or ""', async () => {
    const { host, port, database } = SHARED_POSTGRES;
    const pool = new pg.Pool({ connectionString: `postgres://nsl_nobody_in_url@${host}:${port}/${database}` });
    const error = await startupFailureOn(pool);
    expect(error).toBeInstanceOf(LockProviderMisconfiguredError);
    expect((error as Error).message).toBe(
      `PostgreSQL ${host}:${port}/${database} refused the credentials for user "nsl_nobody_in_url": ` +
        'role "nsl_nobody_in_url" does not exist (28000)',
    );
  });

  it('says when no user is given at all, and that DATABASE_URL may be unset', async () => {
    const { host, port, database } = SHARED_POSTGRES;
    // After the options, the URL and PGUSER, node-postgres takes the OS user: a container may have none.
    const [osUser, pgUser] = [pg.defaults.user, process.env.PGUSER];
    pg.defaults.user = undefined;
    delete process.env.PGUSER;
    try {
      const error = await startupFailureOn(new pg.Pool({ connectionString: `postgres://${host}:${port}/${database}` }));
      expect(error).toBeInstanceOf(LockProviderMisconfiguredError);
      expect((error as Error).message).toBe(
        `PostgreSQL ${host}:${port}/${database} refused the credentials with no user given (is DATABASE_URL ` +
          "unset? Neither the pool's options, its connection string nor PGUSER name one): " +
          'no PostgreSQL user name specified in startup packet (28000)',
      );
    } finally {
      pg.defaults.user = osUser;
      if (pgUser !== undefined) process.env.PGUSER = pgUser;
    }
  });

  it('fails the startup for a user without the privileges, listing what to grant; the documented grants make it pass', async () => {
    const error = await startupFailure(role);
    expect(error).toBeInstanceOf(LockProviderMisconfiguredError);
    expect((error as Error).message).toContain(`refused user "${role}" the privileges SELECT on "${fixture.schema}"`);
    expect((error as Error).message).toContain(`DELETE on "${fixture.schema}"."scheduler_lock_nodes"`);

    // The GRANT lines of docs/postgresql.md, for this schema.
    const tables = ['locks', 'history', 'jobs', 'skips', 'health_turn'].map(
      (t) => `"${fixture.schema}".scheduler_lock_${t}`,
    );
    const withDelete = ['nodes', 'triggers', 'trigger_results', 'health_reports'].map(
      (t) => `"${fixture.schema}".scheduler_lock_${t}`,
    );
    await fixture.admin.query(`GRANT SELECT, INSERT, UPDATE ON ${tables.join(', ')} TO ${role}`);
    await fixture.admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${withDelete.join(', ')} TO ${role}`);
    expect(await startupFailure(role)).toBeUndefined();
  });

  it('passes a server that is unreachable: an outage, which the app starts through', async () => {
    expect(await startupFailure('postgres', undefined, await freePort())).toBeUndefined();
  });
});
