import pg from 'pg';
import {
  describePostgresEndpoint,
  postgresFailure,
  postgresUser,
} from '../../lib/providers/postgres/postgres-failures.js';

/** Where and as whom a pool connects, and what a refusal says, read from pools and error objects: no server. */
describe('PostgreSQL endpoint, user and refusals in messages', () => {
  const saved = { osUser: pg.defaults.user, pgUser: process.env.PGUSER, pgDatabase: process.env.PGDATABASE };
  beforeEach(() => {
    // node-postgres falls back to PGUSER, then to the OS user: neither is set in these tests unless a test sets it.
    pg.defaults.user = undefined;
    delete process.env.PGUSER;
    delete process.env.PGDATABASE;
  });
  afterAll(() => {
    pg.defaults.user = saved.osUser;
    for (const [name, value] of [
      ['PGUSER', saved.pgUser],
      ['PGDATABASE', saved.pgDatabase],
    ] as const)
      if (value !== undefined) process.env[name] = value;
  });

  it.each<[string, pg.PoolConfig, string, string | undefined]>([
    [
      'a URL with all of it',
      { connectionString: 'postgres://ops:pw@db.internal:6000/app' },
      'db.internal:6000/app',
      'ops',
    ],
    [
      'a URL without a database: the user names it',
      { connectionString: 'postgres://ops@db.internal' },
      'db.internal:5432/ops',
      'ops',
    ],
    ['options', { user: 'svc', host: '10.0.0.7', database: 'locks' }, '10.0.0.7:5432/locks', 'svc'],
    ['a URL without a user', { connectionString: 'postgres://db.internal/app' }, 'db.internal:5432/app', undefined],
    ['nothing at all', {}, 'localhost:5432/', undefined],
  ])('%s: as node-postgres reads it', (_, options, endpoint, user) => {
    const pool = new pg.Pool(options);
    expect({ endpoint: describePostgresEndpoint(pool), user: postgresUser(pool) }).toEqual({ endpoint, user });
  });

  it('PGUSER, when the settings name no user', () => {
    process.env.PGUSER = 'from_env';
    expect(postgresUser(new pg.Pool({ connectionString: 'postgres://db.internal/app' }))).toBe('from_env');
    expect(postgresUser(new pg.Pool({ connectionString: 'postgres://ops@db.internal/app' }))).toBe('ops');
  });

  it('an outage of refused credentials names the user the server refused, as on Redis, never the password', () => {
    const refused = Object.assign(new Error('password authentication failed for user "ops"'), { code: '28P01' });
    expect((postgresFailure('db.internal:5432/app', refused, 2_000) as Error).message).toBe(
      'PostgreSQL db.internal:5432/app is unreachable ' +
        '(credentials refused: password authentication failed for user "ops", 28P01)',
    );
  });
});
