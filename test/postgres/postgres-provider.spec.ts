import type pg from 'pg';
import { LockProviderUnavailableError } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { lockConfig, mustLock, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import { createSchema, dropSchema, postgresPool, uniqueSchema } from '../support/shared-postgres.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';

describe('PostgresLockProvider on the shared PostgreSQL', () => {
  let fixture: PostgresFixture;
  beforeEach(async () => {
    fixture = await postgresFixture('provider');
  });
  afterEach(() => fixture.close());

  it('stores a lock as a row naming its owner, expiring on the database clock, and keeps it on release', async () => {
    const provider = fixture.connect({ node: 'node-a' });
    const name = uniqueLockName();
    const lock = await mustLock(provider, lockConfig(name, 5_000));
    const row = async () =>
      (
        await fixture.admin.query(
          `SELECT owner, locked_by, fencing_token::float8 AS fence,
             (extract(epoch FROM lock_until - clock_timestamp()) * 1000)::float8 AS ttl
           FROM "${fixture.schema}".scheduler_lock_locks WHERE name = $1`,
          [name],
        )
      ).rows[0];
    const held = await row();
    expect(held).toMatchObject({ locked_by: 'node-a', fence: lock.fencingToken });
    expect(held.owner).toMatch(/^owner:\d+:[0-9a-f-]{13}-\d+:node-a$/);
    expect(held.ttl).toBeGreaterThan(4_000);
    expect(held.ttl).toBeLessThanOrEqual(5_000);
    await lock.unlock();
    expect((await row()).ttl).toBeLessThanOrEqual(0);
  });

  it("runs its statements on a connection of its own: a caller's open transaction on the same pool neither delays nor undoes a lock", async () => {
    const pool = postgresPool({ max: 2 });
    const provider = new PostgresLockProvider(pool, { schema: fixture.schema });
    const name = uniqueLockName();
    const caller = await pool.connect();
    try {
      await caller.query('BEGIN');
      const lock = await mustLock(provider, lockConfig(name));
      await lock.unlock();
      await mustLock(provider, lockConfig(name, 60_000));
      await caller.query('ROLLBACK');
    } finally {
      caller.release();
    }
    // Still held: the lock was committed on its own, not in the caller's rolled-back transaction.
    expect(await fixture.connect().lock(lockConfig(name))).toBeUndefined();
    await pool.end();
  });

  it('gives up a statement past statement_timeout (a row locked by another transaction), taking no lock late', async () => {
    const provider = fixture.connect({ statementTimeout: 300 });
    const name = uniqueLockName();
    await (await mustLock(provider, lockConfig(name, 50))).unlock();
    const blocker = await fixture.admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${fixture.schema}".scheduler_lock_locks WHERE name = $1 FOR UPDATE`, [name]);
      const failure = await provider.lock(lockConfig(name)).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LockProviderUnavailableError);
      expect((failure as Error).message).toMatch(
        /^PostgreSQL 127\.0\.0\.1:5432\/test is unreachable \(no answer within 300ms \(statement_timeout\)\)$/,
      );
      await blocker.query('COMMIT');
    } finally {
      blocker.release();
    }
    const lock = await mustLock(provider, lockConfig(name));
    await lock.unlock();
  });

  it('sends statementTimeout as a parameter: no option value is part of the SQL text it runs', async () => {
    const pool = postgresPool({ max: 1 });
    const texts: string[] = [];
    pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
        texts.push(typeof config === 'string' ? config : String((config as { text?: unknown }).text));
        return query(config, ...rest);
      };
    });
    try {
      const provider = new PostgresLockProvider(pool, { schema: fixture.schema, statementTimeout: 4_321 });
      await (await mustLock(provider, lockConfig(uniqueLockName()))).unlock();
      const [{ statement_timeout }] = (await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows;

      expect(statement_timeout).toBe('4321ms');
      expect(texts.filter((text) => text.includes('4321'))).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('creates its tables once when nodes start together, and uses tables a DBA created with createTables: false', async () => {
    // Several rounds of fresh schemas: the race between CREATE TABLE IF NOT EXISTS of several nodes is rare.
    for (let round = 0; round < 5; round += 1) {
      const fresh = uniqueSchema('create-race');
      await createSchema(fixture.admin, fresh);
      const nodes = Array.from({ length: 4 }, () => fixture.connect({ schema: fresh }));
      const locks = await Promise.all(nodes.map((node, i) => node.lock(lockConfig(`start-${i}`))));
      expect(locks.every((lock) => lock !== undefined)).toBe(true);
      await Promise.all(locks.map((lock) => lock!.unlock()));
      await dropSchema(fixture.admin, fresh);
    }

    const schema = uniqueSchema('no-create');
    await createSchema(fixture.admin, schema);
    const pool = postgresPool();
    try {
      const failure = await new PostgresLockProvider(pool, { schema, createTables: false })
        .lock(lockConfig('x'))
        .catch((error: unknown) => error);
      expect((failure as { code?: string }).code).toBe('42P01'); // undefined_table: nothing was created
      await fixture.connect({ schema }).createTables();
      expect(await new PostgresLockProvider(pool, { schema, createTables: false }).lock(lockConfig('x'))).toBeDefined();
    } finally {
      await pool.end();
      await dropSchema(fixture.admin, schema);
    }
  });

  it.each(['healthReports', 'healthTurn'] as const)(
    'adds a table that came later (%s) to a schema made before it, at its next start',
    async (later) => {
      const schema = uniqueSchema('older-schema');
      await createSchema(fixture.admin, schema);
      try {
        const first = fixture.connect({ schema });
        await first.createTables();
        await fixture.admin.query(`DROP TABLE ${first.tables[later]}`);
        const next = fixture.connect({ schema });
        await next.createTables();
        const { rows } = await fixture.admin.query<{ present: boolean }>(
          'SELECT to_regclass($1) IS NOT NULL AS present',
          [next.tables[later]],
        );
        expect(rows[0].present).toBe(true);
      } finally {
        await dropSchema(fixture.admin, schema);
      }
    },
  );

  it('refuses a schema or table prefix that is not a plain identifier, and a pool that is none', () => {
    const pool = postgresPool();
    expect(() => new PostgresLockProvider(pool, { schema: 'x"; DROP TABLE y; --' })).toThrow(
      /schema must be letters, digits and underscores.*got "x\\"; DROP TABLE y; --"/,
    );
    expect(() => new PostgresLockProvider({} as never)).toThrow(/pool must be a pg Pool \(got an instance of Object\)/);
    return pool.end();
  });
});
