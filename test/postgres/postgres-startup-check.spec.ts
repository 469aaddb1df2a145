import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LockStoreMisconfiguredError, SchedulerLock } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { freePort } from '../support/redis-server.js';
import { postgresPool } from '../support/shared-postgres.js';
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
  async function startupFailure(user: string, password?: string, port?: number): Promise<unknown> {
    const pool = postgresPool({ user, password, ...(port && { port }) });
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
    expect(error).toBeInstanceOf(LockStoreMisconfiguredError);
    expect((error as Error).message).toMatch(
      /^PostgreSQL 127\.0\.0\.1:5432\/test refused the credentials for user "nobody_at_all": .* \(28000\)$/,
    );
    expect((error as Error).message).not.toContain('a-secret-pw');
  });

  it('fails the startup for a user without the privileges, listing what to grant; the README grants make it pass', async () => {
    const error = await startupFailure(role);
    expect(error).toBeInstanceOf(LockStoreMisconfiguredError);
    expect((error as Error).message).toContain(`refused user "${role}" the privileges SELECT on "${fixture.schema}"`);
    expect((error as Error).message).toContain(`DELETE on "${fixture.schema}"."scheduler_lock_nodes"`);

    // The README's GRANT lines, for this schema.
    const tables = ['locks', 'history', 'jobs', 'skips'].map((t) => `"${fixture.schema}".scheduler_lock_${t}`);
    const withDelete = ['nodes', 'triggers', 'trigger_results'].map((t) => `"${fixture.schema}".scheduler_lock_${t}`);
    await fixture.admin.query(`GRANT SELECT, INSERT, UPDATE ON ${tables.join(', ')} TO ${role}`);
    await fixture.admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${withDelete.join(', ')} TO ${role}`);
    expect(await startupFailure(role)).toBeUndefined();
  });

  it('passes a server that is unreachable: an outage, which the app starts through', async () => {
    expect(await startupFailure('postgres', undefined, await freePort())).toBeUndefined();
  });
});
