import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import pg from 'pg';
import { currentLock, LockProviderUnavailableError, SchedulerLock, type LockEvent } from '../../lib/index.js';
import { describeLockProvider } from '../../lib/provider-tests/index.js';
import { events } from '../support/lock-events.js';
import {
  pgBouncerVersion,
  startPrivatePgBouncer,
  type PgBouncerSetup,
  type PrivatePgBouncer,
} from '../support/private-pgbouncer.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { postgresPool } from '../support/shared-postgres.js';
import { postgresFixture, postgresSubject, type PostgresFixture } from './postgres-fixture.js';

/** The pooler's server connections: few, so that a test can hold them all. */
const SERVER_CONNECTIONS = 2;

@Injectable()
class EverySecond {
  readonly occurrences: number[] = [];
  @Cron('* * * * * *')
  @SchedulerLock({ name: 'every-second' })
  tick() {
    this.occurrences.push(currentLock()!.occurrence!.getTime());
  }
}

/**
 * The specs of PostgresLockProvider through a PgBouncer in transaction mode, one `mode` of it (`setup`; null: not
 * available here, so Jest lists the mode's tests as skipped). Each mode is its own spec file, so both can run at once.
 */
export function describePgBouncerMode(mode: string, setup: PgBouncerSetup | null) {
  describe(`PostgresLockProvider through PgBouncer in transaction mode, ${mode}`, () => {
    // Not silent: with no PGBOUNCER_PREPARED_BIN, Jest lists this mode's tests as skipped, under this name.
    const suite = setup ? describe : describe.skip;
    let bouncer: PrivatePgBouncer;
    beforeAll(async () => {
      if (!setup) return;
      if (setup.maxPreparedStatements > 0) {
        const [major, minor] = await pgBouncerVersion(setup.bin);
        if (major === 1 && minor < 21)
          throw new Error(`${setup.bin} is PgBouncer ${major}.${minor}, not 1.21 or later`);
      }
      bouncer = await startPrivatePgBouncer(setup, SERVER_CONNECTIONS);
    });
    afterAll(() => bouncer?.remove());

    suite('the conformance kit', () => {
      const subject = postgresSubject('pgbouncer', () => ({ port: bouncer.port }));
      afterAll(() => subject.close());
      describeLockProvider(subject, { describe, it });
    });

    suite('the provider', () => {
      let fixture: PostgresFixture;
      beforeEach(async () => {
        fixture = await postgresFixture('pgbouncer', { port: bouncer.port });
      });
      afterEach(async () => {
        await closeSchedulerApps();
        await fixture.close();
      });

      it('runs each occurrence of a cron job once across two apps, with no store error', async () => {
        const start = (node: string) =>
          startSchedulerApp({
            lock: { provider: fixture.connect({ node: node }), defaultLockAtMostFor: '10s', node: node },
            providers: [EverySecond],
          });
        const [a, b] = await Promise.all([start('node-a'), start('node-b')]);
        await events(a.history$, (event) => event.jobName === 'EverySecond.tick' && event.type !== 'attempt', 12);

        const occurrences = [a, b].flatMap((app) => app.get(EverySecond).occurrences);
        expect(occurrences.length).toBeGreaterThanOrEqual(3);
        expect(new Set(occurrences).size).toBe(occurrences.length);
        const skipped = [...a.recorded, ...b.recorded].filter((event) => event.type === 'skipped');
        expect(skipped.map((event) => (event as LockEvent & { reason: string }).reason)).not.toContain(
          'provider-error',
        );
        expect([...a.logs.texts('error'), ...b.logs.texts('error')]).toEqual([]);
      });

      it("leaves no statement_timeout on the pooler's server connections, which other clients get next", async () => {
        const node = fixture.connect({ statementTimeout: 1_500 });
        for (let i = 0; i < 5; i++) await node.lock({ name: `leak-${i}`, lockAtMostFor: 1_000, lockAtLeastFor: 0 });

        // Another app's clients, each in a transaction, so that together they hold every server connection.
        const other = postgresPool({ port: bouncer.port, max: SERVER_CONNECTIONS });
        const clients = await Promise.all(Array.from({ length: SERVER_CONNECTIONS }, () => other.connect()));
        const timeouts = await Promise.all(
          clients.map(async (client) => {
            await client.query('BEGIN');
            const { rows } = await client.query<{ statement_timeout: string }>('SHOW statement_timeout');
            return rows[0].statement_timeout;
          }),
        );
        await Promise.all(clients.map((client) => client.query('COMMIT').then(() => client.release())));
        await other.end();
        expect(timeouts).toEqual(Array.from({ length: SERVER_CONNECTIONS }, () => '0'));
      });

      it('keeps its named statements where the pooler keeps them, and parses each once per server connection', async () => {
        const before = await bouncer.stats();
        const node = fixture.connect();
        for (let i = 0; i < 20; i++) {
          const lock = await node.lock({ name: `named-${i}`, lockAtMostFor: 10_000, lockAtLeastFor: 0 });
          await lock!.unlock();
        }
        const after = await bouncer.stats();
        const delta = (column: string) => (after[column] ?? 0) - (before[column] ?? 0);
        if (setup!.maxPreparedStatements === 0) {
          // PgBouncer 1.18 counts no prepared statement: the provider went unnamed.
          expect(after.total_client_parse_count).toBeUndefined();
          return;
        }
        // Named Parse messages reached the pooler, and each execution was a Bind of a statement it keeps.
        expect(delta('total_client_parse_count')).toBeGreaterThan(0);
        expect(delta('total_bind_count')).toBeGreaterThanOrEqual(40);
        expect(delta('total_server_parse_count')).toBeLessThanOrEqual(2 * SERVER_CONNECTIONS);
      });

      it('rolls back at statementTimeout a statement that waits on a row lock', async () => {
        const node = fixture.connect({ statementTimeout: 300 });
        await node.lock({ name: 'held-row', lockAtMostFor: 1, lockAtLeastFor: 0 });
        const holder = new pg.Client({ ...postgresPool().options });
        await holder.connect();
        try {
          await holder.query('BEGIN');
          await holder.query(
            `SELECT 1 FROM "${fixture.schema}".scheduler_lock_locks WHERE name = 'held-row' FOR UPDATE`,
          );
          const attempt = node.lock({ name: 'held-row', lockAtMostFor: 1_000, lockAtLeastFor: 0 });
          await expect(attempt).rejects.toThrow(LockProviderUnavailableError);
          await expect(attempt).rejects.toThrow('statement_timeout');
        } finally {
          await holder.query('ROLLBACK');
          await holder.end();
        }
      });
    });
  });
}
